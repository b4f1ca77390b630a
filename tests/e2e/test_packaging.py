"""Packaging scenarios: the launcher wherever it is installed or copied, and the install routes
(installed tree, wheel, .deb/.tar.gz) run exactly as users run them."""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import zipfile

from harness import KERNELS6, ROOT, Skip, check, scenario


def copy_build_tree(env, dest):
    """The parts of a build tree the launcher uses, as a user who copies build/ elsewhere."""
    for sub in ("bin", "lib", "libexec"):
        shutil.copytree(os.path.join(env.build, sub), os.path.join(dest, sub), symlinks=True)
    return os.path.join(dest, "bin", "nvtxcorr")


def check_refused(env, launcher, why):
    """ld.so splits LD_PRELOAD on spaces and colons: such a path would load nothing and the
    program would run uninstrumented, so the launcher must refuse before running it."""
    run = env.run_ok([launcher, env.prog("scn_driver"), "direct"], rc=2, what=why,
                     preload=False, enabled=False)
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
        run = env.run_ok([launcher, "--library", os.path.join(prefix, "lib", "libnvtxcorr.so"),
                          "true"], rc=2, what="--library", preload=False, enabled=False)
        check("nvtxcorr: error:" in run.err, f"--library: {run.err!r}")


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
            run = env.run_ok([*argv, os.path.join(tmp, "tree"), env.prog("scn_driver"), "direct"],
                             what=argv[-1], preload=False, enabled=False,
                             env={"CDPATH": os.path.join(tmp, "tree")})
            check(run.labels() == KERNELS6, f"{argv[-1]}: labels {run.labels()} {run.err!r}")


def cmake_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(nvtxcorr VERSION ([0-9.]+)", f.read())[1]


def run_demo(env, launcher):
    """tests/demo's program under a launcher with the demo's label table (as scripts/demo)."""
    run = env.run_ok([launcher, "--labels", os.path.join(ROOT, "tests", "demo", "demo.conf"),
                      "--", os.path.join(env.build, "tests", "demo", "demo_infer")],
                     what=launcher, preload=False, enabled=False)
    check({"attention.prefill", "attention.decode [capture]", "decode.step", "matmul"}
          <= set(run.labels()),
          f"{launcher}: labels {sorted(set(run.labels()))}")
    return run


@scenario
def test_version(env):
    want = cmake_version()
    launcher = env.launcher
    out = subprocess.run([launcher, "--version"], capture_output=True, text=True)
    check(out.returncode == 0 and out.stdout == f"nvtxcorr {want}\n", f"{out!r}")
    run = env.run([env.prog("scn_driver"), "direct"], env={"NVTXCORR_LOG": "info"})
    info = [x for x in run.err.splitlines() if x.startswith("nvtxcorr: info:")]
    check(len(info) == 1 and info[0].endswith(f"; version {want}"), run.err)
    header = os.path.join(env.build, "include", "nvtxcorr", "version.h")
    with open(header) as f:
        check(f'#define NVTXCORR_VERSION_STRING "{want}"' in f.read(), "version.h")


@scenario
def test_doctor(env):
    """On a machine without a driver: one line per item with its verdict, and exit 0."""
    launcher = env.launcher
    # The launcher resolves the directory it finds the library in, not the file.
    lib = os.path.join(os.path.realpath(os.path.join(os.path.dirname(env.launcher), "..", "lib")),
                       "libnvtxcorr.so")

    def doctor(*args, extra=None):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("NVTXCORR", "NVTX_", "LD_PRELOAD"))}
        e.update(extra or {})
        p = subprocess.run([launcher, *args], capture_output=True, text=True, env=e)
        check(p.returncode == 0, f"doctor rc {p.returncode}: {p.stdout}{p.stderr}")
        return p.stdout

    out = doctor("doctor")
    check(out.startswith(f"nvtxcorr {cmake_version()}\n"), out)
    check(f"library      ok: {lib}, version {cmake_version()}\n" in out, out)
    check("NVTX tool    unset: NVTX_INJECTION64_PATH is not set" in out, out)
    check("labels       none:" in out, out)
    check(re.search(r"^CUPTI        (ok|not found|fail): ", out, re.M), out)
    have_driver = subprocess.run(["sh", "-c", "ldconfig -p | grep -q 'libcuda.so.1 '"]).returncode
    check(re.search(r"^CUDA driver  " + ("ok: .*cuDriverGetVersion \\d+" if have_driver == 0
                                          else "not found: "), out, re.M), out)
    # With the fake driver on the path it is found and asked its version; a tool and a table.
    table = os.path.join(ROOT, "docs", "labels", "vllm.conf")
    out = doctor("--labels", table, "doctor", extra={
        "LD_LIBRARY_PATH": env.fakes, "NVTX_INJECTION64_PATH": env.recorder})
    check(f"NVTX tool    ok: NVTX_INJECTION64_PATH={env.recorder} loads" in out, out)
    check(re.search(r"^CUDA driver  ok: .*fakes.*cuDriverGetVersion \d+", out, re.M), out)
    check(re.search(r"^labels       ok: .*vllm.conf: \d+ rules OK$", out, re.M), out)
    out = doctor("doctor", "--labels-inline", "flash*", extra={
        "NVTX_INJECTION64_PATH": "/nonexistent.so"})
    check("NVTX tool    fail: NVTX_INJECTION64_PATH=/nonexistent.so does not load" in out, out)
    check("labels       fail: NVTXCORR_LABELS_INLINE: rejected" in out, out)
    # nvtxcorr itself as the NVTX tool (program context) is named as such, not as a tool.
    out = doctor("doctor", extra={"NVTX_INJECTION64_PATH": lib})
    check(f"NVTX tool    ok: NVTX_INJECTION64_PATH={lib} is nvtxcorr itself" in out, out)


