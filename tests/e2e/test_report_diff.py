"""`nvtxcorr report --diff A B`: exact numbers on crafted summaries, each comparability
warning, the --threshold exit status, a file against itself, and the summary's own fields it
relies on (label_table, rank) from a real run. Hostile sides (issue 31, case 12): counts past
what a uint64_t holds, a `window` that is not an object, Kineto traces in a side's directory:
one line per file, never a traceback, and the files that can be compared still are."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from harness import check, scenario, write_json
from test_profile import launcher

S = 1000 * 1000 * 1000


def entry(label, launches, cpu_ns, gpu_ns=None, kernel=False):
    e = {"label": label, "category": None, "launches": launches, "graph_launches": 0,
         "errors": 0, "capture_launches": 0, "cpu_ns": cpu_ns, "cpu_min_ns": 1,
         "cpu_max_ns": cpu_ns, "cpu_histogram": [[8, launches]] if launches else [],
         "gpu_ns": gpu_ns, "gpu_kernels": launches if gpu_ns is not None else None,
         "gpu_min_ns": 1 if gpu_ns is not None else None,
         "gpu_max_ns": gpu_ns, "gpu_histogram": None}
    if kernel:
        e.update(name="_Z" + label, function=label)
    return e


def summary(rows, pid=1, length=S, gpu=False, table=None, rank=None, window=None):
    """rows: {label: (launches, cpu_ns, gpu_ns)}."""
    d = {"nvtxcorr_profile": 1, "pid": pid, "host": "h", "command": ["app"],
         "start_ns": 10 * S, "end_ns": 10 * S + length, "label_table": table, "rank": rank,
         "gpu_time": gpu, "gpu_time_note": None,
         "labels": [entry(k, n, c, g if gpu else None) for k, (n, c, g) in rows.items()],
         "kernels": [entry(k, n, c, g if gpu else None, True) for k, (n, c, g) in rows.items()]}
    if window:
        d["window"] = {"index": window, "reason": "every", "start_ns": 10 * S,
                       "end_ns": 10 * S + length}
    return d



def diff(env, *args):
    p = subprocess.run([launcher(env), "report", "--diff", *args], capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def table(out):
    """label -> the row's columns after the label."""
    return {m.group(1): m.group(2).split()
            for m in re.finditer(r"^(\S+)\s+(\d+\s+\d+\s+.*)$", out, re.M)}


@scenario
def test_report_diff_exact(env):
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-diff-")
    a = write_json(tmp, "a.json", summary({"matmul": (100, 1000000, 0), "norm": (50, 100000, 0),
                                      "gone": (5, 5000, 0)}))
    b = write_json(tmp, "b.json", summary({"matmul": (100, 1500000, 0), "norm": (50, 90000, 0),
                                      "new": (10, 20000, 0)}))
    rc, out, err = diff(env, a, b)
    check(rc == 0 and err == "", f"{rc} {err}")
    rows = table(out)
    # matmul: 1.00 ms -> 1.50 ms (+50.0%), mean 10.0 us -> 15.0 us (+50.0%)
    check(rows["matmul"] == ["100", "100", "1.00", "ms", "1.50", "ms", "+50.0%", "10.0", "us",
                             "15.0", "us", "+50.0%"], f"{rows.get('matmul')}\n{out}")
    check(rows["norm"][6] == "-10.0%" and rows["norm"][-1] == "-10.0%", f"{rows['norm']}")
    check(rows["new"][:2] == ["0", "10"] and rows["new"][6] == "new", f"{rows['new']}")
    check(rows["gone"][:2] == ["5", "0"] and rows["gone"][6] == "-100.0%", f"{rows['gone']}")
    order = [k for k in re.findall(r"^(\S+)\s+\d", out, re.M)]
    check(order == ["matmul", "new", "norm", "gone"], f"sorted by absolute change: {order}")
    # the same by kernel label, and a file against itself: no change, threshold 0 passes
    rc, out, _ = diff(env, a, b, "--by", "kernel")
    check(rc == 0 and table(out)["matmul"][6] == "+50.0%" and "kernel label" in out, out)
    rc, out, err = diff(env, a, a, "--threshold", "0")
    check(rc == 0 and err == "" and all(r[6] == "+0.0%" and r[-1] == "+0.0%"
                                        for r in table(out).values()), f"{rc} {err}\n{out}")
    # --threshold: matmul is 50% slower per launch
    rc, _, err = diff(env, a, b, "--threshold", "49")
    check(rc == 1 and re.search(r"nvtxcorr: error: --threshold 49: matmul is 50.0% slower", err)
          and "norm" not in err, f"{rc} {err}")
    rc, _, err = diff(env, a, b, "--threshold", "50")
    check(rc == 0, f"{rc} {err}")
    # sets: a directory, a glob, a list: two processes on each side, merged
    os.mkdir(os.path.join(tmp, "A"))
    write_json(tmp, "A/1.json", summary({"matmul": (100, 1000000, 0)}, pid=1))
    write_json(tmp, "A/2.json", summary({"matmul": (100, 1000000, 0)}, pid=2))
    b1 = write_json(tmp, "b1.json", summary({"matmul": (100, 1200000, 0)}, pid=3))
    b2 = write_json(tmp, "b2.json", summary({"matmul": (100, 1200000, 0)}, pid=4))
    for side_b in (f"{b1},{b2}", os.path.join(tmp, "b[12].json")):
        rc, out, err = diff(env, os.path.join(tmp, "A"), side_b)
        check(rc == 0 and err == "" and table(out)["matmul"][:2] == ["200", "200"] and
              table(out)["matmul"][6] == "+20.0%", f"{side_b}: {rc} {err}\n{out}")
    shutil.rmtree(tmp)


