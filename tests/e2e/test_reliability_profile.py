"""Profile mode's windows, forks and exits against a hostile program: GPU time starting while
windows are cut, a forked child of a windowed parent, signals during a cut or the exit, _exit,
SIGKILL during a window's write, many NVTX domains. Where a race is involved
the scenario runs the trials the probe that found it ran, or makes the race certain (a slowed
allocation), and waits for states, never for time."""
import json
import os
import re
import subprocess
import tempfile
import time

from harness import check, lift_memory_limit, scenario
from test_profile import only, profile_run
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


def children_of(run):
    """{child pid: wait status} and the parent's pid, from scn_windows fork's lines."""
    kids = {int(p): int(s) for p, s in re.findall(r"^child (\d+) status (-?\d+)$", run.out, re.M)}
    return kids, int(re.search(r"^parent (\d+)$", run.out, re.M).group(1))


@scenario
def test_windows_forked_children_write_their_own(env):
    """A child forked by a windowed parent (every:0.002, cudaProfilerApi, signal windows the
    parent opens and closes around its launches) has no windows: it writes one summary of its
    own launches (flash x3), window 0 of the path's %w, while the parent's windows hold
    exactly the parent's. It wrote the window the parent's helper was writing when it forked
    instead (every:0.002: 150 of 150 children; cudaProfilerApi 98 of 100; signal 96 of 100).
    20 children per kind of window."""
    for window, opener in (("every:0.002", "none"), ("cudaProfilerApi", "api"),
                           ("signal", "signal")):
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-fork-")
        run = env.run_ok([env.prog("scn_windows"), "fork", "20", opener, "exit"], tool=False,
                         env={"NVTXCORR_PROFILE": os.path.join(tmp, "w.%p.%w.json"),
                              "NVTXCORR_WINDOW": window})
        kids, parent = children_of(run)
        check(len(kids) == 20 and set(kids.values()) == {0}, f"{window}: children {kids}")
        files = sorted(os.listdir(tmp))
        mine = [f for f in files if not f.startswith(f"w.{parent}.")]
        check(sorted(mine) == sorted(f"w.{k}.0.json" for k in kids),
              f"{window}: the children's files {mine}")
        wrong, held = [], 0
        for name in files:
            with open(os.path.join(tmp, name)) as f:
                d = json.load(f)
            got = {e["label"]: e["launches"] for e in d["labels"] if e["launches"]}
            if name in mine and ("window" in d or got != {"flash_fwd_kernel": 3} or
                                 d["totals"]["launches"] != 3):
                wrong.append((name, d.get("window"), got, d["totals"]["launches"]))
            elif name not in mine:
                held += d["totals"]["launches"]
                check(set(got) <= {"add1"}, f"{window}: parent's {name}: {got}")
        check(not wrong, f"{window}: {len(wrong)} of 20 children wrote wrong summaries: "
              f"{wrong[:3]}")
        # Signal toggles are not waited for: a pair that comes while a cut is pending cancels
        # out, and its launches are in no window.
        n = int(re.search(r"^launched (\d+)$", run.out, re.M).group(1))
        check(held == n or (opener == "signal" and 0 < held <= n),
              f"{window}: the parent's windows hold {held} of its {n} launches")


@scenario
def test_windows_signal_kills_a_forked_child(env):
    """NVTXCORR_WINDOW=signal: a forked child has no windows, so the window signal is the
    program's again, whose default action kills (as without nvtxcorr: wait status 12). The
    child kept nvtxcorr's handler and exited 0. 5 children, bare and preloaded."""
    argv = [env.prog("scn_windows"), "fork", "5", "none", "raise"]
    bare = env.run_ok(argv, preload=False, enabled=False, tool=False)
    kids, _ = children_of(bare)
    check(set(kids.values()) == {12}, f"bare: children's wait statuses {kids}")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-fork-")
    run = env.run_ok(argv, tool=False, env={"NVTXCORR_PROFILE": os.path.join(tmp, "w.json"),
                                            "NVTXCORR_WINDOW": "signal"})
    kids, _ = children_of(run)
    check(len(kids) == 5 and set(kids.values()) == {12},
          f"children's wait statuses {kids} (12: killed by SIGUSR2)")


