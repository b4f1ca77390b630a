"""Signals, exit and start-up, as a hostile program uses them (issue 16 cases 3, 4, 10, 11;
issue 23 cases 2, 3): exit() from the program's own SIGTERM handler, a handler that chains to
the previous one, siglongjmp out of a launch, launches while nvtxcorr initialises, launches
from a signal handler on a thread that never launched, and boolean variables that are not
understood. The statistical cases state their trial count; each trial that deadlocks is a
child process still alive long after its signal (scenarios/scn_signals.c)."""
import json
import os
import re
import subprocess
import tempfile

from harness import check, load_trace, scenario, trace_launches


@scenario
def test_config_booleans_not_understood(env):
    """NVTXCORR_GPU=garbage used to mean on, NVTXCORR_GRAPH_MARKS=garbage off, both silently:
    each now says it is not understood, names the value and what is used instead (the
    default)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.json")
        run = env.run_ok([env.prog("scn_profile"), "exit-code", "0"], tool=False,
                         env={"NVTXCORR_PROFILE": path, "NVTXCORR_GPU": "garbage"})
        check("nvtxcorr: error: NVTXCORR_GPU=garbage: not understood" in run.err
              and "GPU time stays on" in run.err, run.err)
        with open(path) as f:
            note = json.load(f)["gpu_time_note"]
        check("NVTXCORR_GPU" not in (note or ""), f"GPU time turned off: {note}")
    run = env.run_ok([env.prog("scn_driver"), "graphs"], env={"NVTXCORR_GRAPH_MARKS": "yess"})
    check("nvtxcorr: error: NVTXCORR_GRAPH_MARKS=yess: not understood" in run.err
          and "using 1 (marks on)" in run.err, run.err)
    check(len(run.marks()) == 7, f"marks are on by default: {run.marks()}")
    quiet = env.run_ok([env.prog("scn_driver"), "graphs"], env={"NVTXCORR_GRAPH_MARKS": "off"})
    check("NVTXCORR_GRAPH_MARKS" not in quiet.err and quiet.marks() == [], quiet.err)


def trials(env, mode, n, extra=None, tool=True, timeout=240, **kwargs):
    """Runs scn_signals' trial mode; returns (run, trials, hung, wrong). kwargs go to
    env.run_ok."""
    extra = dict(extra or {})
    # Under TSan (e2e.tsan): exit() called from a signal handler makes the whole exit path
    # "inside a signal", which TSan's signal-unsafe report flags by design.
    tsan = os.environ.get("TSAN_OPTIONS")
    if tsan:
        extra["TSAN_OPTIONS"] = tsan + ":report_signal_unsafe=0"
    run = env.run_ok([env.prog("scn_signals"), mode, str(n)], env=extra, tool=tool,
                     timeout=timeout, balanced=False, **kwargs)
    m = re.search(r"^trials (\d+) hung (\d+) wrong (\d+)$", run.out, re.M)
    check(m, f"{mode}: {run.out[-2000:]}\n{run.err[-2000:]}")
    return run, int(m[1]), int(m[2]), int(m[3])


def check_trials(run, n, done, hung, wrong, what):
    check(hung == 0 and wrong == 0 and done == n,
          f"{what}: {hung} of {done} trials hung, {wrong} ended otherwise than expected "
          f"(of {n})\n{run.out[-2000:]}\n{run.err[-2000:]}")


def summaries(tmp):
    out = []
    for name in os.listdir(tmp):
        if name.startswith("p.") and name.endswith(".json"):
            with open(os.path.join(tmp, name)) as f:
                out.append(json.load(f))
    return out


# Trial counts: before the fix, range mode hung in about 2% of trials (3 of 157), profile mode
# with CUPTI in half (3 of 6); 0 of 300 and 0 of 30 hang now.
EXIT_TRIALS_RANGE, EXIT_TRIALS_PROFILE, EXIT_TRIALS_CUPTI = 300, 60, 30


@scenario
def test_exit_from_signal_handler(env):
    """Issue 16 case 3: the program's SIGTERM handler calls exit(3) while the thread it
    interrupted may be inside nvtxcorr holding a lock (a map write; with CUPTI the GPU lock,
    taken while a buffer is processed on the launching thread). The exit path (the program's
    atexit handler unloads a module, which clears the label maps; the summary; CUPTI's flush)
    must not wait for it: every trial exits with 3, and in profile mode writes its summary."""
    run, done, hung, wrong = trials(env, "exit-in-handler", EXIT_TRIALS_RANGE,
                                    {"NVTXREC_OUT": ""})  # the recorder's own lock stays out
    check_trials(run, EXIT_TRIALS_RANGE, done, hung, wrong, "range mode")
    with tempfile.TemporaryDirectory() as tmp:
        run, done, hung, wrong = trials(env, "exit-in-handler", EXIT_TRIALS_PROFILE, {
            "NVTXCORR_PROFILE": os.path.join(tmp, "p.%p.json"),
            "NVTXCORR_TRACE": os.path.join(tmp, "t.%p.json")}, tool=False)
        check_trials(run, EXIT_TRIALS_PROFILE, done, hung, wrong, "profile and trace mode")
        sums = summaries(tmp)
        check(len(sums) == done and all(s["totals"]["launches"] > 0 for s in sums),
              f"{len(sums)} summaries for {done} trials")
    if os.environ.get("TSAN_OPTIONS"):
        # When the flush helper cannot finish within its bound (TSan slows it past 3 s), the
        # summary reads the GPU totals without the lock, as the signal path does by design
        # (gpu.c), which TSan reports as the race it is.
        return
    with tempfile.TemporaryDirectory() as tmp:
        run, done, hung, wrong = trials(env, "exit-in-handler", EXIT_TRIALS_CUPTI, {
            "NVTXCORR_PROFILE": os.path.join(tmp, "p.%p.json"), "NVTXCORR_GPU": "1",
            "NVTXCORR_CUPTI_LIBRARY": os.path.join(env.fakes, "libfake_cupti.so"),
            "FAKECUPTI_BUFFER_RECORDS": "1"}, tool=False)
        check_trials(run, EXIT_TRIALS_CUPTI, done, hung, wrong, "profile mode with CUPTI")
        sums = summaries(tmp)
        check(len(sums) == done and all(s["gpu_time"] for s in sums),
              f"{len(sums)} summaries for {done} trials, GPU time in "
              f"{sum(1 for s in sums if s['gpu_time'])}")


@scenario
def test_exit_from_signal_handler_inside_an_allocation(env):
    """exit() from the program's SIGTERM handler that interrupted nvtxcorr's own allocation
    (a kernel's first histogram, made while CUPTI's buffers are processed on the launching
    thread), and the program's clean-up then launches a kernel: the exit path must allocate
    nothing that waits for glibc's arena lock. slow_alloc.c makes nvtxcorr's allocations hold
    a lock that every allocation takes (the arena lock, held long), so that the signal lands
    inside one. CUPTI's buffer request at the clean-up's launch waited for it forever (3 of 3
    trials hung; 19 of 95 in the probe, by chance). 10 trials."""
    if os.environ.get("TSAN_OPTIONS"):
        return  # as in test_exit_from_signal_handler: the flush helper's bound under TSan
    slow = env.prog("libslow_alloc.so")
    with tempfile.TemporaryDirectory() as tmp:
        run, done, hung, wrong = trials(env, "exit-in-handler", 10, {
            "NVTXCORR_PROFILE": os.path.join(tmp, "p.%p.json"), "NVTXCORR_GPU": "1",
            "NVTXCORR_CUPTI_LIBRARY": os.path.join(env.fakes, "libfake_cupti.so"),
            "FAKECUPTI_BUFFER_RECORDS": "1", "SCN_ATEXIT_LAUNCH": "1", "SLOWALLOC_MS": "20",
            "SLOWALLOC_MIN": "512", "SLOWALLOC_FROM": "libnvtxcorr", "SLOWALLOC_LOCK": "1"},
            tool=False, preload_value=f"{slow}:{env.lib}")
        check_trials(run, 10, done, hung, wrong, "profile mode with CUPTI, allocations held")
        check(len(summaries(tmp)) == done, f"{len(summaries(tmp))} summaries for {done} trials")


@scenario
def test_signal_handler_chains_to_previous(env):
    """Issue 16 case 4: a SIGTERM handler installed after nvtxcorr's, which saves the previous
    disposition and chains to it, then a shutdown after it. The program is told SIG_DFL, as
    without nvtxcorr, so each way of chaining ends as it would without nvtxcorr (same output,
    same status), and the summary is written: at exit with every launch when the program
    carries on, by nvtxcorr's handler when it re-raises with SIG_DFL. Installed with
    sysv_signal (not interposed), the handler gets nvtxcorr's as the previous one: calling it
    writes the summary and returns, and the program's shutdown goes on."""
    for kind, launches in (("call", 8), ("reraise", 5), ("signal", 5), ("sysv", 5)):
        args = [env.prog("scn_signals"), "chain", kind]
        bare = env.run(args, preload=False)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "p.json")
            run = env.run(args, tool=False, env={"NVTXCORR_PROFILE": path})
            want_previous = "a handler" if kind == "sysv" else "default"
            check(run.rc == bare.rc and run.out == bare.out.replace("default", want_previous),
                  f"{kind}: rc {run.rc}, output {run.out!r}; without nvtxcorr: rc {bare.rc}, "
                  f"{bare.out!r}\n{run.err}")
            check(os.path.exists(path), f"{kind}: no summary\n{run.err}")
            with open(path) as f:
                total = json.load(f)["totals"]["launches"]
            check(total == launches, f"{kind}: {total} launches in the summary, not {launches}")


