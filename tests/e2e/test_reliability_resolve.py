"""Reliability of symbol resolution: nvtxcorr stacked with another CUDA interposer (in either
preload order, or a wrapper defined by the executable itself), start-up that must not
deadlock against the dynamic loader, and secure-execution (setuid) processes."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from harness import KERNELS6, VARIANTS, check, scenario


def tracer_counts(run):
    return {m[0]: int(m[1]) for m in re.findall(r"^tracer: (\S+) (\d+)$", run.err, re.M)}


def stacked(env, setup, lookup, mode):
    """One run of scn_driver <mode> with another interposer, compared with the same run
    without nvtxcorr: same return codes, same driver calls, same calls through the other
    interposer, and one balanced range per launch."""
    tracer = env.prog("libtracer.so")
    prog, with_us, without_us = {
        "other-first": ("scn_driver", tracer + ":" + env.lib, tracer),
        "us-first": ("scn_driver", env.lib + ":" + tracer, tracer),
        "executable": ("scn_driver_wrapped", env.lib, None),
    }[setup]
    argv = [env.prog(prog), mode]
    extra = {"TRACER_LOOKUP": lookup}
    what = f"{setup}, TRACER_LOOKUP={lookup}, {mode}"
    bare = env.run(argv, preload=without_us is not None, preload_value=without_us, env=extra)
    check(bare.rc == 0, f"{what}: bare run failed, rc {bare.rc}: {bare.err}")
    run = env.run_ok(argv, what=what, preload_value=with_us, env=extra, timeout=20)
    check(run.rcs() == bare.rcs(), f"{what}: return codes differ from a run without nvtxcorr")
    launches = 6 + (mode == "procaddr")
    check(run.labels()[:6] == KERNELS6 and len(run.labels()) == launches,
          f"{what}: {len(run.labels())} ranges for {launches} launches: {run.labels()}")
    for v in VARIANTS:
        check(run.count(v) == bare.count(v),
              f"{what}: driver {v} called {run.count(v)} times, bare {bare.count(v)}")
    theirs, expected = tracer_counts(run), tracer_counts(bare)
    check(len(expected) == 6, f"{what}: the other interposer did not report: {bare.err}")
    check(theirs == expected,
          f"{what}: other interposer's wrappers called {theirs}, without nvtxcorr {expected}")


@scenario
def test_stacked_interposer(env):
    """Another library that defines cuLaunchKernel & co. (a tracer, a vGPU limiter) and
    forwards through dlsym(RTLD_NEXT) or dlsym(libcuda handle), preloaded before or after
    nvtxcorr, or the executable's own exported wrappers: on the direct, dlsym and
    cuGetProcAddress paths, no crash or recursion, and both interposers see every launch they
    would see alone."""
    failures = []
    for setup in ("other-first", "us-first", "executable"):
        for lookup in ("next", "handle"):
            for mode in ("direct", "dlsym", "procaddr"):
                try:
                    stacked(env, setup, lookup, mode)
                except AssertionError as e:
                    failures.append(str(e))
    check(not failures, f"{len(failures)} of 18 cases failed:\n" + "\n".join(failures))


@scenario
def test_two_copies_preloaded(env):
    """Two copies of the library in LD_PRELOAD (a pip-installed one and a packaged one): the
    second stands aside (resolve.c's marker), says so once, and forwards every hook, so each
    launch has one range and profile mode writes one summary; with the second copy named as
    the NVTX tool, the first one still gets the program's ranges as context."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-copies-")
    copies = [os.path.join(tmp, d, "libnvtxcorr.so") for d in ("first", "second")]
    for c in copies:
        os.makedirs(os.path.dirname(c))
        shutil.copy(env.lib, c)
    both = ":".join(copies)
    said = re.compile(rf"^nvtxcorr: warn: another copy of nvtxcorr at {re.escape(copies[0])} is "
                      rf"active; this one \({re.escape(copies[1])}\) stands aside$", re.M)

    def one_warning(run, what):
        check(len(said.findall(run.err)) == 1 and run.err.count("\n") == 1,
              f"{what}: one warning expected, stderr: {run.err!r}")

    run = env.run_ok([env.prog("scn_driver"), "direct"], preload_value=both)
    check(run.labels() == KERNELS6, f"{len(run.labels())} ranges for 6 launches: {run.labels()}")
    one_warning(run, "ranges")
    prof = os.path.join(tmp, "p.json")
    run = env.run_ok([env.prog("scn_io"), "loop", "100", "0"], preload_value=both, tool=False,
                     env={"NVTXCORR_PROFILE": prof})
    one_warning(run, "profile")
    with open(prof) as f:
        check(json.load(f)["totals"]["launches"] == 100, "the first copy's summary")
    check(sorted(os.listdir(tmp)) == ["first", "p.json", "second"], f"{os.listdir(tmp)}")
    ctx = os.path.join(tmp, "c.json")
    run = env.run_ok([env.prog("scn_context"), "levels"], preload_value=both, tool=False,
                     env={"NVTXCORR_PROFILE": ctx, "NVTX_INJECTION64_PATH": copies[1]})
    one_warning(run, "context")
    with open(ctx) as f:
        rows = {tuple(r["context"]) for r in json.load(f)["contexts"]}
    check(("outer", "step", "wide\u00e9") in rows, f"context rows {rows}")
    shutil.rmtree(tmp)


@scenario
def test_startup_dlsym_in_constructor(env):
    """A first CUDA call initialising nvtxcorr (with a slow NVTX tool) while another thread
    dlopens a library whose constructor reaches the driver: dlsym(libcuda, "cuLaunchKernel"),
    cuGetProcAddress_v2 for it, or a launch. None of them may wait for initialisation (the
    constructor holds the loader lock that initialisation needs to load the tool); the
    pointers they return must still work and be bracketed once initialisation is done. A
    launch made while initialisation is in progress passes through, without a range."""
    for how in ("dlsym", "procaddr", "launch"):
        run = env.run_ok([env.prog("scn_startup")], what=how,
                         env={"NVTXREC_INIT_SLEEP_MS": "1000", "CTOR_CALL": how}, timeout=30)
        check("tool not loaded" not in run.out,
              f"{how}: the race was not set up: the tool never loaded")
        during = ["ctor-launch"] if how == "launch" else []
        check(sorted(w for w, _ in run.rcs()) == sorted(["first-call", "from-ctor"] + during),
              f"{how}: {run.out}")
        check(run.labels() == ["add1", "add1"], f"{how}: labels {run.labels()}")
        check(run.count("cuLaunchKernel") == 2 + len(during), f"{how}: {run.counts}")


@scenario
def test_setuid_reads_no_environment(env):
    """Loaded into a set-user-ID program run by an unprivileged user (secure execution,
    AT_SECURE), nvtxcorr must not act on that user's environment: no NVTX tool loaded (it
    would run as root), no label file read (a root-only file, whose lines the parser would
    echo in its errors), nothing printed, launches unchanged.

    Exercised for real: a copy of scn_secure owned by root with the set-user-ID bit, in a
    temporary directory, run as uid/gid 65534 with setpriv. scn_secure links libnvtxcorr.so
    ahead of libcuda.so.1, which loads it the way /etc/ld.so.preload would (LD_PRELOAD paths
    are ignored in secure execution). Needs root and setpriv; skipped otherwise."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        print("skipped: needs root and setpriv to install and run a set-user-ID program")
        return
    prog = env.prog("scn_secure")
    with tempfile.TemporaryDirectory() as tmp:
        if os.statvfs(tmp).f_flag & os.ST_NOSUID:
            print(f"skipped: {tmp} is mounted nosuid")
            return
        os.chmod(tmp, 0o755)
        secret = os.path.join(tmp, "secret.conf")
        with open(secret, "w") as f:
            f.write("SECRET-LINE-7f3a [[[\n")
        os.chmod(secret, 0o600)
        rec = os.path.join(tmp, "root-only", "nvtx.log")
        os.mkdir(os.path.dirname(rec), 0o700)
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NVTXCORR": "1",
             "NVTXCORR_LOG": "debug", "NVTXCORR_LABELS": secret,
             "NVTX_INJECTION64_PATH": env.recorder, "NVTXREC_OUT": rec}
        # Control: the same environment in an ordinary process does load the tool.
        plain = subprocess.run([prog], env=e, capture_output=True, text=True, timeout=60)
        check(plain.returncode == 0 and "secure 0" in plain.stdout and os.path.exists(rec),
              f"control run did not use the tool: {plain.stdout} {plain.stderr}")
        os.remove(rec)
        suid = os.path.join(tmp, "scn_secure")
        shutil.copy(prog, suid)
        os.chown(suid, 0, 0)
        os.chmod(suid, 0o4755)
        p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", suid],
                           env=e, capture_output=True, text=True, timeout=60)
        check("secure 1" in p.stdout, f"not started in secure-execution mode: rc "
              f"{p.returncode}: {p.stdout} {p.stderr}")
        check(p.returncode == 0, f"rc {p.returncode}: {p.stdout} {p.stderr}")
        check(re.findall(r"^rc (\S+) (-?\d+)$", p.stdout, re.M) == [("cuLaunchKernel", "0")] * 2,
              f"launches: {p.stdout}")
        problems = []
        if os.path.exists(rec):
            problems.append("the NVTX tool named by the caller ran as root, recorded: " +
                            repr(open(rec).read()[-300:]))
        if p.stderr:
            problems.append(f"printed in a set-user-ID process: {p.stderr!r}")
        check(not problems, "\n".join(problems))
