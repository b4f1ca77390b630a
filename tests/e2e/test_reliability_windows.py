"""Windows, forks and program context against a hostile program (issue 31's cases): GPU time
starting while windows are cut, a forked child of a windowed parent, signals during a cut or
the exit, _exit, SIGKILL during a window's write, many NVTX domains. Where a race is involved
the scenario runs the trials the probe that found it ran, or makes the race certain (a slowed
allocation), and waits for states, never for time."""
import json
import os
import re
import tempfile

from harness import check, scenario
from test_windows import window_run


def gpu(env):
    from test_cupti import fake_cupti
    return {"NVTXCORR_GPU": "1", "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env)}


@scenario
def test_windows_while_gpu_time_starts(env):
    """Windows every millisecond while GPU time starts at the first launch, its allocations
    slowed 2 ms each (slow_alloc.c) so that dozens of window cuts happen meanwhile: the
    helper's end of a window must not touch the GPU window sets before they exist (it did:
    memset of NULL, SIGSEGV in 40 of 40 runs with the slowed allocation, 19 of 300 without).
    5 trials; each exits 0 with every launch in its windows."""
    slow = env.prog("libslow_alloc.so")
    for trial in range(5):
        extra = dict(gpu(env), SLOWALLOC_MS="2")
        run, sums = window_run(env, [env.prog("scn_windows"), "loop", "150"], "every:0.001",
                               extra=extra, preload_value=f"{slow}:{env.lib}")
        n = int(re.search(r"launched (\d+)", run.out).group(1))
        got = sum(d["totals"]["launches"] for d in sums)
        check(got == n and run.err == "",
              f"trial {trial}: windows hold {got} launches of {n}\n{run.err[-2000:]}")
