"""Profile mode's files against a hostile host: a file-size limit, a full disk, a program that
closes every descriptor and reuses the numbers, a signal while threads write the trace or while
nvtxcorr initialises, kernel names that are not UTF-8, a path too long after expansion, and
CUPTI calls that never return. In each the program keeps its own exit status and output, and
what nvtxcorr leaves on disk is valid or absent (tests/e2e/scenarios/scn_io.c)."""
import contextlib
import csv
import glob
import io
import json
import os
import re
import signal
import shutil
import subprocess
import tempfile
import time

from harness import Skip, check, lift_memory_limit, load_trace, scenario, trace_events


def io_run(env, args, extra, limit_kb=None, timeout=120, preload_value=None, tool=False):
    """scn_io ARGS in profile mode; under `ulimit -f limit_kb` when given (the shell then
    execs the program, so its status is the program's)."""
    argv = [env.prog("scn_io"), *args]
    if limit_kb is not None:
        argv = ["sh", "-c", f'ulimit -f {limit_kb} && exec "$0" "$@"', *argv]
    return env.run(argv, tool=tool, env=extra, timeout=timeout, preload_value=preload_value)


def messages(run, what):
    return re.findall(rf"^nvtxcorr: error: .*{what}.*$", run.err, re.M)


def strict_json(path):
    """The file as JSON, read as UTF-8 strictly (a byte that is not UTF-8 fails)."""
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def leftovers(tmp):
    return [n for n in os.listdir(tmp) if "nvtxcorr-tmp" in n]


