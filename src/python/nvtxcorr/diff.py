"""`nvtxcorr report --diff A B [--threshold PCT]`: two runs (or windows, or sets of them) side
by side, per label or per kernel label, with the change in percent, largest absolute change
first (docs/profile.md, "Comparing runs").

Each side is a summary file, a directory (its *.json), a quoted glob or a comma-separated list;
traces among them are skipped, a file that is not a summary (the report's check, and problem()
here) is left out, and the rest compared (docs/profile.md).
Before comparing, what makes the comparison shaky is said on stderr: different processes or
ranks, GPU time on one side only, different label tables (the summaries' "label_table"
hash), GPU models or counts when the summaries name them, windows of very different length.
When the lengths differ by more than a quarter, times are compared per second of window; by
more than 4x, not at all: a window's time is the work launched in it, which does not grow with
its length (a window around one step against one of minutes, GPU work that ends after its
window closed), so per second it says how busy each window was, not how fast its launches ran
(the same work in a window 800x shorter reads +79900%). The per-launch mean is compared always, and
is what --threshold gates: exit 1 when a label present on both sides got slower per launch by
more than PCT percent."""
import glob
import os
import sys

from nvtxcorr import say
from nvtxcorr.render import cut, fit, fmt_time
from nvtxcorr.schema import load_all

LENGTH_RATIO = 1.25  # lengths further apart than this: compare rates, not totals
LENGTH_WILD = 4.0  # further apart than this: no time compared, only the per-launch mean
DIFF_NUMBERS = 76  # " A-count B-count A-time B-time change A-mean B-mean change": 2*11 6*9


def expand(side):
    """The files a side names: a directory's *.json, a glob's matches, a comma list."""
    out = []
    for part in side.split(","):
        if os.path.isdir(part):
            out += sorted(glob.glob(os.path.join(part, "*.json")))
        elif any(c in part for c in "*?["):
            out += sorted(glob.glob(part))
        elif part:
            out.append(part)
    return out


COUNT_MAX = (1 << 64) - 1  # as the report's own check: what the library's uint64_t holds


def problem(d):
    """Why a summary (already checked by the report's load) cannot be compared, or None: the
    fields only --diff reads, its window and its run's start and end, are checked here."""
    def bad(v):
        return v is not None and not (isinstance(v, int) and not isinstance(v, bool) and
                                      0 <= v <= COUNT_MAX)
    w = d.get("window")
    if w is not None and not isinstance(w, dict):
        return "'window' is not an object"
    for where, e in (("", d), ("window.", w or {})):
        for key in ("start_ns", "end_ns"):
            if bad(e.get(key)):
                return f"'{where}{key}' is not a count (0 to 2^64-1) or null"
    return None


def length_ns(summaries):
    """The time a side covers: each process's windows (or whole runs) added up, the longest
    process's sum (processes of one side run side by side)."""
    per_pid = {}
    for _, d in summaries:
        w = d.get("window") or {}
        start, end = w.get("start_ns", d.get("start_ns")), w.get("end_ns", d.get("end_ns"))
        if start is not None and end is not None and end >= start:
            key = (d.get("host"), d.get("pid"))
            per_pid[key] = per_pid.get(key, 0) + (end - start)
    return max(per_pid.values(), default=0)


def rows(summaries, by, gpu):
    """key -> [count, time]: per label, per kernel label, or per program context and label
    (the `contexts` rows: the path and the label joined with " > "); time is GPU time when
    `gpu`, else CPU time. The count is what a mean divides by: launches, but with GPU time
    --by kernel counts kernel executions (the kernel_labels section: graph nodes included),
    so a label's mean is one kernel's time, and labels that run only in graphs have one."""
    out = {}
    kernels = by == "kernel" and gpu
    for _, d in summaries:
        entries = (d.get("contexts") or [] if by == "context" else
                   d.get("kernel_labels") or [] if kernels else
                   d["kernels"] if by == "kernel" else d["labels"])
        for e in entries:
            if by == "context":
                key = " > ".join([str(c) for c in e.get("context") or []] + [str(e.get("label"))])
            else:
                key = e.get("label") or e.get("function") or e.get("name")
            r = out.setdefault(key, [0, 0])
            r[0] += (e.get("gpu_kernels") if kernels else e.get("launches")) or 0
            r[1] += (e.get("gpu_ns") or 0) if gpu else (e.get("cpu_ns") or 0)
    return out


