"""Reliability of symbol resolution: nvtxcorr stacked with another CUDA interposer (in either
preload order, or a wrapper defined by the executable itself), start-up that must not
deadlock against the dynamic loader, and secure-execution (setuid) processes."""
import os
import re
import subprocess

from harness import KERNELS6, VARIANTS, check, check_balanced, check_rcs_zero, scenario


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
    try:
        run = env.run(argv, preload_value=with_us, env=extra, timeout=20)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what}: hung (killed after 20 s)") from None
    check(run.rc == 0, f"{what}: rc {run.rc} (bare 0): {run.err[-500:]}")
    check_rcs_zero(run)
    check(run.rcs() == bare.rcs(), f"{what}: return codes differ from a run without nvtxcorr")
    check_balanced(run)
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
def test_startup_dlsym_in_constructor(env):
    """A first CUDA call initialising nvtxcorr (with a slow NVTX tool) while another thread
    dlopens a library whose constructor calls dlsym(libcuda, "cuLaunchKernel"): the dlsym
    must not wait for initialisation (it holds the loader lock that initialisation needs),
    and the pointer it returns must still work and be bracketed."""
    try:
        run = env.run([env.prog("scn_startup")], env={"NVTXREC_INIT_SLEEP_MS": "1000"},
                      timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("deadlocked: killed after 30 s") from None
    check(run.rc == 0, f"rc {run.rc}: {run.out} {run.err}")
    check("tool not loaded" not in run.out, "the race was not set up: the tool never loaded")
    check(sorted(w for w, _ in run.rcs()) == ["first-call", "from-ctor"], run.out)
    check_rcs_zero(run)
    check_balanced(run)
    check(run.labels() == ["add1", "add1"], f"labels {run.labels()}")
    check(run.count("cuLaunchKernel") == 2, f"{run.counts}")
