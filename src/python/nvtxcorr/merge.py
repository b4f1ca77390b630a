"""Merging summaries: rows added up by label, kernel or process (counters add, minimum and
maximum are taken, percentiles come from the summed histograms: docs/profile.md), the GPU
sections (kernel labels, graphs) and the processes behind a set of files."""
import os

from nvtxcorr.schema import BUCKETS, COUNTERS, EXACT, bucket_low, percentile

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

