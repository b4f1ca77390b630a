#!/usr/bin/env python3
"""`nvtxcorr stat` and `nvtxcorr report`: the commands around profile mode's summaries.

  nvtxcorr_report.py stat --library LIB [-o FILE] [--trace FILE] -- command [args...]
  nvtxcorr_report.py report [--by label|kernel|process] [--top N] [--csv|--json|--suggest]
                            FILE.json...

`stat` runs the command with libnvtxcorr.so in profile mode (every process it starts writes
its own summary into a private directory), then merges the summaries and prints the text
table on stderr, like `perf stat`; its exit status is the command's (128+N after signal N).
`report` merges summaries written with NVTXCORR_PROFILE=...%p.json and prints a table on
stdout. The summary format and the merge rules are in docs/profile.md: counters add up,
minimum and maximum are taken, and percentiles come from the summed histograms, so a merge is
exact up to the histogram's bucket width. The launcher (scripts/nvtxcorr) calls this file.
"""
import argparse
import json
import os
import re
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
    """GPU time of one row: operations, their total, exact min and max; None fields when no
    summary merged into it had GPU time."""

    def __init__(self):
        self.have, self.n, self.ns, self.min, self.max = False, 0, 0, 0, 0

    def add(self, e, n_key="gpu_kernels", ns_key="gpu_ns", lo="gpu_min_ns", hi="gpu_max_ns"):
        if e.get(ns_key) is None:
            return
        self.have = True
        if e[n_key] and (self.n == 0 or e[lo] < self.min):
            self.min = e[lo]
        if e[n_key]:
            self.max = max(self.max, e[hi])
        self.n += e[n_key]
        self.ns += e[ns_key]

    def fields(self):
        if not self.have:
            return dict(gpu_ns=None, gpu_kernels=None, gpu_min_ns=None, gpu_max_ns=None,
                        gpu_mean_ns=None)
        return dict(gpu_ns=self.ns, gpu_kernels=self.n, gpu_min_ns=self.min, gpu_max_ns=self.max,
                    gpu_mean_ns=self.ns // self.n if self.n else 0)


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
        for b, count in g.get("gpu_replay_histogram", []):
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
    """(gpu_time, note) of a merge: GPU time when any process had it; which had not."""
    without = [(p, d.get("gpu_time_note")) for p, d in summaries if not d.get("gpu_time")]
    have = len(without) < len(summaries)
    if not without:
        return True, None
    why = "; ".join(sorted({str(n) for _, n in without}))
    return have, (f"{len(without)} of {len(summaries)} processes without GPU time: {why}"
                  if have else why)


# ---- reading ------------------------------------------------------------------------------------
def check_entry(e, kind, i):
    where = f"{kind}[{i}]"
    if not isinstance(e, dict):
        raise BadFile(f"{where} is not an object")
    for k in COUNTERS + ("cpu_min_ns", "cpu_max_ns"):
        if not isinstance(e.get(k), int) or e[k] < 0:
            raise BadFile(f"{where}: '{k}' is missing or not a count")
    h = e.get("cpu_histogram")
    if not isinstance(h, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p)
            and 0 <= p[0] < BUCKETS and p[1] >= 0 for p in h):
        raise BadFile(f"{where}: 'cpu_histogram' is not a list of [bucket, count]")
    if sum(p[1] for p in h) != e["launches"]:
        raise BadFile(f"{where}: histogram does not add up to 'launches'")
    names = ("label",) if kind == "labels" else ("name", "function")
    for k in names:
        if not isinstance(e.get(k), str):
            raise BadFile(f"{where}: '{k}' is missing or not a string")
    if kind == "kernels" and not (e.get("label") is None or isinstance(e.get("label"), str)):
        raise BadFile(f"{where}: 'label' is not a string or null")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except OSError as e:
        raise BadFile(e.strerror or str(e))
    except (ValueError, UnicodeDecodeError) as e:
        raise BadFile(f"not valid JSON ({e})")
    if not isinstance(d, dict) or not isinstance(d.get("labels"), list) or \
            not isinstance(d.get("kernels"), list):
        raise BadFile("not an nvtxcorr profile summary (no 'labels' and 'kernels' lists)")
    hist = d.get("histogram", {})
    if hist and (hist.get("exact_below_ns"), hist.get("sub_buckets"), hist.get("buckets")) != \
            (EXACT, SUB, BUCKETS):
        raise BadFile("histogram of another shape: written by an incompatible nvtxcorr")
    for kind in ("labels", "kernels"):
        for i, e in enumerate(d[kind]):
            check_entry(e, kind, i)
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


