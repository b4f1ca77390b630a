"""--hatchet: the label tree, or with --by context the program-context tree, in Hatchet's
literal JSON (llnl-hatchet, GraphFrame.from_literal)."""
import json
import os

from nvtxcorr.context import merge_contexts
from nvtxcorr.merge import merge, merged_totals

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