@scenario
def test_report_diff_warnings(env):
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-diff-")
    base = {"matmul": (100, 1000000, 400000)}
    a = write_json(tmp, "a.json", summary(base, gpu=True, table="00000000000000aa", rank="0"))
    cases = [
        ("processes", [summary(base, pid=7, gpu=True, table="00000000000000aa", rank="0"),
                       summary(base, pid=8, gpu=True, table="00000000000000aa", rank="0")],
         r"different process counts: A has 1, B 2"),
        ("ranks", [summary(base, gpu=True, table="00000000000000aa", rank="1")],
         r"different ranks: A 0, B 1"),
        ("gpu", [summary(base, gpu=False, table="00000000000000aa", rank="0")],
         r"GPU time on one side only \(A\): comparing CPU time"),
        ("table", [summary(base, gpu=True, table="00000000000000bb", rank="0")],
         r"different label tables"),
        ("length", [summary({"matmul": (400, 4000000, 1600000)}, gpu=True,
                            table="00000000000000aa", rank="0", length=4 * S, window=1)],
         r"windows of different length \(A 1.00 s, B 4.00 s\): comparing per second"),
    ]
    for why, ds, warning in cases:
        paths = [write_json(tmp, f"{why}{i}.json", d) for i, d in enumerate(ds)]
        rc, out, err = diff(env, a, ",".join(paths))
        check(rc == 0 and re.search(r"^nvtxcorr: warn: --diff: " + warning, err, re.M),
              f"{why}: {rc} {err}")
        check(len(err.splitlines()) == 1, f"{why}: one warning expected: {err}")
        if why == "length":  # the same rate and per-launch time: no change
            r = table(out)["matmul"]
            check("GPU time per second" in out and r[6] == "+0.0%" and r[-1] == "+0.0%", out)
        if why == "gpu":
            check("diff of CPU time" in out, out)
    rc, out, err = diff(env, a, a)
    check(rc == 0 and err == "" and "diff of GPU time" in out, f"{err}\n{out}")
    # bad input: not two sides, a side with nothing
    rc, _, err = diff(env, a)
    check(rc == 2 and "needs two sides" in err, err)
    rc, _, err = diff(env, a, os.path.join(tmp, "none*.json"))
    check(rc == 2 and "no summary there" in err, err)
    shutil.rmtree(tmp)