def scikit_build_python():
    """A Python with scikit-build-core (scripts/test makes build/venv), or None."""
    for py in (os.environ.get("NVTXCORR_TEST_PYTHON"), os.path.join(ROOT, "build", "venv", "bin",
                                                                    "python")):
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import scikit_build_core"], capture_output=True).returncode == 0:
            return py
    return None


@scenario
def test_wheel(env):
    """pip wheel, then install into a fresh venv: the command, python -m, the demo."""
    py = scikit_build_python()
    if not py:
        raise Skip("no Python with scikit-build-core (scripts/test makes build/venv)")
    want = cmake_version()
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([py, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                            "-q", "-w", os.path.join(tmp, "dist"), ROOT],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"pip wheel: {p.stdout}{p.stderr}")
        wheels = os.listdir(os.path.join(tmp, "dist"))
        check(wheels == [f"nvtxcorr-{want}-py3-none-manylinux_2_34_x86_64.whl"], f"{wheels}")
        wheel = os.path.join(tmp, "dist", wheels[0])
        with zipfile.ZipFile(wheel) as z:
            info = f"nvtxcorr-{want}.dist-info"
            metadata = z.read(f"{info}/METADATA").decode()
            check(f"\nLicense-Expression: {LICENSE_SPDX}\n" in metadata, metadata[:2000])
            z.extract(f"{info}/licenses/LICENSE", tmp)
        check_license(os.path.join(tmp, info, "licenses", "LICENSE"))
        audit = os.path.join(os.path.dirname(py), "auditwheel")
        if os.path.exists(audit):
            a = subprocess.run([audit, "show", wheel], capture_output=True, text=True)
            check('consistent with\nthe following platform tag: "manylinux_2_34_x86_64"'
                  in a.stdout, f"auditwheel: {a.stdout}{a.stderr}")
        venv = os.path.join(tmp, "venv")
        subprocess.run(["python3", "-m", "venv", venv], check=True, capture_output=True)
        p = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "--no-index",
                            "--no-deps", wheel], capture_output=True, text=True)
        check(p.returncode == 0, f"pip install: {p.stdout}{p.stderr}")
        command = os.path.join(venv, "bin", "nvtxcorr")
        for argv in ([command], [os.path.join(venv, "bin", "python"), "-m", "nvtxcorr"]):
            v = subprocess.run([*argv, "--version"], capture_output=True, text=True)
            check(v.stdout == f"nvtxcorr {want}\n", f"{argv}: {v.stdout}{v.stderr}")
        doctor = subprocess.run([command, "doctor"], capture_output=True, text=True)
        check(re.search(r"^library      ok: .*/site-packages/nvtxcorr/lib/libnvtxcorr.so",
                        doctor.stdout, re.M), doctor.stdout)
        run_demo(env, command)
        # The HTML report's page ships inside the package (nvtxcorr/html, not only *.py).
        for name in ("__init__.py", "report.html", "report.css", "report.js"):
            check(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "nvtxcorr",
                                         "html", name)), f"the wheel has no nvtxcorr/html/{name}")
        # The shipped tables by name, from inside the installed package.
        tables = subprocess.run([command, "labels"], capture_output=True, text=True)
        check(re.search(r"^  vllm +\S+/site-packages/nvtxcorr/share/nvtxcorr/labels/vllm\.conf$",
                        tables.stdout, re.M), f"labels: {tables.stdout}{tables.stderr}")
        vllm = subprocess.run([command, "check", "vllm"], capture_output=True, text=True)
        check(vllm.returncode == 0 and "rules OK" in vllm.stdout, vllm.stdout + vllm.stderr)
        run = env.run([os.path.join(venv, "bin", "python"), "-m", "nvtxcorr",
                       env.prog("scn_driver"), "direct"], preload=False, enabled=False)
        check(run.labels() == KERNELS6, f"python -m nvtxcorr: {run.labels()} {run.err}")