@scenario
def test_windows_signal_toggles_during_a_cut(env):
    """A signal toggles the window wanted; toggles that come while a closed window waits for
    its cut flip what the helper makes once the cut is made. After a window around add1, a
    burst of 4 toggles leaves no window open, however the helper's cuts fall among them: the
    flash launch after it (once window 1 is written) is in none, and every window was closed by
    its signal. Each toggle during a cut was taken as "open": the burst reopened a window,
    which counted flash and was left open at exit. A burst of 3 leaves one wanted open: the
    last window, if it is open at exit, is closed by the exit, and flash is in it unless that
    window opened only after flash (its cut still pending then). With and without GPU time
    (whose cuts take longer), 5 trials each."""
    for extra in ({}, gpu(env)):
        for burst in (4, 3):
            for trial in range(5):
                what = f"{'GPU time, ' if extra else ''}burst of {burst}, trial {trial}"
                run, sums = window_run(env, [env.prog("scn_windows"), "signal-burst",
                                             str(burst), "{dir}"], "signal", extra=extra)
                got = [{e["label"]: e["launches"] for e in d["labels"] if e["launches"]}
                       for d in sums]
                reasons = [d["window"]["reason"] for d in sums]
                exits = reasons[-1:] == ["exit"]
                tail = [{"flash_fwd_kernel": 1}] if exits and got[-1] else []
                n = len(got) - len(tail)
                check(got[0] == {"add1": 1} and got[1:n] == [{}] * (n - 1),
                      f"{what}: windows' launches {got}")
                check(reasons[:-1] == ["signal"] * (len(reasons) - 1) and
                      (burst % 2 or not exits), f"{what}: windows closed by {reasons}")


@scenario
def test_windows_signal_threads_gpu_time(env):
    """The signal-threads scenario with GPU time (a window's cut then waits for its GPU work):
    ten windows, each closed by its signal (7, 3 and 5 of 10 before, each run ending in an
    exit window)."""
    run, sums = window_run(env, [env.prog("scn_windows"), "signal-threads", "{dir}"], "signal",
                           extra=gpu(env))
    check(len(sums) == 10 and all(d["window"]["reason"] == "signal" for d in sums),
          f"{[d['window'] for d in sums]}\n{run.err}")


@scenario
def test_windows_signal_storm_at_exit(env):
    """SIGUSR2 every 25 us or 250 us while the program exits: the exit still takes the window
    helper's lock (it tells the helper to stop, and waits until a deadline, which the signals
    cannot cut short as they cut each sleep) and writes the last window; it said "the window
    helper is stuck" and lost it (2 of 12 at 25 us, 5 of 12 at 250 us). 12 trials each."""
    for us in ("25", "250"):
        for trial in range(12):
            run, sums = window_run(env, [env.prog("scn_windows"), "storm-exit", us, "100"],
                                   "signal")
            check("stuck" not in run.err and sums, f"{us} us, trial {trial}: {len(sums)} "
                  f"windows\n{run.err[-1500:]}")


