"""OTLP/HTTP push (NVTXCORR_OTLP_ENDPOINT, docs/profile.md "Fleet metrics"): a receiver in the
test decodes every request (OTLP's JSON encoding) and checks every data point against the
run's window summaries; a receiver that is down, hangs or answers 500 leaves the program's
results and timing unharmed, and is said once."""
import http.server
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time

from harness import check, scenario
from test_metrics import fake_cupti_env, sums_by_label


class Receiver:
    """An OTLP/HTTP receiver on a free loopback port: mode "ok" (200), "500", "hang" (reads
    nothing, answers nothing until closed), or "down" (nothing listens)."""

    def __init__(self, mode, marks=None):
        """marks: a directory where each request answered leaves push.N.json (the scenario's
        loop-windows waits for them)."""
        self.mode, self.requests, self.release = mode, [], threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                if outer.mode == "hang":
                    outer.requests.append(None)
                    outer.release.wait(30)
                    return
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests.append((self.path, self.headers["Content-Type"], body))
                self.send_response(200 if outer.mode == "ok" else 500)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if marks:
                    open(os.path.join(marks, f"push.{len(outer.requests)}.json"), "w").close()

            def log_message(self, *args):
                pass

        if mode == "down":
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            self.server = None
        else:
            self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            self.server.daemon_threads = True
            self.port = self.server.server_address[1]
            threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        if self.server:
            self.server.shutdown()
            self.server.server_close()