@scenario
def test_file_size_limit(env):
    """Under `ulimit -f`, nvtxcorr's writes never raise SIGXFSZ (which kills the program,
    status 153 in a shell): the trace stops at the limit, says so once, and stays valid JSON;
    a summary that does not fit is removed and printed to stderr instead. The program's own
    writes past the limit still get SIGXFSZ, as without nvtxcorr."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    trace, prof = os.path.join(tmp, "t.json"), os.path.join(tmp, "p.json")
    bare = io_run(env, ["loop", "20000", "3"], {}, limit_kb=64, preload_value="")
    check(bare.rc == 3, f"without nvtxcorr: rc {bare.rc}")
    run = io_run(env, ["loop", "20000", "3"], {"NVTXCORR_TRACE": trace, "NVTXCORR_PROFILE": prof},
                 limit_kb=64)
    check(run.rc == 3, f"trace at the limit: rc {run.rc} (-25: SIGXFSZ), expected 3\n{run.err}")
    said = messages(run, "trace stopped: file size limit")
    check(len(said) == 1 and run.err.count("\n") == 1, f"one message expected: {run.err!r}")
    events = load_trace(trace)
    check(100 < len(events) < 20000 and os.path.getsize(trace) <= 64 * 1024,
          f"{len(events)} events, {os.path.getsize(trace)} bytes")
    check(strict_json(prof)["totals"]["launches"] == 20000, "the summary fits and is whole")

    prof2 = os.path.join(tmp, "small.json")
    run = io_run(env, ["loop", "2000", "3"], {"NVTXCORR_PROFILE": prof2}, limit_kb=1)
    check(run.rc == 3, f"summary past the limit: rc {run.rc}, expected 3\n{run.err}")
    check(len(messages(run, "small.json: write failed: file size limit")) == 1, run.err)
    check(re.search(r"^add1 .* 2000 ", run.err, re.M), f"the table on stderr: {run.err}")
    check(not os.path.exists(prof2) and not leftovers(tmp), f"left behind: {os.listdir(tmp)}")
    trace2 = os.path.join(tmp, "small-trace.json")  # not even the trace's head fits
    run = io_run(env, ["loop", "200", "3"], {"NVTXCORR_TRACE": trace2}, limit_kb=1)
    check(run.rc == 3 and len(messages(run, "trace stopped: .*nothing fitted")) == 1, run.err)
    check(not os.path.exists(trace2), "an empty trace was left behind")

    own = ["own-write", os.path.join(tmp, "own")]
    bare = io_run(env, own, {}, limit_kb=64, preload_value="")
    run = io_run(env, own, {"NVTXCORR_TRACE": os.path.join(tmp, "own.json")}, limit_kb=64)
    check(bare.rc == -signal.SIGXFSZ and run.rc == bare.rc,
          f"the program's own write past the limit: rc {run.rc}, without nvtxcorr {bare.rc}")


@contextlib.contextmanager
def tiny_tmpfs(size="64k"):
    if os.geteuid() != 0:
        raise Skip("needs root to mount a 64 KiB tmpfs for a full disk")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-full-")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", tmp],
                       capture_output=True, text=True)
    if p.returncode != 0:
        os.rmdir(tmp)
        raise Skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield tmp
    finally:
        subprocess.run(["umount", tmp])
        os.rmdir(tmp)


@scenario
def test_full_disk(env):
    """ENOSPC: the trace says once that it stopped and why and stays valid; a summary that
    does not fit leaves no part behind (written to a temporary name, renamed into place only
    when whole) and is printed to stderr instead."""
    with tiny_tmpfs() as tmp:
        trace = os.path.join(tmp, "t.json")
        run = io_run(env, ["loop", "20000", "3"], {"NVTXCORR_TRACE": trace})
        check(run.rc == 3, f"rc {run.rc}\n{run.err}")
        check(len(messages(run, "t.json: trace stopped: no space left on device")) == 1 and
              run.err.count("\n") == 1, f"one message expected: {run.err!r}")
        check(100 < len(load_trace(trace)) < 20000, "trace not valid")
        os.unlink(trace)
        fd = os.open(os.path.join(tmp, "filler"), os.O_WRONLY | os.O_CREAT)
        with contextlib.suppress(OSError):  # until the disk is full
            while os.write(fd, b"x" * 512):
                pass
        os.close(fd)
        prof = os.path.join(tmp, "p.json")
        run = io_run(env, ["loop", "100", "0"], {"NVTXCORR_PROFILE": prof})
        check(run.rc == 0, f"rc {run.rc}\n{run.err}")
        check(len(messages(run, "p.json: write failed: no space left on device; the part "
                                "written was removed")) == 1, run.err)
        check(re.search(r"^add1 .* 100 ", run.err, re.M), f"the table on stderr: {run.err}")
        check(sorted(os.listdir(tmp)) == ["filler"], f"left behind: {os.listdir(tmp)}")


@scenario
def test_trace_never_writes_into_the_programs_files(env):
    """A program that closes every descriptor >= 3 after its first launches and opens its own
    data file (which gets the trace's old number) keeps exactly its data: nvtxcorr checks that
    the descriptor is still its file (device and inode) before each write, says once that the
    trace stopped, and closes nothing that is not its own."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    data, trace, prof = (os.path.join(tmp, n) for n in ("data", "t.json", "p.json"))
    run = io_run(env, ["closefds", data, "3000"], {"NVTXCORR_TRACE": trace,
                                                   "NVTXCORR_PROFILE": prof})
    check(run.rc == 0 and "wrote 4088" in run.out, f"rc {run.rc}\n{run.out}\n{run.err}")
    with open(data, "rb") as f:
        got = f.read()
    want = bytes(ord("a") + i % 26 for i in range(4088))
    check(got == want, f"the program's data file holds {len(got)} bytes, not its 4088: "
          f"{got[:80]!r}")
    check(len(messages(run, "t.json: trace stopped: its descriptor was closed")) == 1 and
          run.err.count("\n") == 1, f"one message expected: {run.err!r}")
    with open(trace) as f:
        events = trace_events(f.read(), cut=True)  # stopped, not closed: as after SIGKILL
    check(len(events) > 1000, f"{len(events)} events before the descriptor was taken")
    check(strict_json(prof)["totals"]["launches"] == 9000, "summary")


@scenario
def test_trace_directory_removed(env):
    """The trace's directory removed while the program launches (a cleanup job, rm -rf of a
    run's output): the file has no name left, so the trace stops at its next page and says
    once why, instead of filling a file nobody can read up to its cap; the program runs on
    and exits with its own status."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    trace = os.path.join(out, "t.json")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NVTXCORR", "NVTX_"))}
    e.update({"LD_LIBRARY_PATH": env.fakes, "NVTXCORR": "1", "NVTXCORR_GPU": "0",
              "LD_PRELOAD": ":".join(filter(None, [env.preload_first, env.lib])),
              "NVTXCORR_TRACE": trace})
    # until-gone: launches until `out` is gone (or 60 s), then 20,000 more, then returns 7
    p = subprocess.Popen([env.prog("scn_io"), "until-gone", out, "20000", "7"], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lift_memory_limit if env.preload_first else None)
    deadline = time.time() + 30
    while not os.path.exists(trace) and time.time() < deadline and p.poll() is None:
        time.sleep(0.01)  # polls the state, bounded
    exists = os.path.exists(trace)
    shutil.rmtree(out, ignore_errors=True)
    try:
        stdout, stderr = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError("hung after its trace's directory was removed") from None
    check(exists, f"the trace was never created: rc {p.returncode}\n{stderr}")
    check(p.returncode == 7, f"rc {p.returncode}, expected 7\n{stdout}\n{stderr}")
    said = re.findall(r"^nvtxcorr: error: .*t\.json: trace stopped: the file was removed", stderr,
                      re.M)
    check(len(said) == 1 and stderr.count("\n") == 1, f"one message expected: {stderr!r}")
    shutil.rmtree(tmp)


@scenario
def test_trace_nothing_after_its_end(env):
    """A SIGTERM ends a process of 16 launching threads: no event may land after the events'
    closing ']' (and the top-level fields and '}' that follow it). A slow disk
    (tests/e2e/scenarios/slow_io.c: each 64 KiB buffer write waits 20 ms, the close 100 ms)
    keeps threads' writes in flight while the file is ended. 8 trials; every
    other one at full speed, where threads are still formatting events into their buffers when
    the closing flush reads them (a race TSan, in e2e.tsan, saw in the flush's padding). The
    SIGTERM comes 20 ms after the threads start: they are all launching by then, and a longer
    run only made a longer trace to parse (65 MB at full speed after 50 ms)."""
    slow = env.prog("libslow_io.so")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    bad = []
    for i in range(8):
        trace = os.path.join(tmp, f"t{i}.json")
        run = io_run(env, ["threads-term", "16", "20"],
                     {"NVTXCORR_TRACE": trace, "SLOWIO_WRITE_MIN": "65536",
                      "SLOWIO_WRITE_US": "20000", "SLOWIO_CLOSE_MS": "100"},
                     preload_value=f"{slow}:{env.lib}" if i % 2 == 0 else None)
        check(run.rc == -signal.SIGTERM, f"trial {i}: rc {run.rc}\n{run.err}")
        with open(trace, "rb") as f:
            text = f.read()
        end = text.find(b"\n]")  # events are written ",\n{...}": no event has "\n]"
        if end < 0 or b",\n{" in text[end:] or not text.endswith(b"}\n"):
            bad.append((i, len(text) - end if end >= 0 else "no end"))
        else:
            json.loads(text)
        os.unlink(trace)
    check(not bad, f"{len(bad)} of 8 trials wrote past the closing ']': (trial, bytes) {bad}")


ODD = {"bad_\u00ff\u00fe_kernel", "lone_\u0080_continuation", "overlong_\u00c0\u00af_slash",
       "surrogate_\u00ed\u00a0\u0080_half", "control_\u0001\u001b[31m_red", "fine_été_€",
       "c1_\u009b_csi"}


@scenario
def test_names_not_utf8(env):
    """Kernel names are whatever bytes the program gave the driver: the JSON summary and the
    trace stay valid UTF-8 JSON (a byte that is not UTF-8 is written as \\u00XX, well-formed
    UTF-8 as it is), the CSV stays UTF-8 (U+FFFD) and the text table one line per label."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    for ext in ("json", "csv", "txt"):
        e = {"NVTXCORR_PROFILE": os.path.join(tmp, f"p.{ext}")}
        if ext == "json":
            e["NVTXCORR_TRACE"] = os.path.join(tmp, "trace.json")
            e["NVTXCORR_TRACE_FORMAT"] = "chrome"  # the raw names are on its launch events
        run = io_run(env, ["names"], e)
        check(run.rc == 0 and run.err == "", f"{ext}: rc {run.rc}\n{run.err}")
    d = strict_json(os.path.join(tmp, "p.json"))
    names = {k["name"] for k in d["kernels"]}
    check(names == ODD, f"kernel names {sorted(names)}")
    check(sum(k["launches"] for k in d["kernels"]) == 2 * len(ODD), "launches")
    trace = load_trace(os.path.join(tmp, "trace.json"))
    check({e["args"]["kernel"] for e in trace if e["ph"] == "X" and "kernel" in e["args"]} == ODD,
          "trace names")
    with open(os.path.join(tmp, "p.csv"), "rb") as f:
        rows = list(csv.DictReader(io.StringIO(f.read().decode("utf-8"))))
    kernels = {r["name"] for r in rows if r["section"] == "kernel"}
    check(len(rows) == 2 * len(ODD) and "bad_\ufffd\ufffd_kernel" in kernels and "fine_été_€" in kernels
          and "control_\u0001\u001b[31m_red" in kernels, f"CSV names {sorted(kernels)}")
    with open(os.path.join(tmp, "p.txt"), "rb") as f:
        text = f.read().decode("utf-8")
    check(not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", text),
          f"control characters in the table {text!r}")
    check(len(text.splitlines()) == 2 + len(ODD) and "bad_??_kernel" in text, text)


@scenario
def test_path_too_long_after_expansion(env):
    """A path that %q{VAR} makes longer than PATH_MAX loses nothing: the summary goes to
    stderr, as for every path that cannot be written."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    run = io_run(env, ["loop", "10", "0"], {"NVTXCORR_PROFILE": os.path.join(tmp, "%q{LONG}.json"),
                                           "LONG": "a" * 5000})
    check(run.rc == 0, f"rc {run.rc}")
    check(re.search(r"^nvtxcorr: error: .*%q\{LONG\}\.json: path too long after expansion; "
                    r"summary printed to stderr", run.err, re.M), run.err)
    check(re.search(r"^add1 .* 10 ", run.err, re.M), f"the table on stderr: {run.err}")
    check(os.listdir(tmp) == [], f"{os.listdir(tmp)}")


@scenario
def test_signal_during_initialisation(env):
    """A SIGTERM that arrives while nvtxcorr initialises (the NVTX tool takes 500 ms to load)
    ends the process as without nvtxcorr, and still leaves the summary and a whole trace."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    trace, prof = os.path.join(tmp, "t.json"), os.path.join(tmp, "p.json")
    slow = {"NVTXREC_INIT_SLEEP_MS": "500"}
    bare = io_run(env, ["init-term"], slow, preload_value="")
    run = io_run(env, ["init-term"], {**slow, "NVTXCORR_TRACE": trace, "NVTXCORR_PROFILE": prof,
                                      "NVTXREC_INIT_MARK": os.path.join(tmp, "loading")},
                 tool=True)
    check(bare.rc == -signal.SIGTERM and run.rc == bare.rc, f"rc {run.rc}, bare {bare.rc}")
    check(os.path.exists(prof), f"no summary: {os.listdir(tmp)}\n{run.err}")
    check(strict_json(prof)["totals"]["launches"] == 0, "summary")
    events = load_trace(trace)
    check(events[0]["name"] == "process_name", f"{events}")


@scenario
def test_trace_padding_trimmed(env):
    """The blank padding that keeps the trace's pages whole while it is written (so that a
    SIGKILLed trace ends on a whole event: e2e.trace-sigkill) is squeezed out when the file is
    closed: the demo with GPU time made 450 KB of which 79 KB were events."""
    fake = os.path.join(env.fakes, "libfake_cupti.so")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    for extra, prog in (({"NVTXCORR_CUPTI_LIBRARY": fake, "NVTXCORR_GPU": "1",
                          "NVTXCORR_PROFILE": os.path.join(tmp, "p.json")},
                         os.path.join(env.build, "tests", "demo", "demo_infer")),
                        ({}, env.prog("scn_io"))):
        if "NVTXCORR_CUPTI_LIBRARY" in extra and not os.path.exists(fake):
            continue  # built without CUPTI headers
        trace = os.path.join(tmp, "t.json")
        run = env.run([prog, "loop", "3000", "0"] if not extra else [prog], tool=False,
                      env={**extra, "NVTXCORR_TRACE": trace})
        check(run.rc == 0 and run.err == "", f"{os.path.basename(prog)}: {run.rc} {run.err}")
        with open(trace) as f:
            text = f.read()
        events = json.loads(text)
        padding = sum(len(m) for m in re.findall(r" {4,}", text))
        check(padding == 0, f"{os.path.basename(prog)}: {padding} bytes of padding in "
              f"{len(text)} ({len(events)} events)")
        os.unlink(trace)


def cupti_hang_run(env, tmp, name, args, hang, extra=None):
    fake = os.path.join(env.fakes, "libfake_cupti.so")
    if not os.path.exists(fake):
        raise Skip("built without CUPTI headers: no fake CUPTI")
    prof = os.path.join(tmp, f"{name}.json")
    e = {"NVTXCORR_GPU": "1", "NVTXCORR_CUPTI_LIBRARY": fake, "FAKECUPTI_HANG": hang,
         "NVTXCORR_PROFILE": prof, **(extra or {})}
    try:
        run = io_run(env, args, e, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{name}: FAKECUPTI_HANG={hang} hung the program (killed after "
                             "60 s)") from None
    check(os.path.exists(prof), f"{name}: no summary\n{run.err}")
    return run, strict_json(prof)


@scenario
def test_cupti_hang_at_start(env):
    """A cuptiActivityEnable (or cuptiActivityRegisterCallbacks) that never returns, at the
    first launch: CUPTI's calls run on a thread of their own, waited for 5 s; the program then
    launches on without GPU time and exits with its own status and output, and the summary
    says why."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    run, d = cupti_hang_run(env, tmp, "enable", ["gpu", "50"], "enable")
    check(run.rc == 5 and run.out == "done\n", f"rc {run.rc}, stdout {run.out!r}")
    check(d["gpu_time"] is False and "did not start within 5 s" in d["gpu_time_note"] and
          "abandoned" in d["gpu_time_note"], f"note {d['gpu_time_note']!r}")
    check(d["totals"]["launches"] == 100, f"{d['totals']}")
    check(len(re.findall(r"^nvtxcorr: warn: GPU time unavailable: CUPTI did not start",
                         run.err, re.M)) == 1 and run.err.count("\n") == 1, run.err)


@scenario
def test_cupti_hang_at_exit(env):
    """A cuptiActivityFlushAll that never returns, at exit (main returns) and on SIGTERM, and a
    CUPTI whose buffer delivery never ends (cuptiActivityGetNumDroppedRecords stuck on its own
    thread): the program ends in bounded time with its own status and output, the summary keeps
    the GPU time delivered so far and says what was abandoned."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-io-")
    small = {"FAKECUPTI_BUFFER_RECORDS": "10"}  # buffers complete during the run too
    run, d = cupti_hang_run(env, tmp, "flush", ["gpu", "50"], "flush", small)
    check(run.rc == 5 and run.out == "done\n" and run.err == "", f"rc {run.rc} {run.out!r} "
          f"{run.err!r}")
    note = d["gpu_time_note"] or ""
    check(d["gpu_time"] is True and "cuptiActivityFlushAll did not return" in note and
          "abandoned" in note, f"note {note!r}")
    check(0 < d["totals"]["gpu_kernels"] <= 100 and d["totals"]["launches"] == 100, f"{d['totals']}")
    run, d = cupti_hang_run(env, tmp, "term", ["term", "50"], "flush", small)
    check(run.rc == -signal.SIGTERM, f"SIGTERM: rc {run.rc}")
    check("could not be flushed within 3 s" in (d["gpu_time_note"] or ""), f"{d['gpu_time_note']}")
    run, d = cupti_hang_run(env, tmp, "dropped", ["gpu", "50"], "dropped",
                            {**small, "FAKECUPTI_ASYNC_MS": "1"})
    check(run.rc == 5 and run.out == "done\n", f"rc {run.rc} {run.out!r}")
    check("did not give back every buffer" in (d["gpu_time_note"] or ""), f"{d['gpu_time_note']}")