LICENSE_SPDX = "Apache-2.0"


def check_license(path):
    """The shipped licence is the clone's LICENSE, the Apache License 2.0."""
    text = open(path, encoding="utf-8").read()
    check(text == open(os.path.join(ROOT, "LICENSE"), encoding="utf-8").read(), path)
    check("Apache License\n                           Version 2.0, January 2004" in text and
          "END OF TERMS AND CONDITIONS" in text, f"{path}: not the Apache License 2.0")


def dpkg_owners(path):
    """The Debian packages that ship path (merged /usr: also as /lib/... or /usr/lib/...)."""
    for p in dict.fromkeys([path, os.path.realpath(path), path.removeprefix("/usr"),
                            "/usr" + path]):
        out = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True).stdout
        owners = {pkg.strip().split(":")[0] for line in out.splitlines()
                  if not line.startswith("diversion by") for pkg in
                  line.split(": ", 1)[0].split(",")}
        if owners:
            return owners
    return set()


def package_closure(names):
    """names and everything they depend on (Depends, Pre-Depends), as installed here."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Depends}, ${Pre-Depends}", name],
                             capture_output=True, text=True).stdout
        todo += [alt.split()[0].split(":")[0] for dep in out.split(",") for alt in dep.split("|")
                 if alt.split()]
    return seen


def essential(name):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Essential}", name], capture_output=True,
                         text=True).stdout
    return out.strip() == "yes"


def needed_files(root):
    """{file a shipped file needs: the shipped files that need it}: each ELF file's libraries
    (as ldd resolves them here) and each script's interpreter ("#!/usr/bin/env python3" is
    Debian's /usr/bin/python3)."""
    needs = {}
    for d, _, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            if os.path.islink(path):
                continue
            with open(path, "rb") as fh:
                head = fh.read(256)
            if head.startswith(b"\x7fELF"):
                out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
                for m in re.finditer(r"^\s*(?:\S+ => )?(/\S+) \(0x", out, re.M):
                    needs.setdefault(m[1], set()).add(os.path.relpath(path, root))
                check("not found" not in out, f"ldd {path}: {out}")
            elif head.startswith(b"#!"):
                argv = head[2:].split(b"\n")[0].decode().split()
                interp = "/usr/bin/" + argv[1] if argv[0] == "/usr/bin/env" else argv[0]
                needs.setdefault(interp, set()).add(os.path.relpath(path, root))
    return needs


def check_declared_dependencies(root, depends):
    """Every package that ships a file that the package's files need is in Depends, is what
    a Depends package depends on, or is Essential. Proved against this Debian host's
    packages (dpkg -S), so a new NEEDED library or interpreter cannot go undeclared."""
    if not shutil.which("dpkg-query") or not dpkg_owners("/bin/sh"):
        raise Skip("not a Debian host: no dpkg database to map files to packages")
    declared = [d.split()[0] for d in depends.split(",")]
    closure = package_closure(declared)
    missing = {}
    for needed, by in needed_files(root).items():
        owners = dpkg_owners(needed)
        check(owners, f"{needed} (needed by {sorted(by)}) is in no Debian package here")
        if not owners & closure and not any(essential(o) for o in owners):
            missing[needed] = (sorted(owners), sorted(by))
    check(not missing, f"undeclared dependencies (file: packages, needed by): {missing}; "
          f"Depends: {depends}")


