"""The profile summary's schema, declared once (docs/profile.md, "Summary format"): the fields
of a label's and a kernel's row, of a graph's, of the totals, their kinds, and the histogram's
bucket rule; the report's checks of every file it reads follow from them.
tests/unit/test_schema.py holds src/profile/output/summary_writer.h (the library's writers' field
tables) and docs/profile.md to these lists, so neither can drift from them unnoticed."""
import itertools
import json
import os

from nvtxcorr import say

# The histogram (src/profile/base/histogram.h: PROF_EXACT, PROF_SUB, PROF_TOP_OCTAVE): durations
# below EXACT ns have a bucket each; above, each power of two is split into SUB buckets.
EXACT, SUB, TOP_OCTAVE = 8, 4, 40
BUCKETS = EXACT + SUB * (TOP_OCTAVE - 3)

# A row's fields (labels[], kernels[]), in the order of the JSON object and of the CSV columns:
# (key, kind). Kinds: cpu (always a count), gpu (a count, or null without GPU time), and the
# histograms (lists of [bucket, count]).
ROW_FIELDS = (
    ("launches", "cpu"), ("graph_launches", "cpu"), ("errors", "cpu"),
    ("capture_launches", "cpu"), ("cpu_ns", "cpu"), ("cpu_min_ns", "cpu"), ("cpu_max_ns", "cpu"),
    ("cpu_mean_ns", "cpu"), ("cpu_p50_ns", "cpu"), ("cpu_p99_ns", "cpu"),
    ("gpu_ns", "gpu"), ("gpu_kernels", "gpu"), ("gpu_min_ns", "gpu"), ("gpu_max_ns", "gpu"),
    ("gpu_mean_ns", "gpu"), ("gpu_p50_ns", "gpu"), ("gpu_p99_ns", "gpu"),
    ("gpu_histogram", "gpu_hist"), ("cpu_histogram", "cpu_hist"))
GRAPH_FIELDS = (
    ("replays", "gpu"), ("gpu_kernels", "gpu"), ("kernels_per_replay", "gpu"), ("gpu_ns", "gpu"),
    ("gpu_replay_min_ns", "gpu"), ("gpu_replay_max_ns", "gpu"), ("gpu_replay_mean_ns", "gpu"),
    ("gpu_replay_p50_ns", "gpu"), ("gpu_replay_p99_ns", "gpu"),
    ("gpu_replay_histogram", "gpu_hist"))
TOTAL_FIELDS = (
    ("launches", "cpu"), ("graph_launches", "cpu"), ("errors", "cpu"),
    ("capture_launches", "cpu"), ("cpu_ns", "cpu"), ("cpu_own_ns", "cpu"),
    ("unlabelled_launches", "cpu"), ("other_launches", "cpu"), ("other_graph_launches", "cpu"),
    ("uncounted_at_start", "cpu"), ("gpu_ns", "gpu"), ("gpu_kernels", "gpu"),
    ("gpu_dropped_records", "gpu"), ("gpu_incomplete_records", "gpu"),
    ("gpu_uncorrelated_kernels", "gpu"), ("gpu_uncorrelated_ns", "gpu"),
    ("gpu_not_hooked_kernels", "gpu"), ("gpu_not_hooked_ns", "gpu"), ("gpu_unlabelled_ns", "gpu"),
    ("gpu_unlabelled_launch_ns", "gpu"), ("context_truncated", "cpu"), ("context_other", "cpu"),
    ("context_unbalanced_pops", "cpu"), ("context_long_messages", "cpu"),
    ("context_invalid_utf8", "cpu"))

# What a merge adds up (the rest is taken as min and max, or recomputed from the histograms),
# and the GPU fields that are all null or all counts in a row.
COUNTERS = ("launches", "graph_launches", "errors", "capture_launches", "cpu_ns")
GPU_FIELDS = ("gpu_ns", "gpu_kernels", "gpu_min_ns", "gpu_max_ns")


class BadFile(Exception):
    pass


# ---- the histogram: a bucket's low edge; percentiles of a (merged) histogram ------------------
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

