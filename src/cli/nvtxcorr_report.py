#!/usr/bin/env python3
"""`nvtxcorr stat` and `nvtxcorr report`: the commands around profile mode's summaries.

  nvtxcorr_report.py stat --library LIB [-o FILE|-] [--format F] [-f] [--top N|all]
                          [--sort gpu|cpu|launches] [--trace FILE] -- command [args...]
  nvtxcorr_report.py report [--by label|kernel|process|rank|context] [--top N|all] [--sort ...]
                            [--depth N] [--focus REGEX]
                            [--csv|--json|--format F|--suggest|--hatchet|--folded] FILE.json...

`stat` runs the command with libnvtxcorr.so in profile mode (every process it starts writes
its own summary into a private directory), then merges the summaries and prints the text
table on stderr, like `perf stat`; its exit status is the command's (128+N after signal N).
`report` merges summaries written with NVTXCORR_PROFILE=...%p.json and prints a table on
stdout. The summary format and the merge rules are in docs/profile.md: counters add up,
minimum and maximum are taken, and percentiles come from the summed histograms, so a merge is
exact up to the histogram's bucket width. `--by context` and `--folded` merge the summaries'
`contexts` rows (program context, docs/profile.md). The launcher (src/cli/nvtxcorr) calls this
file.
"""
import argparse
import csv
import io
import errno
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

EXACT, SUB, BUCKETS = 8, 4, 156
COUNTERS = ("launches", "graph_launches", "errors", "capture_launches", "cpu_ns")


class BadFile(Exception):
    pass


def say(level, msg):
    print(f"nvtxcorr: {level}: {msg}", file=sys.stderr)


# ---- histogram (same edges as src/profile/internal.h) -------------------------------------------
def bucket_low(b):
    if b < EXACT:
        return b
    o, s = 3 + (b - EXACT) // SUB, (b - EXACT) % SUB
    return (1 << o) + s * (1 << (o - 2))


def percentile(hist, n, lo, hi, per_mille):
    if n == 0:
        return 0
    want, seen = (n * per_mille + 999) // 1000, 0
    for b in sorted(hist):
        seen += hist[b]
        if seen >= want and hist[b]:
            low = bucket_low(b)
            top = bucket_low(b + 1) if b + 1 < BUCKETS else hi + 1
            v = low if b < EXACT else low + (top - low) // 2
            return min(max(v, lo), hi)
    return hi


class Gpu:
    """GPU time of one row: operations, their total, exact min and max, the histogram of their
    durations when every summary merged into it had one; None fields when none had GPU time."""

    def __init__(self):
        self.have, self.n, self.ns, self.min, self.max = False, 0, 0, 0, 0
        self.hist = {}

    def add(self, e, n_key="gpu_kernels", ns_key="gpu_ns", lo="gpu_min_ns", hi="gpu_max_ns",
            hist_key="gpu_histogram"):
        if e.get(ns_key) is None:
            return
        self.have = True
        if e[n_key] and (self.n == 0 or e[lo] < self.min):
            self.min = e[lo]
        if e[n_key]:
            self.max = max(self.max, e[hi])
        self.n += e[n_key]
        self.ns += e[ns_key]
        if self.hist is not None and e[n_key]:
            if e.get(hist_key) is None:  # an older summary, or one without memory for it
                self.hist = None
            else:
                for b, count in e[hist_key]:
                    self.hist[b] = self.hist.get(b, 0) + count

    def fields(self):
        if not self.have:
            return dict(gpu_ns=None, gpu_kernels=None, gpu_min_ns=None, gpu_max_ns=None,
                        gpu_mean_ns=None, gpu_p50_ns=None, gpu_p99_ns=None, gpu_histogram=None)
        h = self.hist
        return dict(gpu_ns=self.ns, gpu_kernels=self.n, gpu_min_ns=self.min, gpu_max_ns=self.max,
                    gpu_mean_ns=self.ns // self.n if self.n else 0,
                    gpu_p50_ns=None if h is None else percentile(h, self.n, self.min, self.max,
                                                                 500),
                    gpu_p99_ns=None if h is None else percentile(h, self.n, self.min, self.max,
                                                                 990),
                    gpu_histogram=None if h is None else [[b, h[b]] for b in sorted(h)])


class Entry:
    """One row: counters, exact min/max, the histogram, GPU time."""

    def __init__(self, key):
        self.key = key
        self.c = dict.fromkeys(COUNTERS, 0)
        self.min = self.max = 0
        self.hist = {}
        self.gpu = Gpu()

    def add(self, e):
        self.gpu.add(e)
        n = e["launches"]
        if n and (self.c["launches"] == 0 or e["cpu_min_ns"] < self.min):
            self.min = e["cpu_min_ns"]
        if n:
            self.max = max(self.max, e["cpu_max_ns"])
        for k in COUNTERS:
            self.c[k] += e[k]
        for b, count in e["cpu_histogram"]:
            self.hist[b] = self.hist.get(b, 0) + count

    def fields(self):
        n, total = self.c["launches"], self.c["cpu_ns"]
        d = dict(self.c)
        d.update(cpu_min_ns=self.min if n else 0, cpu_max_ns=self.max,
                 cpu_mean_ns=total // n if n else 0,
                 cpu_p50_ns=percentile(self.hist, n, self.min, self.max, 500),
                 cpu_p99_ns=percentile(self.hist, n, self.min, self.max, 990),
                 cpu_histogram=[[b, self.hist[b]] for b in sorted(self.hist)])
        d.update(self.gpu.fields())
        return d


class Graph:
    """One graph label's replays: the GPU time of each, as a histogram."""

    def __init__(self, key):
        self.key, self.ops, self.hist, self.time = key, 0, {}, Gpu()

    def add(self, g):
        self.time.add(g, "replays", "gpu_ns", "gpu_replay_min_ns", "gpu_replay_max_ns")
        self.ops += g["gpu_kernels"]
        for b, count in g.get("gpu_replay_histogram") or []:
            self.hist[b] = self.hist.get(b, 0) + count

    def fields(self):
        t = self.time
        return dict(label=self.key[0], category=self.key[1], replays=t.n, gpu_kernels=self.ops,
                    kernels_per_replay=self.ops // t.n if t.n else 0, gpu_ns=t.ns,
                    gpu_replay_min_ns=t.min, gpu_replay_max_ns=t.max,
                    gpu_replay_mean_ns=t.ns // t.n if t.n else 0,
                    gpu_replay_p50_ns=percentile(self.hist, t.n, t.min, t.max, 500),
                    gpu_replay_p99_ns=percentile(self.hist, t.n, t.min, t.max, 990),
                    gpu_replay_histogram=[[b, self.hist[b]] for b in sorted(self.hist)])


def gpu_sections(summaries):
    """The by-kernel view by label, and the graphs, merged over the summaries."""
    labels, graphs = {}, {}
    for _, d in summaries:
        for e in d.get("kernel_labels") or []:
            key = (e["label"], e.get("category"), e.get("kind", "kernel"))
            labels.setdefault(key, Gpu()).add(e)
        for g in d.get("graphs") or []:
            key = (g["label"], g.get("category"))
            graphs.setdefault(key, Graph(key)).add(g)
    kl = [dict(label=k[0], category=k[1], kind=k[2], **v.fields())
          for k, v in sorted(labels.items(), key=lambda kv: (-kv[1].ns, str(kv[0])))]
    return kl, [g.fields() for g in sorted(graphs.values(), key=lambda g: -g.time.ns)]