@scenario
def test_deb_and_tgz(env):
    """CPack's .deb and .tar.gz hold exactly the install tree; the .deb's metadata; the
    extracted .deb runs."""
    if not shutil.which("dpkg-deb"):
        raise Skip("no dpkg-deb")
    want = cmake_version()
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(["cpack", "-G", "DEB;TGZ", "-B", os.path.join(tmp, "out")],
                           cwd=env.build, capture_output=True, text=True)
        check(p.returncode == 0, f"cpack: {p.stdout}{p.stderr}")
        deb = os.path.join(tmp, "out", f"nvtxcorr_{want}_amd64.deb")
        tgz = os.path.join(tmp, "out", f"nvtxcorr-{want}-Linux-x86_64.tar.gz")
        check(os.path.exists(deb) and os.path.exists(tgz), f"{os.listdir(tmp + '/out')}")
        info = subprocess.run(["dpkg-deb", "-f", deb], capture_output=True, text=True).stdout
        fields = dict(re.findall(r"^(\S+): (.*)$", info, re.M))
        for key, value in (("Package", "nvtxcorr"), ("Version", want), ("Architecture",
                           "amd64"), ("Section", "devel"),
                           ("Depends", "libc6 (>= 2.34), python3 (>= 3.8)")):
            check(fields.get(key) == value, f"{key}: {fields.get(key)!r}\n{info}")
        check(fields.get("Maintainer") and fields.get("Description"), info)

        prefix = os.path.join(tmp, "prefix")
        subprocess.run(["cmake", "--install", env.build, "--prefix", prefix], check=True,
                       capture_output=True)
        layout = sorted(os.path.relpath(os.path.join(d, f), prefix)
                        for d, _, fs in os.walk(prefix) for f in fs)
        for must in ("bin/nvtxcorr", "lib/libnvtxcorr.so", "libexec/nvtxcorr/nvtxcorr-tool",
                     "libexec/nvtxcorr/python/nvtxcorr/cli.py",
                     "libexec/nvtxcorr/python/nvtxcorr/report.py",
                     "share/nvtxcorr/labels/vllm.conf", "share/doc/nvtxcorr/README.md",
                     "share/doc/nvtxcorr/usage.md", "include/nvtxcorr/version.h",
                     "share/doc/nvtxcorr/LICENSE", "share/doc/nvtxcorr/copyright"):
            check(must in layout, f"{must} not installed: {layout}")
        check_license(os.path.join(prefix, "share", "doc", "nvtxcorr", "LICENSE"))
        copyright = open(os.path.join(prefix, "share", "doc", "nvtxcorr", "copyright")).read()
        check(re.search(f"^License: {LICENSE_SPDX}$", copyright, re.M), copyright)
        listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True)
        in_deb = sorted(line.split()[-1].removeprefix("./usr/")
                        for line in listing.stdout.splitlines() if not line.startswith("d"))
        check(in_deb == layout, f".deb {in_deb}\ninstall {layout}")
        tar = subprocess.run(["tar", "tzf", tgz], capture_output=True, text=True).stdout
        in_tgz = sorted(x.split("/", 1)[1] for x in tar.split() if not x.endswith("/"))
        check(in_tgz == layout, f".tar.gz {in_tgz}\ninstall {layout}")

        root = os.path.join(tmp, "root")
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        # The .tar.gz holds the same files (above), so the same dependencies.
        check_declared_dependencies(root, fields["Depends"])
        launcher = os.path.join(root, "usr", "bin", "nvtxcorr")
        v = subprocess.run([launcher, "--version"], capture_output=True, text=True)
        check(v.stdout == f"nvtxcorr {want}\n", f"{v.stdout}{v.stderr}")
        run_demo(env, launcher)


def source_copy(dest):
    """The clone's files (tracked, and untracked but not ignored) copied to dest."""
    p = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard"], capture_output=True, text=True)
    if p.returncode != 0:
        raise Skip("not a git clone: cannot list its files")
    for rel in filter(None, p.stdout.split("\0")):
        if os.path.isfile(os.path.join(ROOT, rel)):
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, rel), os.path.join(dest, rel))


@scenario
def test_demo_after_package_route(env):
    """scripts/demo in a clone whose build/ was configured by the package route
    (-DNVTXCORR_BUILD_TESTS=OFF) switches the test targets back on instead of failing with
    "No rule to make target 'demo_infer'"."""
    if not os.path.isfile("/usr/local/cuda/include/cuda.h"):
        raise Skip("scripts/demo needs the CUDA toolkit's headers at /usr/local/cuda")
    with open(os.path.join(env.build, "CMakeCache.txt")) as f:
        python = re.search(r"^Python3_EXECUTABLE:\w+=(.*)$", f.read(), re.M)[1]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "nvtxcorr")
        source_copy(src)
        p = subprocess.run(["cmake", "-S", src, "-B", os.path.join(src, "build"),
                            "-DNVTXCORR_BUILD_TESTS=OFF", f"-DPython3_EXECUTABLE={python}"],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"package route configure: {p.stdout}{p.stderr}")
        p = subprocess.run([os.path.join(src, "scripts", "demo")], capture_output=True,
                           text=True, timeout=300)
        check(p.returncode == 0 and "nvtxcorr: profile of pid" in p.stdout and
              "by kernel label" in p.stdout, f"scripts/demo: rc {p.returncode}\n"
              f"{p.stdout[-1500:]}{p.stderr[-1500:]}")
        # The demo's HTML report, its path the last line.
        page = p.stdout.splitlines()[-1].partition("HTML report: ")[2]
        check(page == os.path.join(src, "build", "demo-report.html") and
              '<script id="nvtxcorr-data"' in open(page, encoding="utf-8").read(),
              f"scripts/demo's HTML report: {p.stdout[-300:]}")
