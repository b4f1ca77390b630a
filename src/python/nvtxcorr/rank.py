"""--by rank: each label's time per rank, the slowest rank marked. A summary's rank is its own
`rank` field (the library writes RANK, OMPI_COMM_WORLD_RANK, ...), else its Kineto trace's
distributedInfo, matched by pid."""
import re

from nvtxcorr import say
from nvtxcorr.merge import merge
from nvtxcorr.render import WIDTH, cut, fmt_time, shown

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


def rank_of(d):
    """A summary's rank (its `rank` field: RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID or PMI_RANK
    as the process saw it) as a number, or None."""
    r = d.get("rank")
    if isinstance(r, int) and not isinstance(r, bool) and r >= 0:
        return r
    if isinstance(r, str) and r.strip().isdigit():
        return int(r.strip())
    return None


def rank_name(r):
    """How every view names a rank."""
    return f"rank {r}"


def by_rank(summaries, pid_rank, top):
    """GPU time (CPU time without it) per label per rank, the slowest rank of each label
    marked, and a warning when ranks are missing. A summary's rank is its own `rank`, else its
    trace's (distributedInfo, matched by pid); the world size is the traces' when given, else
    one more than the highest rank. Ranks that do not fit in 100 columns beside the labels go
    to further blocks of the same table."""
    ranks, world = {}, 0
    for p, d in summaries:
        r, w = pid_rank.get(d.get("pid"), (None, 0))
        own = rank_of(d)
        if own is not None:
            r = own
        if r is None:
            say("warn", f"{p}: no rank (no RANK in its environment, and no trace of pid "
                f"{d.get('pid')} given); left out of --by rank")
            continue
        ranks.setdefault(r, []).append((p, d))
        world = max(world, w)
    if not ranks:
        say("error", "--by rank: no summary has a rank (RANK, OMPI_COMM_WORLD_RANK, "
            "SLURM_PROCID or PMI_RANK in its environment), nor a Kineto trace to take it from")
        return None
    have = sorted(ranks)
    world = max(world, have[-1] + 1)
    missing = missing_ranks(have, world)
    if missing:
        say("warn", f"ranks missing: {missing}")
    gpu = any(d.get("gpu_time") for _, d in summaries)
    unit = "GPU" if gpu else "CPU"
    key = "gpu_ns" if gpu else "cpu_ns"
    per = {r: {e.key[0]: e.fields() for e in merge(ranks[r], "label")} for r in have}
    labels = sorted({k for v in per.values() for k in v},
                    key=lambda k: (-max(per[r].get(k, {}).get(key) or 0 for r in have), k))
    more = 0
    if top is not None:
        labels, more = labels[:top], max(0, len(labels) - top)
    width = min(max([len(shown(k)) for k in labels] + [5]), 40)
    cells = {k: [per[r].get(k, {}).get(key) or 0 for r in have] for k in labels}
    per_block = max(1, (WIDTH - width) // 13)
    out = [f"{unit} time per label and rank (* the slowest rank)"]
    for start in range(0, len(have), per_block):
        block = range(start, min(start + per_block, len(have)))
        if start:
            out.append("")
        out.append(f"{'label':<{width}} " +
                   " ".join(f"{rank_name(have[i]):>12}" for i in block))
        for k in labels:
            vals = cells[k]
            slow = max(vals) if len(set(vals)) > 1 else None  # all equal: none is the slowest
            out.append(f"{cut(k, width):<{width}} " + " ".join(
                f"{fmt_time(vals[i]) + ('*' if vals[i] == slow else ' '):>12}" for i in block))
    if more:
        out.append(f"({more} more rows; --top N or --top all)")
    return "\n".join(out) + "\n"