def gpu_note(summaries):
    """(gpu_time, note) of a merge: GPU time when any process had it; which had not, and why
    the GPU time of those that had it is partial."""
    without = [(p, d.get("gpu_time_note")) for p, d in summaries if not d.get("gpu_time")]
    partial = sorted({str(d["gpu_time_note"]) for _, d in summaries
                      if d.get("gpu_time") and d.get("gpu_time_note")})
    have = len(without) < len(summaries)
    notes = []
    if without:
        why = "; ".join(sorted({str(n) for _, n in without}))
        notes.append(f"{len(without)} of {len(summaries)} processes without GPU time: {why}"
                     if have else why)
    return have, "; ".join(notes + partial) or None


# ---- reading ------------------------------------------------------------------------------------
# A summary is checked field by field before anything reads it: every field the report uses has
# the type it needs, so a malformed file is named and left out instead of stopping the report
# (issue 16, case 7). NaN and Infinity are refused on input, so the output is always JSON.
MAX_DEPTH = 64


COUNT_MAX = (1 << 64) - 1  # the library writes its counts as uint64_t


def is_count(v):
    """A whole number the library can have written: 0 to 2^64-1. Larger ones (JSON has no
    bound) would overflow the float arithmetic of --diff's rates and percentages."""
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= COUNT_MAX


def is_pairs(v):
    return isinstance(v, list) and all(
        isinstance(p, list) and len(p) == 2 and all(is_count(x) for x in p) and p[0] < BUCKETS
        for p in v)


KINDS = {
    "count": (is_count, "is missing or not a count (0 to 2^64-1)"),
    "count?": (lambda v: v is None or is_count(v), "is not a count (0 to 2^64-1) or null"),
    "str": (lambda v: isinstance(v, str), "is missing or not a string"),
    "str?": (lambda v: v is None or isinstance(v, str), "is not a string or null"),
    "pairs": (is_pairs, "is not a list of [bucket, count]"),
    "pairs?": (lambda v: v is None or is_pairs(v), "is not a list of [bucket, count]"),
    "list?": (lambda v: v is None or isinstance(v, list), "is not a list"),
    "bool?": (lambda v: v is None or isinstance(v, bool), "is not true or false"),
    "int?": (lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
             "is not an integer"),
    "strs?": (lambda v: v is None or isinstance(v, list) and all(isinstance(x, str) for x in v),
              "is not a list of strings"),
    "strs": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
             "is missing or not a list of strings"),
}
GPU_FIELDS = ("gpu_ns", "gpu_kernels", "gpu_min_ns", "gpu_max_ns")


def need(e, where, **fields):
    if not isinstance(e, dict):
        raise BadFile(f"{where} is not an object")
    for key, kind in fields.items():
        ok, what = KINDS[kind]
        if not ok(e.get(key)):
            raise BadFile(f"{where}: '{key}' {what}")


def need_gpu(e, where):
    """GPU fields: all null (no GPU time) or all counts; the histogram, where there is one,
    adds up to the operations."""
    if any(e.get(k) is not None for k in GPU_FIELDS):
        need(e, where, **dict.fromkeys(GPU_FIELDS, "count"), gpu_histogram="pairs?")
        if e.get("gpu_histogram") is not None and \
                sum(p[1] for p in e["gpu_histogram"]) != e["gpu_kernels"]:
            raise BadFile(f"{where}: 'gpu_histogram' does not add up to 'gpu_kernels'")


def check_entry(e, kind, i):
    where = f"{kind}[{i}]"
    need(e, where, **dict.fromkeys(COUNTERS + ("cpu_min_ns", "cpu_max_ns"), "count"),
         cpu_histogram="pairs", category="str?")
    if sum(p[1] for p in e["cpu_histogram"]) != e["launches"]:
        raise BadFile(f"{where}: histogram does not add up to 'launches'")
    if kind == "labels":
        need(e, where, label="str")
    else:
        need(e, where, name="str", function="str", label="str?")
    need_gpu(e, where)


def check_summary(d):
    if not isinstance(d, dict) or not isinstance(d.get("labels"), list) or \
            not isinstance(d.get("kernels"), list):
        raise BadFile("not an nvtxcorr profile summary (no 'labels' and 'kernels' lists)")
    hist = d.get("histogram")
    if hist is not None and not isinstance(hist, dict):
        raise BadFile("'histogram' is not an object")
    if hist and (hist.get("exact_below_ns"), hist.get("sub_buckets"), hist.get("buckets")) != \
            (EXACT, SUB, BUCKETS):
        raise BadFile("histogram of another shape: written by an incompatible nvtxcorr")
    need(d, "summary", pid="int?", host="str?", command="strs?", gpu_time="bool?",
         gpu_time_note="str?", kernel_labels="list?", graphs="list?", merged="list?",
         contexts="list?", context_note="str?")
    totals = d.get("totals")
    if totals is not None and not (isinstance(totals, dict) and
                                   all(v is None or is_count(v) for v in totals.values())):
        raise BadFile("'totals' is not an object of counts")
    for kind in ("labels", "kernels"):
        for i, e in enumerate(d[kind]):
            check_entry(e, kind, i)
    for i, e in enumerate(d.get("kernel_labels") or []):
        need(e, f"kernel_labels[{i}]", label="str", category="str?", kind="str?")
        need_gpu(e, f"kernel_labels[{i}]")
    for i, g in enumerate(d.get("graphs") or []):
        need(g, f"graphs[{i}]", label="str", category="str?", replays="count",
             gpu_kernels="count", gpu_ns="count", gpu_replay_min_ns="count",
             gpu_replay_max_ns="count", gpu_replay_histogram="pairs?")
    for i, m in enumerate(d.get("merged") or []):
        need(m, f"merged[{i}]", file="str?", pid="int?", host="str?", command="strs?")
    for i, c in enumerate(d.get("contexts") or []):
        need(c, f"contexts[{i}]", context="strs", label="str", launches="count",
             cpu_ns="count", gpu_ns="count?", gpu_kernels="count?")


def check_shape(d):
    """Nesting within MAX_DEPTH and strings that are UTF-8 (json accepts lone surrogates,
    which no output could print), without recursion. The stack holds one iterator per level,
    not the values: a list of millions of entries costs no more to walk than a short one."""
    stack = [iter((d,))]
    while stack:
        for v in stack[-1]:  # v is len(stack) levels deep
            if len(stack) > MAX_DEPTH:
                raise BadFile(f"nested more than {MAX_DEPTH} levels deep")
            if isinstance(v, dict):
                stack.append(itertools.chain.from_iterable(v.items()))
                break
            if isinstance(v, list):
                stack.append(iter(v))
                break
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    raise BadFile("a string that is not UTF-8 (a lone surrogate escape)") \
                        from None
        else:
            stack.pop()


def json_number(text):
    v = float(text)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of the range of a JSON number")
    return v


def no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def load(path):
    size, too_big = 0, False
    try:
        with open(path, encoding="utf-8") as f:
            size = os.fstat(f.fileno()).st_size
            d = json.load(f, parse_constant=no_constant, parse_float=json_number)
    except OSError as e:
        raise BadFile(e.strerror or str(e))
    except RecursionError:
        raise BadFile(f"nested more than {MAX_DEPTH} levels deep") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise BadFile(f"not valid JSON ({e})")
    except MemoryError:
        too_big = True  # raised below, once this handler has let go of the text and the parse
    if too_big:
        # Python holds about ten times the file while parsing it: a file of a few hundred MB
        # under a memory limit (ulimit -v, a container's) is left out like any unreadable one.
        raise BadFile(f"not enough memory to read its {size >> 20} MiB (ulimit -v, or a "
                      "container's limit?)")
    check_shape(d)
    check_summary(d)
    return d