def pct(a, b):
    if a == 0:
        return None if b == 0 else float("inf")
    return 100.0 * (b - a) / a


def fmt_pct(p):
    if p is None:
        return "-"
    if p == float("inf"):
        return "new"
    return f"{p:+.1f}%"


def warnings(a, b):
    """What differs between the sides, one line each."""
    out = []
    pa = {(d.get("host"), d.get("pid")) for _, d in a}
    pb = {(d.get("host"), d.get("pid")) for _, d in b}
    if len(pa) != len(pb):
        out.append(f"different process counts: A has {len(pa)}, B {len(pb)}")
    ra = sorted({str(d.get("rank")) for _, d in a if d.get("rank") is not None})
    rb = sorted({str(d.get("rank")) for _, d in b if d.get("rank") is not None})
    if ra != rb:
        out.append(f"different ranks: A {', '.join(ra) or 'none'}, B {', '.join(rb) or 'none'}")
    ga, gb = all(d.get("gpu_time") for _, d in a), all(d.get("gpu_time") for _, d in b)
    if ga != gb:
        out.append(f"GPU time on one side only ({'A' if ga else 'B'}): comparing CPU time")
    ta = {d.get("label_table") for _, d in a}
    tb = {d.get("label_table") for _, d in b}
    if ta != tb:
        out.append("different label tables (label_table " + "/".join(sorted(map(str, ta))) +
                   " vs " + "/".join(sorted(map(str, tb))) + "): labels may not mean the same")
    gpus_a = sorted({str(d.get("gpus")) for _, d in a if "gpus" in d})
    gpus_b = sorted({str(d.get("gpus")) for _, d in b if "gpus" in d})
    if gpus_a and gpus_b and gpus_a != gpus_b:
        out.append(f"different GPUs: A {gpus_a}, B {gpus_b}")
    return out, ga and gb


def diff(a, b, by, threshold, out, top=None):
    """Writes the comparison to out; returns the exit status (1: a slowdown past threshold)."""
    problems, gpu = warnings(a, b)
    la, lb = length_ns(a), length_ns(b)
    apart = max(la, lb) / min(la, lb) if la and lb else 1.0
    rates, times = LENGTH_RATIO < apart <= LENGTH_WILD, apart <= LENGTH_WILD
    if rates:
        problems.append(f"windows of different length (A {fmt_time(la)}, B {fmt_time(lb)}): "
                        "comparing per second and per launch, not totals")
    elif not times:
        problems.append(f"windows of very different length (A {fmt_time(la)}, B "
                        f"{fmt_time(lb)}, {apart:.0f}x): comparing per launch only (time per "
                        "second would say how busy each window was)")
    for p in problems:
        say("warn", f"--diff: {p}")
    ra, rb = rows(a, by, gpu), rows(b, by, gpu)
    what = "GPU time" if gpu else "CPU time"
    unit = "/s" if rates else ""

    def scaled(t, length):
        return t * 1e9 / length if rates else t

    table = []
    for key in set(ra) | set(rb):
        (na, ta), (nb, tb) = ra.get(key, (0, 0)), rb.get(key, (0, 0))
        if not (na or nb or ta or tb):
            continue  # in both sides' files, but nothing ran on either
        sa, sb = scaled(ta, la), scaled(tb, lb)
        ma, mb = (ta / na if na else None), (tb / nb if nb else None)
        # Largest change first: of time, or, where time is not compared, of the mean.
        change = abs(sb - sa) if times else \
            abs(mb - ma) if ma is not None and mb is not None else (ma or mb or 0)
        table.append((change, key, na, nb, sa, sb, ma, mb))
    table.sort(key=lambda r: (-r[0], str(r[1])))
    head = {"kernel": "kernel label", "context": "context > label"}.get(by, "label")
    count = "kernels" if by == "kernel" and gpu else "launches"
    # The layout rule of the other tables: 100 columns, the key cut in the middle to fit.
    width, _ = fit(DIFF_NUMBERS, [head] + [str(r[1]) for r in table])
    per = " per second" if rates else "" if times else " per launch"
    out.write(f"nvtxcorr: diff of {what}{per}, A ({len(a)} file"
              f"{'s' if len(a) != 1 else ''}) vs B ({len(b)} file{'s' if len(b) != 1 else ''})\n")
    out.write(f"{head:<{width}} {'A ' + count:>10} {'B ' + count:>10} "
              f"{'A time' + unit:>8} {'B time' + unit:>8} {'change':>8} {'A mean':>8} "
              f"{'B mean':>8} {'change':>8}\n")
    slower = []
    for i, (_, key, na, nb, sa, sb, ma, mb) in enumerate(table):
        mpct = pct(ma, mb) if ma is not None and mb is not None else None
        if top is None or i < top:
            out.write(f"{cut(str(key), width):<{width}} {na:>10} {nb:>10} "
                      f"{fmt_time(round(sa)):>8} {fmt_time(round(sb)):>8} "
                      f"{fmt_pct(pct(sa, sb)) if times else '-':>8} "
                      f"{fmt_time(round(ma)) if ma is not None else '-':>8} "
                      f"{fmt_time(round(mb)) if mb is not None else '-':>8} {fmt_pct(mpct):>8}\n")
        if threshold is not None and mpct is not None and mpct > threshold:
            slower.append((key, mpct))
    if top is not None and len(table) > top:
        out.write(f"({len(table) - top} more rows; --top N or --top all)\n")
    if threshold is None:
        return 0
    for key, p in slower:
        say("error", f"--threshold {threshold:g}: {key} is {p:.1f}% slower per "
            f"{'kernel execution' if count == 'kernels' else 'launch'}")
    return 1 if slower else 0