@scenario
def test_windows_killed_while_a_window_is_written(env):
    """SIGKILL while a window's summary is being written (slow_io.c: each write waits 300 ms):
    the summary's name appears only whole, by the rename of the temporary file, so every file
    under a summary's name is a whole summary. The name was claimed (O_EXCL) before the write,
    and the kill left it empty beside the temporary file (2 of 20 in the probe; every time
    with the slowed write). 3 trials, each killed once the temporary file exists."""
    slow = env.prog("libslow_io.so")
    for trial in range(3):
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-kill-")
        e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "NVTX_"))}
        e.update({"LD_LIBRARY_PATH": env.fakes, "NVTXCORR": "1", "NVTXCORR_GPU": "0",
                  "LD_PRELOAD": ":".join(filter(None, [env.preload_first, slow, env.lib])),
                  "NVTXCORR_PROFILE": os.path.join(tmp, "w.%w.json"),
                  "NVTXCORR_WINDOW": "every:0.05", "SLOWIO_WRITE_MIN": "1",
                  "SLOWIO_WRITE_US": "300000"})
        p = subprocess.Popen([env.prog("scn_windows"), "loop", "100000"], env=e,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=lift_memory_limit if env.preload_first else None)
        deadline = time.time() + 60
        while time.time() < deadline and not any("nvtxcorr-tmp" in n for n in os.listdir(tmp)):
            time.sleep(0.01)
        p.kill()
        p.wait()
        names = os.listdir(tmp)
        check(any("nvtxcorr-tmp" in n for n in names), f"trial {trial}: no write seen: {names}")
        for name in names:
            if "nvtxcorr-tmp" in name:
                continue
            with open(os.path.join(tmp, name)) as f:
                text = f.read()
            try:
                json.loads(text)
            except ValueError:
                check(False, f"trial {trial}: {name} is not a whole summary: {text[:80]!r} "
                      f"({len(text)} bytes); files {sorted(names)}")


@scenario
def test_windows_nvtx_after_many_domains(env):
    """nvtx:step after the thread has pushed and popped ranges in 10 other domains: the step
    range opens its window (add1 x2). A thread kept a slot per domain it ever used, 8 at
    most, so no window ever opened ("no window opened")."""
    run, sums = window_run(env, [env.prog("scn_windows"), "nvtx-domains"], "nvtx:step")
    got = [{e["label"]: e["launches"] for e in d["labels"] if e["launches"]} for d in sums]
    check(got == [{"add1": 2}], f"windows {got}\n{run.err}")


@scenario
def test_profile_underscore_exit(env):
    """_exit and _Exit (Python's os._exit, multiprocessing's children) write the summary as
    exit() does, with every launch (14, one thread's included) and the exit status the
    program asked for; they wrote nothing ("the command made no CUDA call that nvtxcorr
    saw"). A vfork child's _exit writes nothing and costs the parent nothing: the parent's
    summary is its own, and the child's status is the one it asked for."""
    for how in ("_exit", "_Exit"):
        run, sums, _ = profile_run(env, [env.prog("scn_profile"), "underscore-exit", how, "3"],
                                   rc=3)
        d = only(sums)
        check(d["totals"]["launches"] == 14 and run.err == "", f"{how}: {d['totals']}\n{run.err}")
    if os.environ.get("TSAN_OPTIONS"):
        return  # ThreadSanitizer makes vfork a fork: the child is a process of its own then
    run, sums, _ = profile_run(env, [env.prog("scn_profile"), "underscore-exit", "vfork", "5"])
    d = only(sums)
    check(d["totals"]["launches"] == 14 and "child status 1280" in run.out,
          f"vfork: {len(sums)} summaries, {d['totals']}\n{run.out}{run.err}")


@scenario
def test_windows_nvtx_back_to_back_context(env):
    """1,000 nvtx:step windows back to back with program context on (nvtxcorr as the NVTX
    tool), made by the program and by a signal handler's ranges: every window holds exactly
    its one launch, and profile mode's memory stays what the program's pairs take. Each cut
    cleared and scanned three tables of 524,288 cells, and the program waited for it at every
    close: 41 MB more than the bare run at peak (the tables' pages, touched by the clearing)."""
    from harness import peak_rss
    for how in ([], ["handler"]):
        argv = [env.prog("scn_windows"), "nvtx-steps", "1000"] + how
        bare = env.run_ok(argv, preload=False, enabled=False, tool=False)
        run, sums = window_run(env, argv, "nvtx:step")
        got = [tuple(sorted((e["label"], e["launches"]) for e in d["labels"] if e["launches"]))
               for d in sums]
        check(len(sums) == 1000 and set(got) == {(("add1", 1),)},
              f"{how}: {len(sums)} windows, {sorted(set(got))[:3]}\n{run.err[-1000:]}")
        grew = peak_rss(run) - peak_rss(bare)
        check(grew < 16 * 1024, f"{how}: peak resident set {grew} kB above the bare run's")