def load_all(paths):
    good, bad = [], 0
    for p in paths:
        try:
            good.append((p, load(p)))
        except BadFile as e:
            say("error", f"{p}: {e}; left out")
            bad += 1
    return good, bad


def processes(summaries):
    """The processes behind the summaries: a merged file (report --json) counts as those it
    merged."""
    out = []
    for p, d in summaries:
        if d.get("merged"):
            out += d["merged"]
        else:
            out.append({"file": p, "pid": d.get("pid"), "host": d.get("host"),
                        "command": d.get("command")})
    return out


def merged_totals(summaries):
    """The files' totals added up, key by key (null where no file had a count)."""
    totals = {}
    for _, d in summaries:
        for k, v in (d.get("totals") or {}).items():
            if v is not None or k not in totals:
                totals[k] = v if totals.get(k) is None else totals[k] + (v or 0)
    return totals


def merge(summaries, by="label"):
    rows = {}
    for path, d in summaries:
        if by == "process":
            cmd = d.get("command") or [path]
            key = (f"{os.path.basename(str(cmd[0]))} [{d.get('pid', '?')}]", d.get("host"))
            items = d["labels"] + [k for k in d["kernels"] if k.get("label") is None]
        elif by == "kernel":
            items = d["kernels"]
        else:
            items = d["labels"]
        for e in items:
            if by == "label":
                key = (e["label"], e.get("category"))
            elif by == "kernel":
                key = (e["name"], e["function"], e.get("label"), e.get("category"))
            rows.setdefault(key, Entry(key)).add(e)
    return sorted(rows.values(), key=lambda r: (-r.c["cpu_ns"], -r.c["launches"], str(r.key)))