def otlp_run(env, mode, loop_ms="3000", every="0.4", pushes=None):
    """The windows scenario's loop under NVTXCORR_OTLP_ENDPOINT: for loop_ms, or with pushes
    until the receiver has answered that many."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-otlp-")
    marks = tempfile.mkdtemp(prefix="nvtxcorr-otlp-pushes-")
    rec = Receiver(mode, marks)
    try:
        e = dict(fake_cupti_env(env), NVTXCORR_PROFILE=os.path.join(tmp, "w.%w.json"),
                 NVTXCORR_WINDOW=f"every:{every}",
                 NVTXCORR_OTLP_ENDPOINT=f"http://127.0.0.1:{rec.port}")
        t0 = time.monotonic()
        loop = ["loop-windows", marks, str(pushes)] if pushes else ["loop", loop_ms]
        run = env.run_ok([env.prog("scn_windows"), *loop], tool=False, env=e)
        elapsed = time.monotonic() - t0
        sums = []
        for name in os.listdir(tmp):
            with open(os.path.join(tmp, name)) as f:
                sums.append(json.load(f))
        sums.sort(key=lambda d: d["window"]["index"])
        return run, sums, rec.requests, elapsed
    finally:
        rec.close()
        shutil.rmtree(tmp)
        shutil.rmtree(marks)


def points(body):
    """{(metric, label, category, view): value} of one request, and its resource and times."""
    d = json.loads(body)
    rm = d["resourceMetrics"]
    check(len(rm) == 1 and len(rm[0]["scopeMetrics"]) == 1, f"{d}")
    res = {a["key"]: a["value"]["stringValue"] for a in rm[0]["resource"]["attributes"]}
    out, times = {}, set()
    for m in rm[0]["scopeMetrics"][0]["metrics"]:
        s = m["sum"]
        check(s["aggregationTemporality"] == 2 and s["isMonotonic"] is True, f"{m['name']}: {s}")
        for p in s["dataPoints"]:
            a = {x["key"]: x["value"]["stringValue"] for x in p["attributes"]}
            key = (m["name"], a.get("label", a.get("graph")), a.get("category"), a.get("view"))
            check(key not in out, f"a point twice: {key}")
            v = p.get("asDouble")
            out[key] = round(v * 1e9) if v is not None else int(p["asInt"])
            times.add((int(p["startTimeUnixNano"]), int(p["timeUnixNano"])))
    check(len(times) == 1, f"points of one push at several times: {times}")
    return out, res, times.pop()


@scenario
def test_otlp_push_every_window(env):
    # Every window closed by every: is pushed once, from the helper, as it closes, in order:
    # push k holds the sums of windows 1..k exactly (GPU time by launch and by kernel label,
    # launches, CPU time), cumulative (one start time, the process's), at growing times; the
    # exit's window is in the summary and not pushed (nor one whose push the exit cut short:
    # the program runs until five pushes were answered, a window may close meanwhile).
    run, sums, reqs, _ = otlp_run(env, "ok", every="0.3", pushes=5)
    check(run.err == "" and len(sums) >= 6, f"{len(sums)} windows\n{run.err}")
    check(5 <= len(reqs) <= len(sums) - 1, f"{len(reqs)} pushes for {len(sums)} windows")
    starts, last_t = set(), 0
    for k, (path, ctype, body) in enumerate(reqs):
        check(path == "/v1/metrics" and ctype == "application/json", f"{path} {ctype}")
        got, res, (start, t) = points(body)
        check(res["service.name"] == "nvtxcorr" and res["process.executable.name"] == "scn_windows"
              and res["process.pid"].isdigit(), f"{res}")
        starts.add(start)
        check(t > last_t and start < t, f"push {k + 1}: times {start} {t} after {last_t}")
        last_t = t
        upto = sums[:k + 1]
        want = {}
        for name, view, section, field in (("nvtxcorr.gpu.time", "launch", "labels", "gpu_ns"),
                                           ("nvtxcorr.gpu.time", "kernel", "kernel_labels",
                                            "gpu_ns"),
                                           ("nvtxcorr.launches", None, "labels", "launches"),
                                           ("nvtxcorr.cpu.time", None, "labels", "cpu_ns")):
            for (label, cat), v in sums_by_label(upto, section, field).items():
                want[(name, label, cat, view)] = v
        want[("nvtxcorr.gpu.dropped_records", None, None, None)] = 0
        want[("nvtxcorr.gpu.uncorrelated", None, None, None)] = sum(
            d["totals"]["gpu_uncorrelated_kernels"] for d in upto)
        check(got == want, f"push {k + 1}:\n{got}\nwindows 1..{k + 1}:\n{want}")
    check(len(starts) == 1, f"start times {starts}")


@scenario
def test_otlp_failures_harmless(env):
    # A collector that is down, answers 500 or hangs: the program launches as fast as with one
    # that answers (its loop count within a fifth), every launch is in exactly one window's
    # summary, the exit is not held up (the hanging push gives up when the exit comes), and the
    # failure is said once, on one line; a 500 is retried once. (3 s of windows of 0.4 s: the
    # hanging collector's first push gives up after its 2 s, before the exit.)
    base, bsums, _, belapsed = otlp_run(env, "ok")
    nbase = int(re.search(r"launched (\d+)", base.out).group(1))
    for mode in ("down", "500", "hang"):
        run, sums, reqs, elapsed = otlp_run(env, mode)
        n = int(re.search(r"launched (\d+)", run.out).group(1))
        check(sum(d["totals"]["launches"] for d in sums) == n and len(sums) >= 1,
              f"{mode}: windows hold {[d['totals']['launches'] for d in sums]}, launched {n}")
        check(n >= nbase * 0.8, f"{mode}: {n} launches, {nbase} with a collector that answers")
        check(elapsed < belapsed + 1.0, f"{mode}: the run took {elapsed:.2f} s, {belapsed:.2f} s "
              "with a collector that answers")
        check(run.err.count("\n") == 1 and "NVTXCORR_OTLP_ENDPOINT=" in run.err and
              "said once" in run.err, f"{mode}: {run.err!r}")
        if mode == "500":
            check(len(reqs) == 2 * (len(sums) - 1), f"500: {len(reqs)} requests, "
                  f"{len(sums) - 1} windows pushed: {[d['window'] for d in sums]}")
        if mode == "hang":
            check(1 <= len(reqs) <= len(sums), f"hang: {len(reqs)} requests, {len(sums)} windows")