def html_data(a, b, threshold):
    """The diff view's data (nvtxcorr/html): per label and per context, [key, A count, B count,
    A time, B time] with the largest change of time first, and the threshold's verdict as the
    table's (per launch)."""
    problems, gpu = warnings(a, b)
    views = {}
    for by in ("label", "context"):
        ra, rb = rows(a, by, gpu), rows(b, by, gpu)
        table = []
        for k in set(ra) | set(rb):
            (na, ta), (nb, tb) = ra.get(k, (0, 0)), rb.get(k, (0, 0))
            if na or nb or ta or tb:  # in both sides' files, but nothing ran on either
                table.append([k, na, nb, ta, tb])
        table.sort(key=lambda r: (-abs(r[4] - r[3]), str(r[0])))
        if table:
            views[by] = table
    slower = []
    if threshold is not None:
        for k, na, nb, ta, tb in views.get("label", []):
            p = pct(ta / na, tb / nb) if na and nb else None
            if p is not None and p > threshold:
                slower.append([k, p])
    return {"what": "GPU time" if gpu else "CPU time", "count": "launches", "views": views,
            "warnings": problems, "threshold": threshold, "slower": slower,
            "files": [len(a), len(b)]}


def cmd_diff(args, files):
    from nvtxcorr.rank import is_trace
    if len(files) != 2:
        say("error", "--diff needs two sides: A B (each a file, a directory, a quoted glob or "
            "a comma-separated list)")
        return 2
    sides, bad = [], 0
    for side in files:
        files = []
        for f in expand(side):
            if is_trace(f):  # NVTXCORR_TRACE's files, often beside the summaries
                say("note", f"--diff: {f}: a trace, not a summary; skipped")
            else:
                files.append(f)
        loaded, side_bad = load_all(files)
        bad += side_bad
        summaries = []
        for p, d in loaded:
            why = problem(d)
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
    by = args.get("by") if args.get("by") in ("kernel", "context") else "label"
    if by == "context" and not all(d.get("contexts") for s in sides for _, d in s):
        say("warn", "--diff --by context: a side has summaries without program context rows "
            "(profile mode before program context?)")
    if args.get("html"):
        from nvtxcorr.report import html_diff
        status = html_diff(args, html_data(sides[0], sides[1], args.get("threshold")))
        return 2 if bad else status
    status = diff(sides[0], sides[1], by, args.get("threshold"), sys.stdout,
                  args.get("top", 20))
    # A file left out changes what was compared: never a pass, even when nothing got slower.
    return 2 if bad else status