# ---- writing ------------------------------------------------------------------------------------
def fmt_time(ns):
    units = [(1, " ns"), (1000, " us"), (1000000, " ms"), (1000000000, " s")]
    u = 0
    while u < 3 and ns >= units[u + 1][0]:
        u += 1
    if u == 0:
        return f"{ns} ns"
    scale = units[u][0]
    hundredths = (ns * 100 + scale // 2) // scale
    if hundredths >= 100000 and u < 3:
        u += 1
        scale = units[u][0]
        hundredths = (ns * 100 + scale // 2) // scale
    if hundredths < 1000:
        return f"{hundredths // 100}.{hundredths % 100:02d}{units[u][1]}"
    if hundredths < 10000:
        v = (hundredths + 5) // 10
        return f"{v // 10}.{v % 10}{units[u][1]}"
    return f"{(hundredths + 50) // 100}{units[u][1]}"


# The text tables' one layout rule (docs/profile.md, "CSV and text"; src/profile/out.c
# applies the same): a line is at most 100 columns; the numbers take fixed widths at the right,
# the text columns share the rest. With two text columns the second gets what its longest entry
# needs, but no more than leaves the first what its longest needs unless that would leave the
# second under 22; the first takes everything left. A value longer than its column is cut in
# the middle ("triton_poi_f..._kernel_3"), so names that differ at the end stay apart.
WIDTH, SECOND_MIN = 100, 22
CPU_NUMBERS = 54  # " launches share total mean p50 p99": 1+9 1+6 1+9 3*(1+8)
GRAPH_NUMBERS = 61  # " replays kernels/replay per-replay-mean p50 p99": 1+8 1+15 1+17 2*(1+8)


def shown(s):
    """Control bytes as \\xNN (a label must not drive the terminal), as nvtxcorr check does."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m[0]):02x}", s)


def cut(s, width):
    s = shown("-" if s is None else str(s))
    if len(s) <= width:
        return s
    head, tail = (width - 2) // 2, (width - 3) // 2
    return s[:head] + "..." + (s[len(s) - tail:] if tail else "")


def fit(numbers, firsts, seconds=None):
    """Widths of the text columns (the rule above) for the values shown, headings included."""
    room = WIDTH - numbers
    need1 = max(len(shown(str(x))) for x in firsts)
    if seconds is None:
        return room, 0
    need2 = max(len(shown("-" if x is None else str(x))) for x in seconds)
    w2 = min(need2, max(SECOND_MIN, room - 1 - need1))
    return room - 1 - w2, w2


def share(part, whole):
    tenths = (part * 1000 + whole // 2) // whole if whole else 0
    return f"{tenths // 10}.{tenths % 10}%"


def sort_key(sort, kernels="launches"):
    """Row order of a table for --sort: the rows are dicts of a row's fields (kernels: the
    count a "launches" sort takes, which is gpu_kernels in a GPU table)."""
    def key(f):
        gpu, cpu, n = f.get("gpu_ns") or 0, f.get("cpu_ns") or 0, f.get(kernels) or 0
        first = {"gpu": (-gpu, -cpu, -n), "cpu": (-cpu, -gpu, -n), "launches": (-n, -gpu, -cpu)}
        return first[sort]
    return key


def table(out, heading, rows, top):
    """Appends heading and rows (strings), at most top of them, and "(N more rows; --top)"."""
    out.append(heading)
    out += rows[:top] if top is not None else rows
    if top is not None and len(rows) > top:
        out.append(f"({len(rows) - top} more rows; --top N or --top all)")


def cpu_table(rows, by, summaries, top, sort):
    total = sum(r.c["cpu_ns"] for r in rows)
    first, second = {"label": ("label", "category"), "kernel": ("kernel", "label"),
                     "process": ("process", "host")}[by]
    shown_rows = [(r, r.fields()) for r in rows if r.c["launches"]]
    shown_rows.sort(key=lambda rf: (sort_key(sort)(rf[1]), str(rf[0].key)))
    keys = [(r.key[0], r.key[1]) if by != "kernel" else (r.key[1], r.key[2])
            for r, _ in shown_rows]
    w1, w2 = fit(CPU_NUMBERS, [first] + [a for a, _ in keys], [second] + [b for _, b in keys])
    lines = [f"{cut(a, w1):<{w1}} {cut(b, w2):<{w2}} {f['launches']:>9} "
             f"{share(f['cpu_ns'], total):>6} {fmt_time(f['cpu_ns']):>9} "
             f"{fmt_time(f['cpu_mean_ns']):>8} {fmt_time(f['cpu_p50_ns']):>8} "
             f"{fmt_time(f['cpu_p99_ns']):>8}" for (a, b), (_, f) in zip(keys, shown_rows)]
    out = []
    table(out, f"{first:<{w1}} {second:<{w2}} {'launches':>9} {'share':>6} {'total':>9} "
               f"{'mean':>8} {'p50':>8} {'p99':>8}", lines, top)
    return out


def text_table(rows, by, summaries, top=None, sort=None):
    n = sum(r.c["launches"] for r in rows)
    g = sum(r.c["graph_launches"] for r in rows)
    errors = sum(r.c["errors"] for r in rows)
    cap = sum(r.c["capture_launches"] for r in rows)
    procs = processes(summaries)
    head = f"pid {procs[0].get('pid')}" if len(procs) == 1 else f"{len(procs)} processes"
    out = [f"nvtxcorr: profile of {head}: {n} launches ({g} graph), {errors} errors, "
           f"{fmt_time(sum(r.c['cpu_ns'] for r in rows))} CPU in launch calls"]
    have, note = gpu_note(summaries)
    sort = sort or ("gpu" if have else "cpu")
    if have:  # GPU time first: it is what the user came for when there is some
        out += gpu_text(summaries, top, sort, note)
        out += ["", f"CPU time in launch calls, by {by}"]
    out += cpu_table(rows, by, summaries, top, sort)
    skipped = sum(k["launches"] for _, d in summaries for k in d["kernels"]
                  if k.get("label") is None)
    if by == "label" and skipped:
        out.append(f'{skipped} launches of kernels whose rule says "-" are in no label '
                   "(see --by kernel)")
    if cap:
        out.append(f"{cap} launches made during stream capture (recorded, not run) not counted")
    def total(key):
        return sum((d.get("totals") or {}).get(key) or 0 for _, d in summaries)
    if total("other_launches"):
        out.append(f"{total('other_launches')} launches of kernels beyond the distinct kernels "
                   "and graph labels kept are counted under [other]")
    if total("other_graph_launches"):
        out.append(f"{total('other_graph_launches')} launches of graphs beyond the distinct "
                   "graph labels kept are counted under [other graphs]")
    if total("uncounted_at_start"):
        out.append(f"{total('uncounted_at_start')} launches made while nvtxcorr was starting "
                   "passed through uncounted")
    own = total("cpu_own_ns")
    if own:
        out.append("nvtxcorr's own work inside the launch calls (CUPTI callbacks), not in the "
                   f"times above: {fmt_time(own)}")
    if not have:
        out.append(f"(no GPU time: {note})" if note else "(no GPU time)")
    return "\n".join(out) + "\n"


def gpu_text(summaries, top, sort, note):
    kl, graphs = gpu_sections(summaries)
    total = sum(e["gpu_ns"] for e in kl)
    ops = sum(e["gpu_kernels"] for e in kl)
    dropped = sum((d.get("totals") or {}).get("gpu_dropped_records") or 0 for _, d in summaries)
    out = [f"GPU time: {fmt_time(total)} in {ops} kernels; {dropped} records dropped by CUPTI"]
    if note:
        out.append(f"({note})")
    launch = [dict(label=r.key[0], category=r.key[1], **r.fields())
              for r in merge(summaries, "label")]
    launch = [e for e in launch if e["gpu_kernels"]]
    order = sort_key(sort, "gpu_kernels")
    views = (("by launch label (a graph launch's label gets all its kernels)",
              sorted(launch, key=order)),
             ("by kernel label (every kernel that ran, graph nodes included)",
              sorted(kl, key=order)))
    w1, w2 = fit(CPU_NUMBERS, ["label"] + [e["label"] for _, v in views for e in v],
                 ["category"] + [e["category"] for _, v in views for e in v])
    head = (f"{'label':<{w1}} {'category':<{w2}} {'kernels':>9} {'share':>6} {'total':>9} "
            f"{'mean':>8} {'min':>8} {'max':>8}")

    def row(f):
        return (f"{cut(f['label'], w1):<{w1}} {cut(f['category'], w2):<{w2}} "
                f"{f['gpu_kernels']:>9} {share(f['gpu_ns'], total):>6} "
                f"{fmt_time(f['gpu_ns']):>9} {fmt_time(f['gpu_mean_ns']):>8} "
                f"{fmt_time(f['gpu_min_ns']):>8} {fmt_time(f['gpu_max_ns']):>8}")
    for title, rows in views:
        out.append(title)
        table(out, head, [row(e) for e in rows], top)
    if graphs:
        w, _ = fit(GRAPH_NUMBERS, ["graph"] + [g["label"] for g in graphs])
        graphs = sorted(graphs, key=lambda g: sort_key(sort, "replays")(g))
        table(out, f"{'graph':<{w}} {'replays':>8} {'kernels/replay':>15} "
                   f"{'per replay: mean':>17} {'p50':>8} {'p99':>8}",
              [f"{cut(g['label'], w):<{w}} {g['replays']:>8} {g['kernels_per_replay']:>15} "
               f"{fmt_time(g['gpu_replay_mean_ns']):>17} {fmt_time(g['gpu_replay_p50_ns']):>8} "
               f"{fmt_time(g['gpu_replay_p99_ns']):>8}" for g in graphs], top)
    return out


def csv_text(summaries):
    import csv
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["section", "label", "category", "name", "function", "launches",
                "graph_launches", "errors", "capture_launches", "cpu_ns", "cpu_min_ns",
                "cpu_max_ns", "cpu_mean_ns", "cpu_p50_ns", "cpu_p99_ns", "gpu_ns", "gpu_kernels",
                "gpu_min_ns", "gpu_max_ns", "gpu_mean_ns", "gpu_p50_ns", "gpu_p99_ns"])
    cols = ["launches", "graph_launches", "errors", "capture_launches", "cpu_ns", "cpu_min_ns",
            "cpu_max_ns", "cpu_mean_ns", "cpu_p50_ns", "cpu_p99_ns"]
    gcols = ["gpu_ns", "gpu_kernels", "gpu_min_ns", "gpu_max_ns", "gpu_mean_ns", "gpu_p50_ns",
             "gpu_p99_ns"]

    def gpu(f):
        return ["" if f[c] is None else f[c] for c in gcols]
    for r in merge(summaries, "label"):
        f = r.fields()
        w.writerow(["label", r.key[0], r.key[1] or "", "", ""] + [f[c] for c in cols] + gpu(f))
    for r in merge(summaries, "kernel"):
        f = r.fields()
        w.writerow(["kernel", r.key[2] or "", r.key[3] or "", r.key[0], r.key[1]] +
                   [f[c] for c in cols] + gpu(f))
    kl, graphs = gpu_sections(summaries)
    for e in kl:
        w.writerow(["kernel_label", e["label"], e["category"] or "", e["kind"], ""] +
                   [""] * len(cols) + gpu(e))
    for g in graphs:
        w.writerow(["graph", g["label"], g["category"] or "", "", "", g["replays"]] +
                   [""] * (len(cols) - 1) +
                   [g["gpu_ns"], g["gpu_kernels"], g["gpu_replay_min_ns"], g["gpu_replay_max_ns"],
                    g["gpu_replay_mean_ns"], g["gpu_replay_p50_ns"], g["gpu_replay_p99_ns"]])
    return buf.getvalue()


def json_object(summaries):
    if len(summaries) == 1:
        return summaries[0][1]
    labels = [dict(label=r.key[0], category=r.key[1], **r.fields())
              for r in merge(summaries, "label")]
    kernels = [dict(name=r.key[0], function=r.key[1], label=r.key[2], category=r.key[3],
                    **r.fields()) for r in merge(summaries, "kernel")]
    have, note = gpu_note(summaries)
    kernel_labels, graphs = gpu_sections(summaries)
    return {"nvtxcorr_profile": 1, "merged": processes(summaries), "gpu_time": have,
            "gpu_time_note": note,
            "histogram": {"exact_below_ns": EXACT, "sub_buckets": SUB, "buckets": BUCKETS},
            "totals": merged_totals(summaries), "labels": labels, "kernels": kernels,
            "kernel_labels": kernel_labels, "graphs": graphs,
            "context_note": "; ".join(context_notes(summaries)) or None,
            "contexts": [{"context": list(p), "label": lab, **c}
                         for (p, lab), c in sorted(merge_contexts(summaries).items())]}


# ---- --hatchet ----------------------------------------------------------------------------------
def hatchet(summaries):
    """The label tree in Hatchet's literal form (llnl-hatchet, GraphFrame.from_literal): labels
    split at "." (attention.prefill is prefill under attention), under one root for the whole
    run. Metrics: GPU time in ns ("time", "time (inc)": Hatchet takes a metric with "(inc)" as
    inclusive), GPU operations ("count", "count (inc)"), launches and CPU time ("launches",
    "cpu_ns", exclusive). GPU time that is in no label (operations whose launch is not known,
    kernels of "-" rules) is a node of its own, so the root's "time (inc)" is the summary's
    totals.gpu_ns. A frame carries the label's whole path: Hatchet identifies nodes by frame,
    and two labels may end in the same word."""
    root = tree_root(summaries)
    labelled = 0
    for r in merge(summaries, "label"):
        f = r.fields()
        at, path = root, []
        for part in r.key[0].split("."):
            path.append(part)
            at = at["children"].setdefault(part, tree_node(part, ".".join(path), "label"))
        m = at["metrics"]
        m["time"] += f["gpu_ns"] or 0
        m["count"] += f["gpu_kernels"] or 0
        m["launches"] += f["launches"] + f["capture_launches"]
        m["cpu_ns"] += f["cpu_ns"]
        labelled += f["gpu_ns"] or 0
    rest = (merged_totals(summaries).get("gpu_ns") or 0) - labelled
    if rest:
        other = root["children"].setdefault("[no label]", tree_node("[no label]", "", "other"))
        other["metrics"]["time"] = rest
    return tree_json(root)


def hatchet_context(summaries, depth=None, focus=None):
    """The context tree (--by context) in Hatchet's literal form: the program's NVTX ranges
    from the outermost in (frame type "context"), each row's kernel label a leaf under its path
    (type "label"); a replayed kernel's path holds the graph launch's live path, the graph's
    label and its node's capture path (docs/profile.md, Program context), and the graph's node
    has the graph launches' own counts and CPU time. Metrics as hatchet() has them; the root's
    "time (inc)" is the summaries' totals.gpu_ns, as the contexts rows sum to it. A frame's
    path is the whole path, " > " between elements: Hatchet identifies nodes by frame, and a
    range name repeats under different parents."""
    root = tree_root(summaries)
    rows = sorted(merge_contexts(summaries, depth, focus).items())

    def context_node(path):
        at = root
        for i, part in enumerate(path):
            at = at["children"].setdefault(("context", part),
                                           tree_node(part, " > ".join(path[:i + 1]), "context"))
        return at
    for (path, _), _ in rows:
        context_node(path)
    placed = 0
    for (path, label), c in rows:
        at = context_node(path)
        # A graph launch's own row (its launches and CPU time) is the node its replayed
        # kernels' paths go through: one node, not a leaf beside it of the same name.
        at = at["children"].get(("context", label)) or at["children"].setdefault(
            ("label", label), tree_node(label, " > ".join(path + (label,)), "label"))
        m = at["metrics"]
        m["time"] += c["gpu_ns"] or 0
        m["count"] += c["gpu_kernels"] or 0
        m["launches"] += c["launches"]
        m["cpu_ns"] += c["cpu_ns"]
        placed += c["gpu_ns"] or 0
    rest = (merged_totals(summaries).get("gpu_ns") or 0) - placed
    if rest and focus is None:  # summaries without contexts rows (profile mode before them)
        other = root["children"].setdefault("[no context]",
                                            tree_node("[no context]", "", "other"))
        other["metrics"]["time"] = rest
    return tree_json(root)


def tree_node(name, path, kind):
    """A node of a Hatchet literal tree: its frame and exclusive metrics, children by key."""
    return {"frame": {"name": name, "type": kind, "path": path},
            "metrics": {"time": 0, "count": 0, "launches": 0, "cpu_ns": 0}, "children": {}}


def tree_root(summaries):
    """The root of a Hatchet tree: the run, named by its command(s)."""
    cmds = {os.path.basename(str((d.get("command") or [p])[0])) for p, d in summaries}
    return tree_node(" ".join(sorted(cmds)) if len(cmds) <= 3 else f"{len(summaries)} processes",
                     "", "program")


def tree_json(root):
    """A tree of tree_node() dicts as Hatchet's literal JSON: inclusive metrics added, children
    listed by inclusive GPU time."""

    def close(n):
        kids = [close(c) for c in n["children"].values()]
        m = n["metrics"]
        m["time (inc)"] = m["time"] + sum(k["metrics"]["time (inc)"] for k in kids)
        m["count (inc)"] = m["count"] + sum(k["metrics"]["count (inc)"] for k in kids)
        n["children"] = sorted(kids, key=lambda k: -k["metrics"]["time (inc)"])
        if not kids:
            del n["children"]
        return n
    return json.dumps([close(root)], indent=1) + "\n"


# ---- --by context, --folded (docs/profile.md, Program context) -----------------------------------
def merge_contexts(summaries, depth=None, focus=None):
    """The files' `contexts` rows added up by (path, label): {(path, label): counts}. depth cuts
    each path to its outermost N elements; focus (a regex) keeps the rows with an element it
    matches, their paths from that element on."""
    rows = {}
    for _, d in summaries:
        for r in d.get("contexts") or []:
            path = tuple(str(e) for e in r.get("context") or [])
            if focus is not None:
                at = next((i for i, e in enumerate(path) if focus.search(e)), None)
                if at is None:
                    continue
                path = path[at:]
            if depth is not None:
                path = path[:depth]
            c = rows.setdefault((path, str(r.get("label"))),
                                {"launches": 0, "gpu_kernels": None, "gpu_ns": None, "cpu_ns": 0})
            for k in c:
                v = r.get(k)
                if v is not None:
                    c[k] = (c[k] or 0) + v
    return rows


def folded(rows, gpu):
    """One `ctx;...;label <n>` line per row with time (GPU ns, else CPU ns): the folded-stack
    format of flamegraph.pl, inferno and speedscope."""
    out = []
    for (path, label), c in sorted(rows.items()):
        v = (c["gpu_ns"] if gpu else c["cpu_ns"]) or 0
        if v:
            frames = [e.replace(";", ":").replace("\n", " ") for e in path + (label,)]
            out.append(";".join(frames) + f" {v}\n")
    return "".join(out)


def context_tree(rows, gpu, top=None):
    """The text tree: each node's GPU time inclusive and exclusive, kernels, launches; kernel
    labels as leaves, largest first."""
    nodes = {}
    for (path, label), c in rows.items():
        for i in range(len(path) + 1):
            n = nodes.setdefault(path[:i], {"incl": 0, "excl": 0, "kernels": 0, "launches": 0})
            n["incl"] += c["gpu_ns"] or 0
            n["kernels"] += c["gpu_kernels"] or 0
            n["launches"] += c["launches"]
        nodes[path]["excl"] += c["gpu_ns"] or 0
    key = (lambda c: -(c.get("incl", c.get("gpu_ns")) or 0)) if gpu else \
        (lambda c: -c["launches"])
    lines = ["context > kernel label".ljust(50) +
             ("".join(h.rjust(w) for h, w in (("incl", 10), ("excl", 10), ("kernels", 9)))
              if gpu else "") + "launches".rjust(9)]

    def line(depth, name, incl, excl, kernels, launches):
        text = ("  " * min(depth, 20) + name)[:49].ljust(50)
        if gpu:
            text += fmt_time(incl).rjust(10) + (fmt_time(excl) if excl is not None
                                                else "").rjust(10) + str(kernels).rjust(9)
        lines.append(text + str(launches).rjust(9))

    def walk(path):
        children = sorted((p for p in nodes if len(p) == len(path) + 1 and p[:-1] == path),
                          key=lambda p: (key(nodes[p]), p))
        leaves = sorted(((lab, c) for (p, lab), c in rows.items() if p == path),
                        key=lambda x: (key(x[1]), x[0]))
        items = [(key(nodes[p]), 0, p) for p in children] + \
                [(key(c), 1, (lab, c)) for lab, c in leaves]
        for _, leaf, it in sorted(items, key=lambda x: x[:2])[:top]:
            if leaf:
                lab, c = it
                line(len(path), lab, c["gpu_ns"] or 0, None, c["gpu_kernels"] or 0,
                     c["launches"])
            else:
                n = nodes[it]
                line(len(path), it[-1], n["incl"], n["excl"], n["kernels"], n["launches"])
                walk(it)

    walk(())
    return "By program context" + (" (GPU time: inclusive, exclusive)" if gpu else "") + \
        "\n" + "\n".join(lines) + "\n"


def by_context(summaries, fmt, depth, focus, top):
    rows = merge_contexts(summaries, depth, focus)
    gpu = any(d.get("gpu_time") for _, d in summaries)
    if fmt == "json":
        out = [{"context": list(p), "label": lab, **c} for (p, lab), c in sorted(rows.items())]
        return json.dumps({"processes": processes(summaries), "contexts": out}, indent=1) + "\n"
    if fmt == "csv":
        w = io.StringIO()
        cw = csv.writer(w, lineterminator="\n")
        cw.writerow(["context", "label", "launches", "gpu_kernels", "gpu_ns", "cpu_ns"])
        for (p, lab), c in sorted(rows.items()):
            cw.writerow([" > ".join(p), lab, c["launches"], c["gpu_kernels"], c["gpu_ns"],
                         c["cpu_ns"]])
        return w.getvalue()
    return context_tree(rows, gpu, top)


def context_notes(summaries):
    return sorted({d["context_note"] for _, d in summaries if d.get("context_note")})


# ---- --by rank ---------------------------------------------------------------------------------
def trace_head(path):
    """A file's first 4 KiB as text ("" when it cannot be read): a Kineto trace's
    distributedInfo and process_name event are there (nvtxcorr writes them first)."""
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


def is_trace(path):
    """A Kineto trace (NVTXCORR_TRACE=....json, or PyTorch's) or a Chrome trace, which no
    summary is: its first key is "schemaVersion" or "traceEvents"."""
    return bool(re.match(r'\s*\{\s*"(schemaVersion|traceEvents)"', trace_head(path)))


def trace_rank(path):
    """(pid, rank, world_size) from a Kineto trace's head (its first 4 KiB: distributedInfo and
    the process_name event), or None when the file is not one."""
    head = trace_head(path)
    # HTA's own regex for the rank (hta/common/trace_file.py); the head is nvtxcorr's
    rank = re.search(r'"distributedInfo": \{"rank":\s+(\d+)', head)
    world = re.search(r'"world_size":\s+(\d+)', head)
    pid = re.search(r'"name":"process_name","ph":"M","pid":(\d+)', head)
    if not (rank and pid and world):
        return None
    return int(pid.group(1)), int(rank.group(1)), int(world.group(1))


MISSING_SHOWN = 8  # runs of missing ranks named in the warning; the rest are counted


def missing_ranks(have, world):
    """The ranks from 0 to world - 1 not in have (sorted), as runs ("2", "5-7"), at most
    MISSING_SHOWN of them, then how many in all: "" when none is missing. Walks the ranks
    present, never the world: a trace's world_size is what WORLD_SIZE said, up to 1e9."""
    runs, low, count = [], 0, 0
    for r in have + [world]:
        if r > low:
            runs.append(str(low) if r == low + 1 else f"{low}-{r - 1}")
            count += r - low
        low = max(low, r + 1)
    if not runs:
        return ""
    shown = ", ".join(runs[:MISSING_SHOWN]) + (", ..." if len(runs) > MISSING_SHOWN else "")
    if count == len(runs) <= MISSING_SHOWN:  # each one named
        return f"{shown} (world size {world})"
    return f"{shown} ({count} of world size {world})"


def by_rank(summaries, pid_rank, top):
    """GPU time (CPU time without it) per label per rank, the slowest rank of each label
    marked, and a warning when ranks are missing. A summary's rank is its trace's
    (distributedInfo), matched by pid."""
    ranks, world = {}, 0
    for p, d in summaries:
        r, w = pid_rank.get(d.get("pid"), (None, 0))
        if r is None:
            say("warn", f"{p}: no trace of pid {d.get('pid')} given; left out of --by rank")
            continue
        ranks.setdefault(r, []).append((p, d))
        world = max(world, w)
    if not ranks:
        return ""
    have = sorted(ranks)
    world = max(world, have[-1] + 1)
    missing = missing_ranks(have, world)
    if missing:
        say("warn", f"ranks missing: {missing}")
    gpu = any(d.get("gpu_time") for _, d in summaries)
    unit = "GPU" if gpu else "CPU"
    per = {r: {e.key[0]: e.fields() for e in merge(ranks[r], "label")} for r in have}
    labels = sorted({k for v in per.values() for k in v},
                    key=lambda k: -max(per[r].get(k, {}).get("gpu_ns" if gpu else "cpu_ns") or 0
                                       for r in have))
    if top is not None:
        labels = labels[:top]
    width = max([len(k) for k in labels] + [5])
    out = [f"{unit} time per label and rank (* the slowest rank)",
           f"{'label':<{width}} " + " ".join(f"{'rank ' + str(r):>12}" for r in have)]
    for k in labels:
        vals = [per[r].get(k, {}).get("gpu_ns" if gpu else "cpu_ns") or 0 for r in have]
        slow = max(vals) if len(set(vals)) > 1 else None  # all equal: none is the slowest
        cells = [f"{fmt_time(v) + ('*' if v == slow else ' '):>12}" for v in vals]
        out.append(f"{k:<{width}} " + " ".join(cells))
    return "\n".join(out) + "\n"


# ---- --suggest --------------------------------------------------------------------------------
# (family, ERE that both Python and POSIX read alike, label, category). First match wins, as
# in a label table, so the families stand in a fixed order, the more specific first: a fused
# norm ("fused_add_rms_norm_kernel") is a norm, not an add; an activation ("silu_and_mul") is
# not a multiply; llama.cpp's mul_mat_vec_q is a matmul. Labels and categories follow the
# shipped tables (docs/labels/*.conf). "other" takes what is left.
FAMILIES = [
    ("communication", r"nccl|[Aa]ll[Rr]educe|all_reduce|allreduce|cross_device_reduce|"
     r"[Aa]ll[Gg]ather|all_gather|[Rr]educe[Ss]catter|reduce_scatter|[Aa]ll[Tt]o[Aa]ll|"
     r"all_to_all", "comm", "comm"),
    ("attention", r"flash|[Aa]ttention|attn|[Aa]ttn|fmha|sdpa|mha_|[Pp]refill[Ww]ith|"
     r"[Dd]ecode[Ww]ith", "attention", "attention"),
    ("Triton-generated", r"^triton_", "triton.{function}", "triton"),
    ("gemm", r"gemm|[Gg]emm|gemv|[Gg]emv|matmul|[Mm]at[Mm]ul|mul_mat|xmma|cutlass|cublas|nvjet|"
     r"[Mm]arlin", "matmul", "matmul"),
    ("norm", r"norm|[Nn]orm", "norm", "norm"),
    ("activation", r"silu|[Ss]ilu|gelu|[Gg]elu|relu|[Rr]elu|_glu|swiglu|act_and_mul",
     "activation", "elementwise"),
    ("elementwise", r"elementwise|[Ee]lementwise|pointwise|vectorized|unrolled|[Ff]ill|"
     r"copy|[Cc]opy|add|mul|bin_bcast|unary|scale|clamp", "elementwise", "elementwise"),
]


def classify(k):
    for fam in FAMILIES:
        if any(re.search(fam[1], k[n]) for n in ("function", "name")):
            return fam[0]
    return "other"


def suggest(summaries):
    # Kernels that got no rule: their label is the default, the base name. The pseudo-kernels
    # of graph copy and memset nodes ([memcpy], [memset]) are no kernel a rule could name.
    unruled = {}
    for _, d in summaries:
        for k in d["kernels"]:
            if k.get("label") == k["function"] and k.get("category") is None and \
                    not k["name"].startswith("["):
                e = unruled.setdefault(k["name"], dict(k, launches=0, cpu_ns=0))
                e["launches"] += k["launches"]
                e["cpu_ns"] += k["cpu_ns"]
    groups = {}
    for k in unruled.values():
        groups.setdefault(classify(k), []).append(k)
    total = sum(k["cpu_ns"] for k in unruled.values()) or 1
    out = ["# Starter label table from nvtxcorr report --suggest: one rule per family of",
           "# kernels that no rule matched, in the order a first match needs (the more",
           "# specific first), each with its share of the CPU time in launch calls. Check",
           "# with `nvtxcorr check FILE`, then edit labels and split families as you need."]
    for fam in FAMILIES + [("other", None, "{function}", "other")]:
        ks = sorted(groups.get(fam[0], []), key=lambda k: -k["cpu_ns"])
        if not ks:
            continue
        t = sum(k["cpu_ns"] for k in ks)
        funcs = list(dict.fromkeys(k["function"] for k in ks))
        names = ", ".join(funcs[:3]) + (", ..." if len(funcs) > 3 else "")
        out.append("")
        out.append(f"# {fam[0]}: {len(ks)} kernel(s), {sum(k['launches'] for k in ks)} launches, "
                   f"{fmt_time(t)} CPU ({share(t, total)}): {shown(names)}")
        pattern = f"re:{fam[1]}" if fam[1] else "*"
        out.append(f'{pattern}  "{fam[2]}"  category={fam[3]}')
    if not unruled:
        out.append("# (every kernel already matched a rule)")
    return "\n".join(out) + "\n"


# ---- commands ---------------------------------------------------------------------------------
def format_of(path, fmt=None):
    """--format, else the extension rule: .json, .csv, anything else (and -) text."""
    return fmt or ("json" if path.endswith(".json") else "csv" if path.endswith(".csv")
                   else "text")


def output_problem(path, force):
    """Why the summary could not be written to path, checked before the command runs; None
    when it can."""
    if path == "-":
        return None
    if os.path.isdir(path):
        return "is a directory"
    if os.path.lexists(path) and not force:
        return "exists (-f overwrites it)"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return "no such directory" if not os.path.exists(parent) else \
            "a component of the path is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write in {parent}: Permission denied"
    return None


def write_output(path, text, force):
    """Writes text to path: a new file (O_EXCL, never through a symlink), or with force a
    temporary file renamed over the old one, so that a failure leaves the old one whole.
    Returns None or why it failed."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return None
    try:
        if force:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                                       prefix=".nvtxcorr-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.chmod(tmp, 0o644)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
            except BaseException:
                os.unlink(path)  # ours, and only part of it
                raise
    except OSError as e:
        return "exists (-f overwrites it)" if e.errno == errno.EEXIST else \
            (e.strerror or str(e))
    return None


def render(summaries, fmt, by="label", top=None, sort=None):
    if fmt == "json":
        return json.dumps(json_object(summaries), indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        return csv_text(summaries)
    return text_table(merge(summaries, by), by, summaries, top, sort)


def cmd_report(args):
    files, pid_rank = args.files, {}
    if args.by == "rank":  # the traces give the ranks: distributedInfo
        files = []
        for f in args.files:
            pr = trace_rank(f)
            if pr:
                pid_rank[pr[0]] = pr[1:]
            else:
                files.append(f)
        if not pid_rank:
            say("error", "--by rank: no Kineto trace given (NVTXCORR_TRACE=....json): the "
                "ranks are in their distributedInfo")
            return 1
    if args.diff:
        return cmd_diff(args)
    summaries, bad = load_all(files)
    if summaries:
        if args.suggest:
            sys.stdout.write(suggest(summaries))
        elif args.hatchet and args.by == "context":
            sys.stdout.write(hatchet_context(summaries, args.depth, args.focus))
        elif args.hatchet:
            sys.stdout.write(hatchet(summaries))
        elif args.by == "rank":
            sys.stdout.write(by_rank(summaries, pid_rank, args.top))
        elif args.folded:
            gpu = any(d.get("gpu_time") for _, d in summaries)
            sys.stdout.write(folded(merge_contexts(summaries, args.depth, args.focus), gpu))
        elif args.by == "context":
            fmt = "json" if args.json else "csv" if args.csv else args.format or "text"
            sys.stdout.write(by_context(summaries, fmt, args.depth, args.focus, args.top))
            for n in context_notes(summaries) if fmt == "text" else ():
                say("note", n)
        else:
            fmt = "json" if args.json else "csv" if args.csv else args.format or "text"
            sys.stdout.write(render(summaries, fmt, args.by, args.top, args.sort))
    elif not bad:
        say("error", "no summary given")
    return 1 if bad or not summaries else 0


def cmd_diff(args):
    import nvtxcorr_diff  # beside this script (src/cli/CMakeLists.txt installs both)
    if len(args.files) != 2:
        say("error", "--diff needs two sides: A B (each a file, a directory, a quoted glob or "
            "a comma-separated list)")
        return 2
    sides, bad = [], 0
    for side in args.files:
        files = []
        for f in nvtxcorr_diff.expand(side):
            if is_trace(f):  # NVTXCORR_TRACE's files, often beside the summaries
                say("note", f"--diff: {f}: a trace, not a summary; skipped")
            else:
                files.append(f)
        loaded, side_bad = load_all(files)
        bad += side_bad
        summaries = []
        for p, d in loaded:
            why = nvtxcorr_diff.problem(d)
            if why:
                say("error", f"{p}: {why}; left out")
                bad += 1
            else:
                summaries.append((p, d))
        if not summaries:
            if not files:  # else each file's own error said why
                say("error", f"--diff: {side}: no summary there")
            return 2
        sides.append(summaries)
    by = args.by if args.by in ("kernel", "context") else "label"
    if by == "context" and not all(d.get("contexts") for s in sides for _, d in s):
        say("warn", "--diff --by context: a side has summaries without program context rows "
            "(profile mode before program context?)")
    status = nvtxcorr_diff.diff(sides[0], sides[1], by, args.threshold, fmt_time, say,
                                sys.stdout)
    # A file left out changes what was compared: never a pass, even when nothing got slower.
    return 2 if bad else status


def program_problem(name):
    """(status, why) when name cannot be run, as the launcher words it (src/cli/nvtxcorr)."""
    if "/" not in name:
        return None if shutil.which(name) else (127, "command not found")
    if not os.path.exists(name):
        return 127, "No such file or directory"
    if os.path.isdir(name):
        return 126, "Is a directory"
    if not os.access(name, os.X_OK):
        return 126, "Permission denied"
    return None


def cmd_stat(args):
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        say("error", "stat needs a command: nvtxcorr stat [options] -- command [args...]")
        return 2
    if args.format and not args.output:
        say("error", "--format is the format of -o FILE (or -o - for stdout)")
        return 2
    problem = program_problem(cmd[0])
    if problem:
        say("error", f"{cmd[0]}: {problem[1]}")
        return problem[0]
    if args.output and output_problem(args.output, args.force):
        say("error", f"{args.output}: {output_problem(args.output, args.force)}; "
                     "the command was not run")
        return 2
    if os.environ.get("NVTXCORR_PROFILE"):
        # An outer launcher's (nvtxcorr --profile ... -- script that runs nvtxcorr stat), or
        # one set by hand: stat's own wins for its command, as in the launcher (docs/usage.md).
        say("warn", f"stat replaces NVTXCORR_PROFILE={os.environ['NVTXCORR_PROFILE']}, set "
            "outside this nvtxcorr (by an nvtxcorr --profile around it?), for this command and "
            "its children: their summaries are only in stat's table (-o FILE keeps it)")
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-stat-")
    try:
        return run_stat(args, cmd, tmp)
    finally:
        # Also when the command cannot start or the output cannot be written: the directory
        # goes, unless a summary is still in it (never deleted behind the user's back).
        try:
            os.rmdir(tmp)
        except OSError:
            pass


def run_stat(args, cmd, tmp):
    env = dict(os.environ)
    env["LD_PRELOAD"] = args.library + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["NVTXCORR"] = "1"
    env["NVTXCORR_PROFILE"] = os.path.join(tmp, "summary.%p.json")
    # Program context (docs/profile.md, Context): the library is the program's NVTX tool
    # unless one is already named (Nsight's wins; the library then says there is no context).
    env.setdefault("NVTXCORR_CONTEXT", "nvtx")
    if env["NVTXCORR_CONTEXT"] == "nvtx" and not env.get("NVTX_INJECTION64_PATH"):
        env["NVTX_INJECTION64_PATH"] = args.library
    if args.trace:
        env["NVTXCORR_TRACE"] = args.trace
    # The terminal's Ctrl-C reaches the command directly; TERM and HUP sent to us are passed on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        child = subprocess.Popen(cmd, env=env, restore_signals=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    except OSError as e:
        say("error", f"{cmd[0]}: {e.strerror}")
        os.rmdir(tmp)
        return 127 if isinstance(e, FileNotFoundError) else 126
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    rc = child.wait()
    status = 128 - rc if rc < 0 else rc
    killed = signal.Signals(-rc).name if rc < 0 and -rc in signal.valid_signals() else None
    why = " (out of memory? kill -9?)" if rc == -signal.SIGKILL else ""
    files = sorted(os.path.join(tmp, n) for n in os.listdir(tmp))
    summaries, _ = load_all(files)
    keep = False
    if not summaries and killed:
        say("error", f"the command was killed by {killed} before it wrote its summary{why}")
    elif not summaries:
        say("warn", "no summary: the command made no CUDA call that nvtxcorr saw")
    else:
        if rc == -signal.SIGKILL:
            say("warn", "the command was killed by SIGKILL (out of memory, or kill -9?): "
                        "the killed process wrote no summary; the table has the others")
        sys.stderr.write(render(summaries, "text", top=args.top, sort=args.sort))
        rows = merge_contexts(summaries)
        # The program's ranges, not only graph labels (a replayed kernel's path starts with
        # its graph's label even without any range: the by-kernel view again).
        if any(len(p) > 1 or (p and c["launches"]) for (p, _), c in rows.items()):
            gpu = any(d.get("gpu_time") for _, d in summaries)
            sys.stderr.write("\n" + context_tree(rows, gpu, args.top))
        if args.output:
            fmt = format_of(args.output, args.format)
            if fmt == "json" and len(summaries) == 1:
                text = open(summaries[0][0], encoding="utf-8").read()
            else:
                text = render(summaries, fmt, top=args.top, sort=args.sort)
            failed = write_output(args.output, text, args.force)
            if failed:
                # Never lost: the result stays where it was made, and the user is told where.
                kept = os.path.join(tmp, "summary." + fmt.replace("text", "txt"))
                with open(kept, "w", encoding="utf-8") as f:
                    f.write(text)
                say("error", f"{args.output}: {failed}; the summary is kept in {kept}")
                keep = True
    if not keep:
        for f in files:
            os.unlink(f)
    return status


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        say("error", message)
        sys.exit(2)


def top_count(text):
    """--top N: a positive count, or all."""
    if text == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive count or 'all', not '{text}'")
    return n


def regex(text):
    try:
        return re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"not a regular expression: {e}")


def main(argv):
    for stream in (sys.stdout, sys.stderr):  # a label no encoding can print is escaped
        stream.reconfigure(errors="backslashreplace")
    ap = Parser(prog="nvtxcorr")
    sub = ap.add_subparsers(dest="what", required=True, parser_class=Parser)
    st = sub.add_parser("stat", prog="nvtxcorr stat",
                        help="run a command in profile mode, print the table on stderr")
    st.add_argument("--library", required=True)
    st.add_argument("-o", "--output", help="also keep the summary here (.json, .csv, text; "
                                           "- for stdout)")
    st.add_argument("--format", choices=("json", "csv", "text"),
                    help="format of -o (default: by its extension)")
    st.add_argument("-f", "--force-overwrite", dest="force", action="store_true",
                    help="replace an existing -o file")
    st.add_argument("--trace", help="also record a trace (NVTXCORR_TRACE)")
    st.add_argument("command", nargs=argparse.REMAINDER)
    rp = sub.add_parser("report", prog="nvtxcorr report",
                        help="merge summaries and print a table on stdout")
    rp.add_argument("--by", choices=("label", "kernel", "process", "rank", "context"),
                    default="label")
    rp.add_argument("--depth", type=top_count, metavar="N",
                    help="--by context, --folded: paths cut to their outermost N ranges")
    rp.add_argument("--focus", type=regex, metavar="REGEX",
                    help="--by context, --folded: rows under a range matching REGEX, from it")
    g = rp.add_mutually_exclusive_group()
    g.add_argument("--csv", action="store_true", help="as --format csv")
    g.add_argument("--json", action="store_true", help="as --format json")
    g.add_argument("--format", choices=("json", "csv", "text"))
    g.add_argument("--suggest", action="store_true", help="a starter label table")
    g.add_argument("--folded", action="store_true",
                   help="GPU time by program context as folded stacks (flamegraph.pl)")
    g.add_argument("--hatchet", action="store_true",
                   help="the label tree (with --by context: the context tree) in Hatchet's "
                   "literal JSON (GraphFrame.from_literal)")
    g.add_argument("--diff", action="store_true",
                   help="compare two runs: FILE A B, each a file, directory, glob or list")
    rp.add_argument("--threshold", type=float, metavar="PCT",
                    help="with --diff: exit 1 when a label is PCT%% slower per launch")
    rp.add_argument("files", nargs="+", metavar="FILE.json",
                    help="summaries (and with --by rank, the Kineto traces of the same runs)")
    for p in (st, rp):
        p.add_argument("--top", type=top_count, default=20, metavar="N",
                       help="rows per table (default 20; all: every row)")
        p.add_argument("--sort", choices=("gpu", "cpu", "launches"),
                       help="row order (default: GPU time when there is some, else CPU time)")
    args = ap.parse_args(argv)
    return cmd_stat(args) if args.what == "stat" else cmd_report(args)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(1)
    except MemoryError:
        # What each file needs is checked as it is read (load); this is the merge of many
        # large ones under a memory limit.
        say("error", "out of memory (ulimit -v, or a container's limit?)")
        sys.exit(1)