@scenario
def test_report_diff_summary_fields(env):
    # Every summary names its label table (a hash), rank and GPUs, so --diff can tell them
    # apart.
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-diff-")
    out = []
    for i, rules in enumerate(("add1=adder", "add1=adder", "add1=other")):
        path = os.path.join(tmp, f"p{i}.json")
        env.run_ok([env.prog("scn_windows"), "api", "direct"], tool=False,
                   env={"NVTXCORR_PROFILE": path, "NVTXCORR_LABELS_INLINE": rules, "RANK": "5"})
        with open(path) as f:
            out.append(json.load(f))
    check(re.fullmatch(r"[0-9a-f]{16}", out[0]["label_table"] or "") and
          out[0]["label_table"] == out[1]["label_table"] != out[2]["label_table"] and
          out[0]["rank"] == "5", f"{[(d['label_table'], d['rank']) for d in out]}")
    rc, _, err = diff(env, os.path.join(tmp, "p0.json"), os.path.join(tmp, "p2.json"))
    check(rc == 0 and "different label tables" in err, err)
    rc, _, err = diff(env, os.path.join(tmp, "p0.json"), os.path.join(tmp, "p1.json"))
    check(rc == 0 and "label tables" not in err and "ranks" not in err and "GPUs" not in err,
          err)
    check(out[0]["gpus"] == ["nvtxcorr fake device"], f"gpus {out[0]['gpus']}")  # fake driver
    other = write_json(tmp, "h200.json", dict(out[1], gpus=["NVIDIA H200", "NVIDIA H200"]))
    rc, _, err = diff(env, os.path.join(tmp, "p0.json"), other)
    check(rc == 0 and "different GPUs" in err, err)
    shutil.rmtree(tmp)


@scenario
def test_report_diff_by_context(env):
    """--diff --by context: one row per (context path, label), the path and the label joined
    with " > ", with each side's launches and time (GPU time when both have it)."""
    def with_contexts(rows, ctx_rows):
        d = summary(rows, gpu=True)
        d["contexts"] = [{"context": c, "label": lab, "launches": n, "gpu_kernels": n,
                          "gpu_ns": g, "cpu_ns": n * 10} for c, lab, n, g in ctx_rows]
        return d
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-diff-")
    a = write_json(tmp, "a.json", with_contexts({"matmul": (4, 40, 400)},
                                           [(["layers.0", "attn"], "matmul", 2, 100),
                                            (["layers.0", "mlp"], "matmul", 2, 300)]))
    b = write_json(tmp, "b.json", with_contexts({"matmul": (4, 40, 700)},
                                           [(["layers.0", "attn"], "matmul", 2, 100),
                                            (["layers.0", "mlp"], "matmul", 2, 600)]))
    rc, out, err = diff(env, "--by", "context", a, b)
    check(rc == 0 and err == "", f"rc {rc}: {err}")
    rows = {m.group(1): m.group(2).split()
            for m in re.finditer(r"^(layers\.0 > \S+ > matmul)\s+(.*)$", out, re.M)}
    check(set(rows) == {"layers.0 > attn > matmul", "layers.0 > mlp > matmul"}, out)
    check(rows["layers.0 > mlp > matmul"][:2] == ["2", "2"] and
          rows["layers.0 > mlp > matmul"][6] == "+100.0%" and
          rows["layers.0 > attn > matmul"][6] == "+0.0%", out)
    check(out.index("layers.0 > mlp") < out.index("layers.0 > attn"), "largest change first")
    rc, _, _ = diff(env, "--by", "context", "--threshold", "50", a, b)
    check(rc == 1, f"--threshold 50 with one context 100% slower: rc {rc}")


def one_error_each(err, files):
    """Every stderr line is `nvtxcorr: error: FILE: why; left out`, one per file."""
    check("Traceback" not in err, f"traceback:\n{err[-3000:]}")
    named = [m[1] for m in re.finditer(r"^nvtxcorr: error: (.+?): .+; left out$", err, re.M)]
    check(sorted(named) == sorted(files) and len(err.splitlines()) == len(files),
          f"want one error for each of {files}:\n{err}")