def cut(s, width):
    s = "-" if s is None else str(s)
    return s if len(s) <= width else s[:width - 3] + "..."


def share(part, whole):
    tenths = (part * 1000 + whole // 2) // whole if whole else 0
    return f"{tenths // 10}.{tenths % 10}%"


def text_table(rows, by, summaries, top=None):
    total = sum(r.c["cpu_ns"] for r in rows)
    n = sum(r.c["launches"] for r in rows)
    g = sum(r.c["graph_launches"] for r in rows)
    errors = sum(r.c["errors"] for r in rows)
    cap = sum(r.c["capture_launches"] for r in rows)
    procs = len(summaries)
    head = f"pid {summaries[0][1].get('pid')}" if procs == 1 else f"{procs} processes"
    out = [f"nvtxcorr: profile of {head}: {n} launches ({g} graph), {errors} errors, "
           f"{fmt_time(total)} CPU in launch calls"]
    first, second = {"label": ("label", "category"), "kernel": ("kernel", "label"),
                     "process": ("process", "host")}[by]
    out.append(f"{first:<28} {second:<11} {'launches':>9} {'share':>6} {'total':>9} "
               f"{'mean':>8} {'p50':>8} {'p99':>8}")
    shown = [r for r in rows if r.c["launches"]][:top] if top else [r for r in rows
                                                                      if r.c["launches"]]
    for r in shown:
        f = r.fields()
        a, b = (r.key[0], r.key[1]) if by != "kernel" else (r.key[1], r.key[2])
        out.append(f"{cut(a, 28):<28} {cut(b, 11):<11} {f['launches']:>9} "
                   f"{share(f['cpu_ns'], total):>6} {fmt_time(f['cpu_ns']):>9} "
                   f"{fmt_time(f['cpu_mean_ns']):>8} {fmt_time(f['cpu_p50_ns']):>8} "
                   f"{fmt_time(f['cpu_p99_ns']):>8}")
    if top and len([r for r in rows if r.c["launches"]]) > top:
        out.append(f"({len([r for r in rows if r.c['launches']]) - top} more rows; --top)")
    skipped = sum(k["launches"] for _, d in summaries for k in d["kernels"]
                  if k.get("label") is None)
    if by == "label" and skipped:
        out.append(f'{skipped} launches of kernels whose rule says "-" are in no label '
                   "(see --by kernel)")
    if cap:
        out.append(f"{cap} launches made during stream capture (recorded, not run) not counted")
    out += gpu_text(summaries, top)
    return "\n".join(out) + "\n"


def gpu_text(summaries, top=None):
    have, note = gpu_note(summaries)
    if not have:
        return []
    kl, graphs = gpu_sections(summaries)
    total = sum(e["gpu_ns"] for e in kl)
    ops = sum(e["gpu_kernels"] for e in kl)
    dropped = sum((d.get("totals") or {}).get("gpu_dropped_records") or 0 for _, d in summaries)
    out = ["", f"GPU time: {fmt_time(total)} in {ops} kernels; {dropped} records dropped by CUPTI"]
    if note:
        out.append(f"({note})")
    head = (f"{'label':<28} {'category':<11} {'kernels':>9} {'share':>6} {'total':>9} "
            f"{'mean':>8} {'min':>8} {'max':>8}")

    def row(label, category, f):
        return (f"{cut(label, 28):<28} {cut(category, 11):<11} {f['gpu_kernels']:>9} "
                f"{share(f['gpu_ns'], total):>6} {fmt_time(f['gpu_ns']):>9} "
                f"{fmt_time(f['gpu_mean_ns']):>8} {fmt_time(f['gpu_min_ns']):>8} "
                f"{fmt_time(f['gpu_max_ns']):>8}")
    launch = [dict(label=r.key[0], category=r.key[1], **r.fields())
              for r in merge(summaries, "label")]
    launch = sorted((e for e in launch if e["gpu_kernels"]), key=lambda e: -e["gpu_ns"])
    out += ["by launch label (a graph launch's label gets all its kernels)", head]
    out += [row(e["label"], e["category"], e) for e in launch[:top]]
    out += ["by kernel label (every kernel that ran, graph nodes included)", head]
    out += [row(e["label"], e["category"], e) for e in kl[:top]]
    if graphs:
        out.append(f"{'graph':<28} {'replays':>8} {'kernels/replay':>15} "
                   f"{'per replay: mean':>17} {'p50':>8} {'p99':>8}")
        for g in graphs[:top]:
            out.append(f"{cut(g['label'], 28):<28} {g['replays']:>8} {g['kernels_per_replay']:>15} "
                       f"{fmt_time(g['gpu_replay_mean_ns']):>17} "
                       f"{fmt_time(g['gpu_replay_p50_ns']):>8} "
                       f"{fmt_time(g['gpu_replay_p99_ns']):>8}")
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
    gcols = ["gpu_ns", "gpu_kernels", "gpu_min_ns", "gpu_max_ns", "gpu_mean_ns"]

    def gpu(f):
        return ["" if f[c] is None else f[c] for c in gcols] + ["", ""]
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
    return {"nvtxcorr_profile": 1, "merged": [
        {"file": p, "pid": d.get("pid"), "host": d.get("host"), "command": d.get("command")}
        for p, d in summaries], "gpu_time": have, "gpu_time_note": note,
        "histogram": {"exact_below_ns": EXACT, "sub_buckets": SUB, "buckets": BUCKETS},
        "labels": labels, "kernels": kernels, "kernel_labels": kernel_labels, "graphs": graphs}


# ---- --suggest --------------------------------------------------------------------------------
# (family, ERE that both Python and POSIX read alike, label, category). First match wins, as
# in a label table; "other" takes what is left.
FAMILIES = [
    ("communication", r"nccl|[Aa]ll[Rr]educe|all_reduce|[Aa]ll[Gg]ather|all_gather|"
     r"[Rr]educe[Ss]catter|reduce_scatter|[Aa]ll[Tt]o[Aa]ll|all_to_all", "comm", "comm"),
    ("attention", r"flash|[Aa]ttention|attn|[Aa]ttn|fmha|sdpa|mha_", "attention", "attention"),
    ("gemm", r"gemm|[Gg]emm|gemv|[Gg]emv|matmul|[Mm]at[Mm]ul|xmma|cutlass|cublas", "matmul",
     "matmul"),
    ("norm", r"norm|[Nn]orm", "norm", "norm"),
    ("Triton-generated", r"^triton_", "triton.{function}", "triton"),
    ("elementwise", r"elementwise|[Ee]lementwise|pointwise|vectorized|unrolled|[Ff]ill|"
     r"copy|[Cc]opy|add|mul|relu|gelu|silu|act", "elementwise", "elementwise"),
]


def classify(k, families):
    for fam in families:
        if any(re.search(fam[1], k[n]) for n in ("function", "name")):
            return fam[0]
    return "other"


def suggest(summaries):
    # Kernels that got no rule: their label is the default, the base name.
    unruled = {}
    for _, d in summaries:
        for k in d["kernels"]:
            if k.get("label") == k["function"] and k.get("category") is None:
                e = unruled.setdefault(k["name"], dict(k, launches=0, cpu_ns=0))
                e["launches"] += k["launches"]
                e["cpu_ns"] += k["cpu_ns"]
    order = list(FAMILIES)
    for _ in range(3):  # rules are tried in time order, so classify in that order
        groups = {}
        for k in unruled.values():
            groups.setdefault(classify(k, order), []).append(k)
        time_of = {f: sum(k["cpu_ns"] for k in ks) for f, ks in groups.items()}
        new = sorted((f for f in FAMILIES if f[0] in groups), key=lambda f: -time_of[f[0]])
        if new == order:
            break
        order = new
    total = sum(time_of.values()) or 1
    out = ["# Starter label table from nvtxcorr report --suggest: one rule per family of",
           "# kernels that no rule matched, most CPU time in launch calls first. Check with",
           "# `nvtxcorr check FILE`, then edit labels and split families as you need."]
    for fam in order + [("other", None, "{function}", "other")]:
        ks = sorted(groups.get(fam[0], []), key=lambda k: -k["cpu_ns"])
        if not ks:
            continue
        t = sum(k["cpu_ns"] for k in ks)
        funcs = list(dict.fromkeys(k["function"] for k in ks))
        names = ", ".join(funcs[:3]) + (", ..." if len(funcs) > 3 else "")
        out.append("")
        out.append(f"# {fam[0]}: {len(ks)} kernel(s), {sum(k['launches'] for k in ks)} launches, "
                   f"{fmt_time(t)} CPU ({share(t, total)}): {names}")
        pattern = f"re:{fam[1]}" if fam[1] else "*"
        out.append(f'{pattern}  "{fam[2]}"  category={fam[3]}')
    if not unruled:
        out.append("# (every kernel already matched a rule)")
    return "\n".join(out) + "\n"


# ---- commands ---------------------------------------------------------------------------------
def write_exclusive(path, text):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        say("error", f"{path}: {'exists' if e.errno == 17 else e.strerror}; not written")
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return True


def render(summaries, path_or_format, by="label", top=None):
    fmt = path_or_format
    if fmt.endswith(".json") or fmt == "json":
        return json.dumps(json_object(summaries), indent=1) + "\n"
    if fmt.endswith(".csv") or fmt == "csv":
        return csv_text(summaries)
    return text_table(merge(summaries, by), by, summaries, top)


def cmd_report(args):
    summaries, bad = load_all(args.files)
    if summaries:
        if args.suggest:
            sys.stdout.write(suggest(summaries))
        else:
            fmt = "json" if args.json else "csv" if args.csv else "text"
            sys.stdout.write(render(summaries, fmt, args.by, args.top))
    elif not bad:
        say("error", "no summary given")
    return 1 if bad or not summaries else 0


def cmd_stat(args):
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        say("error", "stat needs a command: nvtxcorr stat [options] -- command [args...]")
        return 2
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
    if args.trace:
        env["NVTXCORR_TRACE"] = args.trace
    # The terminal's Ctrl-C reaches the command directly; TERM and HUP sent to us are passed on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        child = subprocess.Popen(cmd, env=env, restore_signals=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    except OSError as e:
        say("error", f"{cmd[0]}: {e.strerror}")
        return 127 if isinstance(e, FileNotFoundError) else 126
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    rc = child.wait()
    status = 128 - rc if rc < 0 else rc
    files = sorted(os.path.join(tmp, n) for n in os.listdir(tmp))
    summaries, _ = load_all(files)
    if not summaries:
        say("warn", "no summary: the command made no CUDA call that nvtxcorr saw")
    else:
        sys.stderr.write(render(summaries, "text"))
        if args.output:
            if args.output.endswith(".json") and len(summaries) == 1:
                text = open(summaries[0][0], encoding="utf-8").read()
            else:
                text = render(summaries, args.output)
            write_exclusive(args.output, text)
    for f in files:
        os.unlink(f)
    return status


def main(argv):
    ap = argparse.ArgumentParser(prog="nvtxcorr")
    sub = ap.add_subparsers(dest="what", required=True)
    st = sub.add_parser("stat", help="run a command in profile mode, print the table on stderr")
    st.add_argument("--library", required=True)
    st.add_argument("-o", "--output", help="also keep the summary here (.json, .csv, text)")
    st.add_argument("--trace", help="also record a trace (NVTXCORR_TRACE)")
    st.add_argument("command", nargs=argparse.REMAINDER)
    rp = sub.add_parser("report", help="merge summaries and print a table on stdout")
    rp.add_argument("--by", choices=("label", "kernel", "process"), default="label")
    rp.add_argument("--top", type=int, metavar="N")
    g = rp.add_mutually_exclusive_group()
    g.add_argument("--csv", action="store_true")
    g.add_argument("--json", action="store_true")
    g.add_argument("--suggest", action="store_true", help="a starter label table")
    rp.add_argument("files", nargs="+", metavar="FILE.json")
    args = ap.parse_args(argv)
    return cmd_stat(args) if args.what == "stat" else cmd_report(args)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(1)
