"""Packaging scenarios: the launcher wherever it is installed or copied, and the install routes
(installed tree, wheel, .deb/.tar.gz) run exactly as users run them."""
import os
import shutil
import subprocess
import tempfile

from harness import KERNELS6, check, scenario


def copy_build_tree(env, dest):
    """The parts of a build tree the launcher uses, as a user who copies build/ elsewhere."""
    for sub in ("bin", "lib", "libexec"):
        shutil.copytree(os.path.join(env.build, sub), os.path.join(dest, sub), symlinks=True)
    return os.path.join(dest, "bin", "nvtxcorr")


def check_refused(env, launcher, why):
    """ld.so splits LD_PRELOAD on spaces and colons: such a path would load nothing and the
    program would run uninstrumented, so the launcher must refuse before running it."""
    run = env.run([launcher, env.prog("scn_driver"), "direct"], preload=False, enabled=False)
    check(run.rc == 2, f"{why}: rc {run.rc}, stderr {run.err!r}")
    check("nvtxcorr: error:" in run.err and "LD_PRELOAD" in run.err, f"{why}: {run.err!r}")
    check(run.out == "" and run.labels() == [], f"{why}: the program ran: {run.out!r}")


@scenario
def test_launcher_prefix_with_space(env):
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "my tools")
        subprocess.run(["cmake", "--install", env.build, "--prefix", prefix], check=True,
                       capture_output=True)
        check_refused(env, os.path.join(prefix, "bin", "nvtxcorr"), "installed under a space")
        # --library names the same kind of path explicitly.
        good = os.path.join(tmp, "good")
        launcher = copy_build_tree(env, good)
        run = env.run([launcher, "--library", os.path.join(prefix, "lib", "libnvtxcorr.so"),
                       "true"], preload=False, enabled=False)
        check(run.rc == 2 and "nvtxcorr: error:" in run.err, f"--library: {run.err!r}")


@scenario
def test_launcher_build_tree_with_colon(env):
    with tempfile.TemporaryDirectory() as tmp:
        launcher = copy_build_tree(env, os.path.join(tmp, "build:copy"))
        check_refused(env, launcher, "build tree under a colon")


@scenario
def test_launcher_cdpath(env):
    """With CDPATH set, `cd dir` may print the directory it found, which a $(cd ... && pwd)
    would capture. Run the launcher by a relative path and give --library relatively, the two
    places the launcher resolves directories."""
    with tempfile.TemporaryDirectory() as tmp:
        copy_build_tree(env, os.path.join(tmp, "tree"))
        shell = 'cd "$0" && exec bin/nvtxcorr --library lib/libnvtxcorr.so "$@"'
        for argv in (["sh", "-c", shell], ["sh", "-c", shell.replace(" --library lib/"
                                                                      "libnvtxcorr.so", "")]):
            run = env.run([*argv, os.path.join(tmp, "tree"), env.prog("scn_driver"), "direct"],
                          preload=False, enabled=False,
                          env={"CDPATH": os.path.join(tmp, "tree")})
            check(run.rc == 0, f"{argv[-1]}: rc {run.rc}: {run.err!r}")
            check(run.labels() == KERNELS6, f"{argv[-1]}: labels {run.labels()} {run.err!r}")