def hostile_sides(env, variants):
    """Each variant (name, summary) against a good summary, alone and beside the good one:
    one error, left out; exit status 2; beside the good one, the good ones still compared."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-diff-")
    a = write_json(tmp, "a.json", summary({"matmul": (100, 1000000, 0)}))
    for name, d in variants:
        bad = write_json(tmp, f"{name}.json", d)
        rc, out, err = diff(env, a, bad)
        one_error_each(err, [bad])
        check(rc == 2 and out == "", f"{name}: rc {rc}: {out}")
        rc, out, err = diff(env, f"{a},{bad}", a)
        one_error_each(err, [bad])
        check(rc == 2 and table(out)["matmul"][:2] == ["100", "100"] and
              "A (1 file) vs B (1 file)" in out, f"{name}: rc {rc}: {out}")
    shutil.rmtree(tmp)


@scenario
def test_report_diff_huge_integers(env):
    """Counts and times past 2^64-1 (JSON has no bound; the library writes uint64_t) are
    refused as the file is read: the rates and percentages are floats, which they overflow.
    2^64-1 itself is compared."""
    def with_value(path, value):
        d = summary({"matmul": (100, 1000000, 0)})
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        parent[path[-1]] = value
        return d
    hostile_sides(env, [
        ("cpu-ns-2e64", with_value(("labels", 0, "cpu_ns"), 1 << 64)),
        ("cpu-ns-1e400", with_value(("labels", 0, "cpu_ns"), 10 ** 400)),
        ("kernel-cpu-ns-1e30", with_value(("kernels", 0, "cpu_ns"), 10 ** 30)),
        ("end-ns-1e400", with_value(("end_ns",), 10 ** 400)),
        ("window-end-1e400", dict(summary({"matmul": (100, 1000000, 0)}, window=1),
                                  window={"index": 1, "start_ns": 0, "end_ns": 10 ** 400}))])
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-diff-")
    top = (1 << 64) - 1
    a = write_json(tmp, "a.json", summary({"matmul": (100, 1000000, 0)}))
    b = write_json(tmp, "b.json", dict(summary({"matmul": (100, top, 0)}, length=top - 10 * S)))
    rc, out, err = diff(env, a, b, "--threshold", "5")
    check(rc == 1 and "Traceback" not in err and "matmul is" in err, f"rc {rc}: {err}{out}")
    shutil.rmtree(tmp)


@scenario
def test_report_diff_window_not_object(env):
    """A `window` that is a list, a string or a number: the file is left out with one line."""
    base = summary({"matmul": (100, 1000000, 0)})
    hostile_sides(env, [(f"window-{i}", dict(base, window=w))
                        for i, w in enumerate(([1, 2], "every", 3, True))])


@scenario
def test_report_diff_traces_beside_summaries(env):
    """A side's directory holding Kineto traces (NVTXCORR_TRACE) beside the summaries: each
    trace skipped with one note, the summaries compared; a directory of traces only has no
    summary."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-diff-")
    for side in ("A", "B"):
        os.mkdir(os.path.join(tmp, side))
        for rank in (0, 1):
            e = {"NVTXCORR_TRACE": os.path.join(tmp, side, "trace.%q{RANK}.json"),
                 "NVTXCORR_PROFILE": os.path.join(tmp, side, "p.%q{RANK}.json"),
                 "RANK": str(rank), "WORLD_SIZE": "2"}
            env.run_ok([env.prog("scn_driver"), "threads", "5"], env=e)
    rc, out, err = diff(env, os.path.join(tmp, "A"), os.path.join(tmp, "B"))
    traces = sorted(os.path.join(tmp, s, f"trace.{r}.json") for s in "AB" for r in (0, 1))
    notes = sorted(m[1] for m in re.finditer(
        r"^nvtxcorr: note: --diff: (.+): a trace, not a summary; skipped$", err, re.M))
    # (the runs' lengths differ as they will: a warning about that may come too)
    others = [line for line in err.splitlines() if not line.startswith("nvtxcorr: note: ")
              and not line.startswith("nvtxcorr: warn: --diff: windows of different length")]
    check(rc == 0 and notes == traces and not others, f"rc {rc}: {err}")
    rows = table(out)
    check("A (2 files) vs B (2 files)" in out and rows["add1"][:2] == ["32", "32"], out)
    os.mkdir(os.path.join(tmp, "T"))
    os.rename(traces[0], os.path.join(tmp, "T", "trace.json"))
    rc, out, err = diff(env, os.path.join(tmp, "T"), os.path.join(tmp, "B"))
    check(rc == 2 and out == "" and re.search(r"^nvtxcorr: error: --diff: .*/T: no summary "
                                              "there$", err, re.M), f"rc {rc}: {err}")
    shutil.rmtree(tmp)