FRESH_THREAD_TRIALS = 100  # before the fix, profile mode hung in 3 of 5 trials, trace in 3 of 6


@scenario
def test_launch_from_handler_on_fresh_thread(env):
    """Issue 23 case 2: SIGUSR1 lands on a thread that never launched, while it loops in
    malloc and free, and the handler launches a known kernel. Profile and trace mode used to
    make the thread's record with calloc (deadlocked on the arena lock that malloc held); the
    records now come from mmap. Range, profile and trace mode: every trial exits 0 with the
    handler's launch counted."""
    # The recorder's no-op mode: its recording push keeps a depth in dynamic TLS, which glibc
    # allocates on a thread's first touch (an NVTX tool's push must itself be signal-safe).
    run, done, hung, wrong = trials(env, "fresh-thread", FRESH_THREAD_TRIALS,
                                    {"NVTXREC_OUT": "", "NVTXREC_MODE": "noop"})
    check_trials(run, FRESH_THREAD_TRIALS, done, hung, wrong, "range mode")
    for mode, var in (("profile", "NVTXCORR_PROFILE"), ("trace", "NVTXCORR_TRACE")):
        with tempfile.TemporaryDirectory() as tmp:
            prefix = "p" if mode == "profile" else "t"
            run, done, hung, wrong = trials(env, "fresh-thread", FRESH_THREAD_TRIALS, {
                var: os.path.join(tmp, prefix + ".%p.json")}, tool=False)
            check_trials(run, FRESH_THREAD_TRIALS, done, hung, wrong, f"{mode} mode")
            files = [n for n in os.listdir(tmp) if n.startswith(prefix + ".")]
            check(len(files) == done, f"{mode}: {len(files)} files for {done} trials")
            if mode == "profile":
                counts = {s["totals"]["launches"] for s in summaries(tmp)}
                check(counts == {2}, f"launches per summary: {counts} (main's and the handler's)")
            else:
                for name in files:
                    events = load_trace(os.path.join(tmp, name))
                    n = len(trace_launches(events))
                    check(n == 2, f"{name}: {n} launch events, not 2")


