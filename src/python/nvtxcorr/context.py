"""Program context (docs/profile.md): the summaries' `contexts` rows merged by path and label,
as a tree (drawn by nvtxcorr-tool render --tree: render.context_text), folded stacks, CSV or
JSON."""
import csv
import io
import json

from nvtxcorr.merge import processes

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


def context_list(rows):
    """rows as the JSON's `contexts` array: sorted by path, then label, which is the order the
    tree's drawing (summary_tree.c) reads them in."""
    return [{"context": list(p), "label": lab, **c} for (p, lab), c in sorted(rows.items())]


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



def by_context(summaries, fmt, depth, focus, top):
    rows = merge_contexts(summaries, depth, focus)
    gpu = any(d.get("gpu_time") for _, d in summaries)
    if fmt == "json":
        return json.dumps({"processes": processes(summaries), "contexts": context_list(rows)},
                          indent=1) + "\n"
    if fmt == "csv":
        w = io.StringIO()
        cw = csv.writer(w, lineterminator="\n")
        cw.writerow(["context", "label", "launches", "gpu_kernels", "gpu_ns", "cpu_ns"])
        for (p, lab), c in sorted(rows.items()):
            cw.writerow([" > ".join(p), lab, c["launches"], c["gpu_kernels"], c["gpu_ns"],
                         c["cpu_ns"]])
        return w.getvalue()
    from nvtxcorr.render import context_text
    return context_text(rows, gpu, top)


def context_notes(summaries):
    return sorted({d["context_note"] for _, d in summaries if d.get("context_note")})


