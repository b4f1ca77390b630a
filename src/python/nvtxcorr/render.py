"""The report's output formats. The summary's text table (by label) is the library's own,
drawn by nvtxcorr-tool render from the summaries' JSON with the C writer the library uses at
exit (summary_text.c), so stat, report and the exit table are one drawing (docs/design.md,
Front end), and so is the program-context tree of stat and --by context (summary_tree.c,
through nvtxcorr-tool render --tree); here are CSV, JSON, the views the library never draws
(--by kernel, --by process) and the helpers of the other views. The layout rule
is docs/profile.md's ("CSV and text"): at most 100 columns, numbers at fixed widths on the
right, the text columns sharing the rest, a value too long for its column cut in the middle."""
import json
import re

from nvtxcorr.context import context_list, context_notes, merge_contexts
from nvtxcorr.merge import Entry, gpu_note, gpu_sections, merge, merged_totals, processes
from nvtxcorr.schema import BUCKETS, EXACT, SUB

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


# The text tables' one layout rule (docs/profile.md, "CSV and text"; src/profile/base/out.c
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


def whose(summaries):
    """The head's "pid N", "N processes", with the windows when the summaries are windows
    (several windows of one process are one process)."""
    procs = processes(summaries)
    distinct = {(p.get("host"), p.get("pid")) if p.get("pid") is not None else id(p)
                for p in procs}
    windows = sum(1 for _, d in summaries if isinstance(d.get("window"), dict))
    head = f"pid {procs[0].get('pid')}" if len(distinct) == 1 else f"{len(distinct)} processes"
    return head + (f" ({windows} windows)" if windows > 1 else "")


def text_table(rows, by, summaries, top=None, sort=None):
    # The head is the summaries' totals, as the library's own table has it: the same in
    # every view (--by kernel's rows also hold the kernels of "-" rules, --by label's not).
    totals = merged_totals(summaries)

    def whole(key):
        v = totals.get(key)
        return v if v is not None else sum(r.c[key] for r in rows)
    n, g, errors = whole("launches"), whole("graph_launches"), whole("errors")
    cap = sum(r.c["capture_launches"] for r in rows)
    out = [f"nvtxcorr: profile of {whose(summaries)}: {n} launches ({g} graph), {errors} "
           f"errors, {fmt_time(whole('cpu_ns'))} CPU in launch calls"]
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
            "contexts": context_list(merge_contexts(summaries))}


def tool_render(args, data):
    """What nvtxcorr-tool render ARGS draws of data (a summary's JSON object) with the
    library's own text writer."""
    import subprocess
    from nvtxcorr import TOOL
    from nvtxcorr.cli import fail
    if not TOOL:
        fail(2, "nvtxcorr-tool not found (build or install first): it draws the text table")
    p = subprocess.run([TOOL, "render", *args, "-"],
                       input=json.dumps(data, allow_nan=False).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail(2, f"nvtxcorr-tool render: {p.stderr.decode(errors='replace').strip()}")
    return p.stdout.decode("utf-8", errors="replace")


def summary_text(summaries, top=None, sort=None, gpu_first=False, contexts=True):
    """The summary's text table by nvtxcorr-tool render (the library's writer) from the
    summaries' JSON, merged when there are several: top rows per table and children per
    context (None: all), sort (None: each table by its own time, as the library), stat's GPU
    tables first, and the program-context tree when contexts and a row has a context."""
    argv = ["--of", whose(summaries), "--top", str(top) if top else "all"]
    argv += (["--sort", sort] if sort else []) + (["--gpu-first"] if gpu_first else [])
    argv += [] if contexts else ["--no-contexts"]
    return tool_render(argv, json_object(summaries))


def context_text(rows, gpu, top=None):
    """The program-context tree of rows ({(path, label): counts}, as context.merge_contexts
    merged, focused and cut them), drawn by nvtxcorr-tool render --tree (summary_tree.c, as the
    library draws it at exit): each node's GPU time inclusive and exclusive, kernels and
    launches, kernel labels as leaves, largest first, top children per node (None: all)."""
    data = {"nvtxcorr_profile": 1, "gpu_time": bool(gpu), "contexts": context_list(rows)}
    return tool_render(["--tree", "--top", str(top) if top else "all"], data)


def render(summaries, fmt, by="label", top=None, sort=None, gpu_first=False, contexts=True):
    if fmt == "json":
        return json.dumps(json_object(summaries), indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        return csv_text(summaries)
    if by == "label":
        return summary_text(summaries, top, sort, gpu_first, contexts)
    return text_table(merge(summaries, by), by, summaries, top, sort)