@scenario
def test_siglongjmp_out_of_a_launch(env):
    """Issue 16 case 10: a signal taken inside a hooked launch whose handler siglongjmps out
    skips the frames that lower the thread's depth. The next launches from the same frame
    must still get their ranges (range mode) and their counts (profile mode)."""
    args = [env.prog("scn_signals"), "longjmp"]
    run = env.run_ok(args, balanced=False)  # the jumped-over launch's range stays open
    check("jumped" in run.out, run.out)
    labels = run.labels()
    check(labels == ["add1", "flash_fwd_kernel"] + ["triton_poi_fused_add_0"] * 3 +
          ["graph#1 (1 kernels)"] * 2, f"range mode: {labels}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.json")
        env.run_ok(args, tool=False, env={"NVTXCORR_PROFILE": path})
        with open(path) as f:
            s = json.load(f)
        launches = {k["function"]: k["launches"] for k in s["kernels"]}
        check(launches.get("triton_poi_fused_add_0") == 3 and s["totals"]["graph_launches"] == 2,
              f"profile mode: {launches}, graph launches {s['totals']['graph_launches']}")


@scenario
def test_launches_while_starting_are_reported(env):
    """Issue 16 case 11: launches on another thread while nvtxcorr initialises pass through
    (initialisation never waits), so the summary cannot count them; it says how many passed:
    `uncounted_at_start` in JSON's totals, a row in CSV, a line in text. A slow NVTX tool holds
    initialisation open for 0.5 s while the main thread launches 20 times."""
    for ext in ("json", "csv", "txt"):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "p." + ext)
            env.run_ok([env.prog("scn_signals"), "starting", "20"],
                       env={"NVTXCORR_PROFILE": path, "NVTXREC_INIT_SLEEP_MS": "500"})
            with open(path) as f:
                text = f.read()
            if ext == "json":
                t = json.loads(text)["totals"]
                check(t["launches"] + t["uncounted_at_start"] == 21 and t["uncounted_at_start"],
                      f"every launch counted or reported uncounted: {t}")
                n = t["uncounted_at_start"]
                # nvtxcorr report says it too, and keeps the count in its merged JSON
                r = subprocess.run([env.launcher, "report", path, path], capture_output=True,
                                   text=True)
                check(f"{2 * n} launches made while nvtxcorr was starting passed through "
                      "uncounted" in r.stdout, r.stdout + r.stderr)
                r = subprocess.run([env.launcher, "report", "--json", path, path],
                                   capture_output=True, text=True)
                check(json.loads(r.stdout)["totals"]["uncounted_at_start"] == 2 * n, r.stdout)
            elif ext == "csv":
                check(re.search(rf"^uncounted_at_start,,,,,{n},", text, re.M), text)
            else:
                check(f"{n} launches made while nvtxcorr was starting passed through uncounted"
                      in text, text)
