"""Process-state scenarios: the library stays correct across fork, on small thread stacks,
in signal handlers, across plugin unloads, and under graph churn with fresh handles."""
import json
import os
import re
import shutil
import tempfile

from harness import check, scenario

LONG_KERNEL_BASE = "Kernel"  # base name of scn_state's CUTLASS-like kernel


def state_run(env, args, extra=None, timeout=240):
    return env.run_ok([env.prog("scn_state"), *args], env=extra or {}, timeout=timeout)


@scenario
def test_fork_while_threads_launch(env):
    """Children forked while 4 threads make first launches and churn graphs never hang: every
    lock is held across fork. The slow tool (a delay inside string registration, which runs
    under our lock) makes a fork in the middle of a critical section likely."""
    run = state_run(env, ["forkstorm", "300"], {"NVTXREC_REGISTER_DELAY_US": "200"})
    m = re.search(r"forks (\d+) hung (\d+) failed (\d+)", run.out)
    check(m, run.out)
    check(m[2] == "0" and m[3] == "0",
          f"{m[2]} of {m[1]} forked children hung, {m[3]} failed")
    check(int(m[1]) == 300, f"only {m[1]} forks")


@scenario
def test_fork_while_threads_launch_in_profile_mode(env):
    """The same storm in profile and trace mode with GPU time (the fake CUPTI, no tool):
    profile mode's locks (CUPTI's records, the trace's file, the sites, the thread blocks,
    CUPTI's spare buffers) are taken in the core's one fork order too (docs/design.md, Fork),
    so no child hangs or fails, and the parent's summary is whole. Children _exit, which writes
    a summary as exit() does: one each, of the child's own launches."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-forkstorm-")
    extra = {"NVTXCORR_PROFILE": os.path.join(tmp, "p.%p.json"),
             "NVTXCORR_TRACE": os.path.join(tmp, "t.%p.json"), "NVTXCORR_GPU": "1"}
    cupti = os.path.join(env.fakes, "libfake_cupti.so")
    if os.path.exists(cupti):
        extra["NVTXCORR_CUPTI_LIBRARY"] = cupti
    try:
        run = env.run_ok([env.prog("scn_state"), "forkstorm", "60"], env=extra, tool=False,
                         timeout=240)
        m = re.search(r"forks (\d+) hung (\d+) failed (\d+)", run.out)
        check(m, run.out)
        check(m[2] == "0" and m[3] == "0" and m[1] == "60",
              f"{m[2]} of {m[1]} forked children hung, {m[3]} failed")
        sums = [json.load(open(os.path.join(tmp, f))) for f in os.listdir(tmp)
                if f.startswith("p.")]
        check(len(sums) == 61, f"{len(sums)} summaries for 60 children and their parent")
        d = max(sums, key=lambda s: s["totals"]["launches"])  # the parent's
        check(d["totals"]["launches"] > 0 and d["totals"]["graph_launches"] > 0, f"{d['totals']}")
        check(all(s["totals"]["launches"] > 0 for s in sums),
              f"{[s['totals']['launches'] for s in sums]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stack_check(env, extra):
    run = state_run(env, ["stack", "16384"], extra)
    used = {k: int(v) for k, v in re.findall(r"stack_used_(\w+) (\d+) rc 0", run.out)}
    check("small_stack" in run.out and len(used) == 3, run.out)
    # The first launch and the first instantiation run their deep work on the slow-path
    # stack: the caller's stack sees no more than a launch of a known kernel does.
    # (The launch itself is mostly the NVTX tool's push: the recorder formats on the stack.)
    budget = 512
    check(used["first_launch"] - used["seen_launch"] <= budget and used["instantiate"] <= 2048,
          f"stack used below the caller: {used} (first launch: at most {budget} bytes more "
          "than a launch of a known kernel)")
    return run


@scenario
def test_first_launch_on_small_stack(env):
    run = stack_check(env, {})
    check(run.labels().count(LONG_KERNEL_BASE) == 3, f"labels {run.labels()}")


@scenario
def test_first_launch_on_small_stack_with_regex_table(env):
    run = stack_check(env, {"NVTXCORR_LABELS_INLINE":
                            r're:cutlass::Kernel<.*GemmUniversal gemm;re:^(add|sub)[0-9]+$ arith'})
    check(run.labels().count("gemm") == 3, f"labels {run.labels()}")


@scenario
def test_launches_from_signal_handler(env):
    """SIGALRM every 50 us launches a known kernel; when it interrupts cuGraphExecDestroy it
    also launches a never-seen one, which must pass through rather than take our locks (it
    gets a range when the signal lands just outside the hook, where the slow path is safe)."""
    # Under TSan (e2e.tsan): a never-seen kernel launched from the handler where it lands just
    # outside our hook takes the slow path, which allocates. That is safe here (the interrupted
    # code holds no allocator lock) but is what TSan's signal-unsafe report flags by design.
    tsan = os.environ.get("TSAN_OPTIONS")
    extra = {"TSAN_OPTIONS": tsan + ":report_signal_unsafe=0"} if tsan else None
    run = state_run(env, ["signals", "20000"], extra=extra, timeout=120)
    m = re.search(r"handler_launches (\d+) unseen_launches (\d+)", run.out)
    check(m, run.out)
    check(int(m[1]) >= 100, f"only {m[1]} handler launches: the timer did not fire")
    labels = run.labels()
    check(labels.count("main_body_0") == 20000, f"{labels.count('main_body_0')} main-body ranges")
    odd = {t for t in labels if t not in ("main_body_0", "seen_kernel_0")
           and not t.startswith(("graph#", "unseen_kernel_"))}
    check(not odd, f"unexpected labels {sorted(odd)[:10]}")
    # Ranges, not the fake's counters: those are per-thread read-modify-writes, and the
    # handler interrupting one loses an update.
    seen = labels.count("seen_kernel_0")
    check(1 <= seen <= int(m[1]) + 1, f"{seen} ranges for {m[1]} handler launches")


@scenario
def test_plugin_unloaded_and_replaced(env):
    """A plugin's kernel is launched by host stub, the plugin is dlclosed (its fat binary
    unregistered, its library unloaded) and another plugin is loaded at the same address:
    its kernel must not inherit the first one's label."""
    args = [env.prog("scn_plugins"), env.prog("libkplugin_alpha.so"),
            env.prog("libkplugin_omega.so")]
    bare = env.run(args, preload=False)
    run = env.run_ok(args)
    check(run.rcs() == bare.rcs(), f"return codes changed: {run.rcs()} vs {bare.rcs()}")
    if "same_address 1" not in run.out:
        print("  skipped: the second plugin was not loaded at the first one's address")
        return
    check(run.labels() == ["alpha", "alpha", "omega", "omega"], f"labels {run.labels()}")
