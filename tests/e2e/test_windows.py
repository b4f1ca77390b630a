"""Profile mode's windows (NVTXCORR_WINDOW, docs/profile.md "Profiling a server"): one summary
per window, with exactly the launches made inside it, from the profiler API on every path to
the driver, a signal, or a timer; the program's own handlers and the real profiler calls are
left alone. No timing is asserted beyond windows existing."""
import json
import os
import re
import shutil
import tempfile

from harness import check, scenario
from test_profile import check_schema, launches

ADD1, FLASH, TRITON = "add1", "flash_fwd_kernel", "triton_poi_fused_add_0"


def window_run(env, argv, window, path_name="w.%w.json", extra=None, rc=0, timeout=120,
               whole=False, **kwargs):
    """Runs argv with NVTXCORR_WINDOW=window; returns (run, [summary by window index]), or
    with whole=True (windows refused) (run, [the whole run's one summary]). "{dir}" in argv is
    the summaries' directory. kwargs go to env.run_ok."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-windows-")
    argv = [a.replace("{dir}", tmp) for a in argv]
    e = {"NVTXCORR_PROFILE": os.path.join(tmp, path_name), "NVTXCORR_WINDOW": window}
    e.update(extra or {})
    run = env.run_ok(argv, rc=rc, tool=False, env=e, timeout=timeout, **kwargs)
    sums = []
    for name in os.listdir(tmp):
        with open(os.path.join(tmp, name)) as f:
            sums.append(json.load(f))
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)
    if whole:
        check(len(sums) == 1 and "window" not in sums[0], f"{len(sums)} summaries")
        return run, sums
    sums.sort(key=lambda d: d["window"]["index"])
    check([d["window"]["index"] for d in sums] == list(range(1, len(sums) + 1)),
          f"window indexes {[d['window']['index'] for d in sums]}")
    for d in sums:
        if not d["gpu_time"]:  # check_schema is for summaries without GPU time
            check_schema(d)
        w = d["window"]
        check(w["start_ns"] <= w["end_ns"] and d["end_ns"] == w["end_ns"], f"window {w}")
    return run, sums


@scenario
def test_windows_profiler_api_every_path(env):
    # Three windows per path, each with exactly its launches; the triton launches made
    # outside every window are counted nowhere; the real cuProfilerStart/Stop still ran.
    for path in ("direct", "dlsym", "procaddr", "entrypoint", "runtime"):
        run, sums = window_run(env, [env.prog("scn_windows"), "api", path], "cudaProfilerApi")
        check(len(sums) == 3, f"{path}: {len(sums)} summaries")
        for k, d in enumerate(sums, 1):
            got = launches(d)
            check(got == {ADD1: k + 1, FLASH: k}, f"{path}: window {k}: {got}")
            check(d["totals"]["launches"] == 2 * k + 1, f"{path}: window {k}: {d['totals']}")
            check(d["window"]["reason"] == "cudaProfilerApi", f"{path}: {d['window']}")
        check(run.counts.get("cuProfilerStart") == 3 and run.counts.get("cuProfilerStop") == 3,
              f"{path}: the real profiler API must be called: {run.counts}")
        check(run.counts.get("cuLaunchKernel") == 20 + 9 + 6, f"{path}: {run.counts}")


@scenario
def test_windows_nvtx_range(env):
    # nvtx:<glob>: nvtxcorr as the NVTX tool (NVTX_INJECTION64_PATH, set as the library loads
    # when unset); a window per outermost "step" range, nested ranges inside it; @domain
    # selects the domain's ranges only.
    run, sums = window_run(env, [env.prog("scn_windows"), "nvtx"], "nvtx:st*p")
    check([launches(d) for d in sums] == [{ADD1: k + 1, FLASH: k} for k in (1, 2, 3)] +
          [{TRITON: 3}], f"{[launches(d) for d in sums]}\n{run.err}")
    check(all(d["window"]["reason"] == "nvtx" for d in sums), f"{[d['window'] for d in sums]}")
    _, sums = window_run(env, [env.prog("scn_windows"), "nvtx"], "nvtx:step@other")
    check([launches(d) for d in sums] == [{TRITON: 3}] and sums[0]["window"]["reason"] == "nvtx",
          f"{[(launches(d), d['window']) for d in sums]}")
    _, sums = window_run(env, [env.prog("scn_windows"), "nvtx"], "count:2,nvtx:step.inner")
    check([launches(d) for d in sums] == [{FLASH: 1}, {FLASH: 2}],
          f"{[launches(d) for d in sums]}")


@scenario
def test_windows_path_without_w(env):
    # No %w: the window number goes before the extension; CSV and text carry the window too.
    for name, form in (("w.json", "json"), ("w.csv", "csv"), ("w.txt", "text")):
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-windows-")
        env.run_ok([env.prog("scn_windows"), "api", "direct"], tool=False,
                   env={"NVTXCORR_PROFILE": os.path.join(tmp, name),
                        "NVTXCORR_WINDOW": "cudaProfilerApi"})
        stem, ext = os.path.splitext(name)
        files = sorted(os.listdir(tmp))
        check(files == [f"{stem}.{k}{ext}" for k in (1, 2, 3)], f"{form}: {files}")
        with open(os.path.join(tmp, f"{stem}.2{ext}")) as f:
            text = f.read()
        if form == "csv":
            check(re.search(r"^window,cudaProfilerApi,,2,\d+:\d+,", text, re.M), text)
        elif form == "text":
            check("window 2 (closed by cudaProfilerApi)" in text and " 5 launches" in text, text)
        for n in files:
            os.unlink(os.path.join(tmp, n))
        os.rmdir(tmp)


@scenario
def test_windows_count_and_delay(env):
    # count:2 keeps the first two windows; delay:30 (longer than the run) ignores every one.
    _, sums = window_run(env, [env.prog("scn_windows"), "api", "direct"],
                         "cudaProfilerApi,count:2")
    check([launches(d) for d in sums] == [{ADD1: 2, FLASH: 1}, {ADD1: 3, FLASH: 2}],
          f"count:2: {[launches(d) for d in sums]}")
    run, sums = window_run(env, [env.prog("scn_windows"), "api", "direct"],
                           "delay:30,cudaProfilerApi")
    check(sums == [] and "no window opened" in run.err, f"delay:30: {len(sums)}\n{run.err}")


@scenario
def test_windows_every(env):
    # every:0.2 over 2 s: back-to-back windows, the last closed by exit; together they hold
    # every launch the program made.
    run, sums = window_run(env, [env.prog("scn_windows"), "loop", "2000"], "every:0.2")
    n = int(re.search(r"launched (\d+)", run.out).group(1))
    check(8 <= len(sums) <= 12, f"{len(sums)} windows")
    check(all(d["window"]["reason"] == "every" for d in sums[:-1]) and
          sums[-1]["window"]["reason"] == "exit", f"{[d['window'] for d in sums]}")
    check(sum(d["totals"]["launches"] for d in sums) == n,
          f"windows hold {[d['totals']['launches'] for d in sums]}, program launched {n}")
    for a, b in zip(sums, sums[1:]):
        check(a["window"]["end_ns"] == b["window"]["start_ns"], f"gap: {a['window']} {b['window']}")
    _, sums = window_run(env, [env.prog("scn_windows"), "loop", "1000"], "every:0.2,count:2")
    check(len(sums) == 2 and sums[1]["window"]["reason"] == "every", f"{[d['window'] for d in sums]}")


@scenario
def test_windows_signal_threads(env):
    # SIGUSR2 20 times, each to one of 8 launching threads (landing inside launches), the
    # program waiting for each window's summary after its second signal: ten windows, each
    # closed by its signal, no launch counted twice (together at most what was launched), no
    # hang, and the program's exit status.
    run, sums = window_run(env, [env.prog("scn_windows"), "signal-threads", "{dir}"], "signal")
    n = int(re.search(r"launched (\d+)", run.out).group(1))
    check(len(sums) == 10, f"{len(sums)} windows\n{run.err}")
    counts = [d["totals"]["launches"] for d in sums]
    check(0 < sum(counts) <= n, f"windows {counts}, launched {n}")
    check(all(d["window"]["reason"] == "signal" for d in sums), f"{[d['window'] for d in sums]}")


@scenario
def test_windows_own_signal_handler(env):
    # The program's SIGUSR2 handler, set before nvtxcorr starts: one clear line, no windows
    # (one summary for the whole run), the handler runs. Set after: the program's handler wins from then on.
    run, sums = window_run(env, [env.prog("scn_windows"), "own-handler", "before"], "signal",
                           path_name="w.json", whole=True)
    check("handler ran" in run.out and sums[0]["totals"]["launches"] == 5,
          f"{run.out} {sums[0]['totals']}")
    check(len(re.findall(r"nvtxcorr: warn: .*already handles signal", run.err)) == 1, run.err)
    run, sums = window_run(env, [env.prog("scn_windows"), "own-handler", "after"], "signal")
    check("handler ran" in run.out and sums == [] and "already handles" not in run.err,
          f"{run.out} {len(sums)} {run.err}")


@scenario
def test_windows_bad_values(env):
    # A bad NVTXCORR_WINDOW: an error naming it, one summary for the whole run, program unharmed.
    for bad in ("often", "every:0", "every:x", "cudaProfilerApi,count:0", "signal,delay:-1",
                "nvtx:", "nvtx:step@", "signal,every:1"):
        tmp = tempfile.mkdtemp(prefix="nvtxcorr-windows-")
        run = env.run_ok([env.prog("scn_windows"), "api", "direct"], tool=False,
                         env={"NVTXCORR_PROFILE": os.path.join(tmp, "p.json"),
                              "NVTXCORR_WINDOW": bad})
        check(re.search(r"nvtxcorr: error: NVTXCORR_WINDOW=" + re.escape(bad), run.err),
              f"{bad}: {run.err}")
        with open(os.path.join(tmp, "p.json")) as f:
            d = json.load(f)
        check("window" not in d and d["totals"]["launches"] == 35, f"{bad}: {d['totals']}")
        os.unlink(os.path.join(tmp, "p.json"))
        os.rmdir(tmp)


@scenario
def test_windows_signal_unusable(env):
    # NVTXCORR_WINDOW_SIGNAL naming a signal a window cannot use: profile mode's own (HUP, whose
    # handler took it, and then the warning blamed the program) or one the kernel or the C
    # library raises for its own reasons (PIPE, CHLD, ABRT, by name or number): an error at
    # configuration naming it and why, one summary for the whole run (the launcher refuses it
    # before the run: windows-launcher-option).
    for bad in ("HUP", "SIGHUP", "1", "PIPE", "13", "CHLD", "17", "SIGABRT", "6"):
        run, sums = window_run(env, [env.prog("scn_windows"), "loop", "20"], "signal",
                               path_name="w.json", whole=True,
                               extra={"NVTXCORR_WINDOW_SIGNAL": bad})
        said = re.findall(rf"^nvtxcorr: error: NVTXCORR_WINDOW_SIGNAL={bad}: .+; no windows "
                          r"\(one summary for the whole run\)$", run.err, re.M)
        check(len(said) == 1 and run.err.count("\n") == 1, f"{bad}: {run.err!r}")


@scenario
def test_windows_launcher_option(env):
    # --window: a bad value, no --profile, or a signal window on a signal it cannot use (in
    # NVTXCORR_WINDOW_SIGNAL) stops before the command runs (the library's own parser, through
    # in the front end); a good one gives one summary a window.
    from test_launcher_checks import marker_command, not_run, nvtxcorr
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-windows-")
    out = os.path.join(tmp, "w.%w.json")
    for why, opts, extra in (("bad kind", ["--window", "often", "--profile", out], None),
                             ("bad length", ["--window=every:-1", "--profile", out], None),
                             ("bad count", ["--window", "signal,count:x", "--profile", out], None),
                             ("no profile", ["--window", "signal"], None),
                             ("SIGHUP", ["--window", "signal", "--profile", out],
                              {"NVTXCORR_WINDOW_SIGNAL": "HUP"})):
        r = nvtxcorr(env, *opts, *marker_command(tmp), extra=extra)
        not_run(tmp, r, why)
        check("nvtxcorr: error: --window" in r.err, f"{why}: {r.err}")
    check("--window signal: NVTXCORR_WINDOW_SIGNAL=HUP: profile mode's own handler takes "
          "SIGHUP" in r.err, r.err)
    r = nvtxcorr(env, "--window", "cudaProfilerApi,count:2", "--profile", out,
                 env.prog("scn_windows"), "api", "direct",
                 extra={"LD_LIBRARY_PATH": env.fakes, "NVTXCORR_GPU": "0"})
    check(r.rc == 0 and sorted(os.listdir(tmp)) == ["w.1.json", "w.2.json"],
          f"{r.rc} {os.listdir(tmp)} {r.err}")
    shutil.rmtree(tmp)


@scenario
def test_windows_context_rows(env):
    # Program context in window summaries: each window's `contexts` rows are that window's
    # launches (a replay of the decode graph under serve/step), adding up to its totals, not
    # the run's so far.
    run, sums = window_run(env, [env.prog("scn_context"), "decode", "3"], "nvtx:serve/step",
                           extra={"NVTX_INJECTION64_PATH": env.lib})
    check(len(sums) == 3, f"{len(sums)} windows\n{run.err}")
    graph = sums[0]["graphs"][0]["label"] if sums[0].get("graphs") else None
    for d in sums:
        rows = [(r["context"], r["label"], r["launches"]) for r in d["contexts"]]
        check(len(rows) == 1 and rows[0][0] == ["serve/step"] and rows[0][2] == 1 and
              sum(r["launches"] for r in d["contexts"]) == d["totals"]["launches"] and
              sum(r["cpu_ns"] for r in d["contexts"]) == d["totals"]["cpu_ns"],
              f"window {d['window']['index']}: rows {rows}, totals {d['totals']['launches']}, "
              f"graph {graph}")


@scenario
def test_windows_gpu_time(env):
    # GPU time per window (the fake CUPTI: a kernel takes 100 ns per character of its mangled
    # name): each window's summary has exactly its own launches' kernels, by launch label, by
    # kernel label and per kernel, adding up to its totals; the triton kernels launched between
    # windows are in none. With FAKECUPTI_KERNEL_MS every kernel runs 150 ms, so it ends after
    # its window closed and its record comes after cuProfilerStop: it still counts in its
    # window, and nothing is late.
    from test_cupti import fake_cupti, view
    mangled = {ADD1: "_Z4add1Pii", FLASH: "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params"}
    for kernel_ms in (0, 150):
        extra = {"NVTXCORR_GPU": "1", "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env)}
        if kernel_ms:
            extra["FAKECUPTI_KERNEL_MS"] = str(kernel_ms)
        # (the program sleeps 400 ms before its exit: its last kernels end meanwhile)
        run, sums = window_run(env, [env.prog("scn_windows"), "api", "direct", "400"],
                               "cudaProfilerApi", extra=extra)
        check(len(sums) == 3 and run.err == "", f"{len(sums)} windows\n{run.err}")
        dur = (lambda n: kernel_ms * 1000000) if kernel_ms else (lambda n: 100 * len(mangled[n]))
        for k, d in enumerate(sums, 1):
            want = {ADD1: (k + 1, (k + 1) * dur(ADD1)), FLASH: (k, k * dur(FLASH))}
            what = f"FAKECUPTI_KERNEL_MS={kernel_ms}, window {k}"
            check(d["gpu_time"] is True and d["gpu_time_note"] is None,
                  f"{what}: {d['gpu_time']} {d['gpu_time_note']}")
            check(view(d["labels"]) == want and view(d["kernel_labels"]) == want,
                  f"{what}: by launch {view(d['labels'])}, by kernel "
                  f"{view(d['kernel_labels'])}, want {want}")
            got = {e["name"]: (e["gpu_kernels"], e["gpu_ns"]) for e in d["kernels"]
                   if e["gpu_kernels"]}
            check(got == {mangled[n]: v for n, v in want.items()}, f"{what}: kernels {got}")
            t = d["totals"]
            check(t["gpu_kernels"] == 2 * k + 1 and t["gpu_ns"] == sum(v[1] for v in want.values())
                  and t["gpu_uncorrelated_kernels"] == 0, f"{what}: totals {t}")


@scenario
def test_windows_gpu_work_late(env):
    # A kernel of window 1 runs 3.5 s (FAKECUPTI_KERNEL_MS=3500:1), longer than its window's
    # helper waits for it (about a second): window 1 is written without it, and it comes in
    # while a later window is counted; there it is counted in no window, and that window's
    # gpu_time_note says so, once. Nothing is lost or doubled: the windows' kernels and the
    # late one are the windows' launches.
    from test_cupti import fake_cupti
    extra = {"NVTXCORR_GPU": "1", "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env),
             "FAKECUPTI_KERNEL_MS": "3500:1"}
    run, sums = window_run(env, [env.prog("scn_windows"), "loop", "5000"], "every:1",
                           extra=extra)
    check(len(sums) >= 5 and run.err == "", f"{len(sums)} windows\n{run.err}")
    notes = [(d["window"]["index"], d["gpu_time_note"]) for d in sums if d["gpu_time_note"]]
    late = [int(re.match(r"(\d+) GPU operations of earlier windows came in after", n).group(1))
            for _, n in notes]
    check(late == [1] and notes[0][0] > 1, f"notes {notes}")
    counted = sum(d["totals"]["gpu_kernels"] for d in sums)
    launched = sum(d["totals"]["launches"] for d in sums)
    check(counted + 1 == launched, f"{counted} GPU operations counted, 1 late, {launched} launches")
    check(sums[0]["totals"]["gpu_kernels"] == sums[0]["totals"]["launches"] - 1,
          f"window 1: {sums[0]['totals']}")
