"""Run by tests/e2e/test_kineto.py with the analysis venv's Python (build/venv-analysis, where
scripts/test installs holistictraceanalysis and llnl-hatchet): loads a directory of traces in
HTA's TraceAnalysis, runs the analyses, and prints what they found as JSON on stdout, in
nanoseconds, for the test to compare with nvtxcorr's own summaries.

usage: hta_check.py TRACE_DIR            the HTA analyses
       hta_check.py --cpu TRACE_DIR      only those of the CPU side (a trace without GPU time)
       hta_check.py --args TRACE_DIR     every GPU operation's args as HTA's complete parser
                                         reads them (grid, block)
       hta_check.py --hatchet FILE       the Hatchet tree: GraphFrame.from_literal's totals
       hta_check.py --iterations TRACE_DIR  HTA's iterations (ProfilerStep#N spans): by rank,
                                         each iteration's CPU events and GPU operations by name
"""
import json
import logging
import os
import sys
import warnings

# HTA rounds fractional microseconds (ts up, end down: hta/common/trace_parser.py,
# round_down_time_stamps) unless told not to; nvtxcorr's durations are exact to the ns.
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)


def ns(us):
    return round(us * 1000)


def hta(trace_dir, cpu_only=False):
    from hta.trace_analysis import TraceAnalysis

    t = TraceAnalysis(trace_dir=trace_dir)
    out = {"ranks": sorted(int(r) for r in t.t.traces), "kernels": {}, "temporal": {},
           "gpu_annotations": {}, "cpu_annotations": {}, "counts": {}}
    sym = t.t.symbol_table.sym_table
    for rank, df in t.t.traces.items():  # counts, from HTA's own frame: a GPU op has a stream
        gpu = df[df["stream"].ne(-1)]
        counts = {}
        for name in gpu["name"]:
            counts[sym[name]] = counts.get(sym[name], 0) + 1
        out["counts"][str(rank)] = counts
    if cpu_only:
        kinds = (("cpu_annotations", False),)
    else:
        kinds = (("gpu_annotations", True), ("cpu_annotations", False))
        gpu_analyses(t, out)
    for key, gpu in kinds:
        df = t.get_gpu_user_annotation_breakdown(use_gpu_annotation=gpu, visualize=False,
                                                 duration_ratio=1.0, num_kernels=1 << 30)
        if df is None:
            continue
        for _, row in df.iterrows():
            n = round(row["sum (us)"] / row["mean (us)"]) if row["mean (us)"] else 0
            out[key].setdefault(str(int(row["rank"])), {})[row["name"]] = [n, ns(row["sum (us)"])]
    return out


def gpu_analyses(t, out):
    _, kernels = t.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0,
                                            num_kernels=1 << 30, include_memory_kernels=True)
    for _, row in kernels.iterrows():
        out["kernels"].setdefault(str(row["rank"]), {})[row["name"]] = ns(row["sum (us)"])
    temporal = t.get_temporal_breakdown(visualize=False)
    for _, row in temporal.iterrows():
        out["temporal"][str(int(row["rank"]))] = {
            "idle_ns": ns(row["idle_time(us)"]), "compute_ns": ns(row["compute_time(us)"]),
            "non_compute_ns": ns(row["non_compute_time(us)"]),
            "kernel_ns": ns(row["kernel_time(us)"])}


def iterations(trace_dir):
    """The iteration HTA gives each event (its "iteration" column: a CPU event the step whose
    span holds it, a GPU operation its launch's), counted by iteration, side and name; every
    step kept (include_last_profiler_step) and the steps themselves left out."""
    from hta.trace_analysis import TraceAnalysis

    t = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    sym = t.t.symbol_table.sym_table
    out = {}
    for rank, df in t.t.traces.items():
        r = out.setdefault(str(rank), {})
        for _, e in df.iterrows():
            name = sym[e["name"]]
            if name.startswith("ProfilerStep"):
                r.setdefault("steps", []).append(name)
                continue
            side = "gpu" if e["stream"] != -1 else "cpu"
            it = r.setdefault(str(int(e["iteration"])), {}).setdefault(side, {})
            it[name] = it.get(name, 0) + 1
    return out


def gpu_args(trace_dir):
    """Each GPU operation's name, correlation, grid and block as HTA reads them with
    ParserConfig's ARGS_COMPLETE (the "grid" and "block" args are objects there: threads::grid
    and threads::block of hta/configs/event_args_formats/event_args_1.0.0.yaml), by rank."""
    from hta.common.trace import Trace
    from hta.configs.parser_config import ParserConfig

    t = Trace(trace_dir=trace_dir, parser_config=ParserConfig(ParserConfig.ARGS_COMPLETE))
    t.parse_traces()
    sym = t.symbol_table.sym_table
    def dim3(v):  # an absent one is its default, the text "[]"
        return list(v) if not isinstance(v, str) else json.loads(v)

    out = {}
    for rank, df in t.traces.items():
        gpu = df[df["stream"].ne(-1)]
        out[str(rank)] = sorted([sym[r["name"]], int(r["correlation"]), dim3(r["grid"]),
                                 dim3(r["block"])] for _, r in gpu.iterrows())
    return out


def hatchet(path):
    """Each node's metrics by its frame's path (the label; "" the root), and the inclusive
    ones as Hatchet itself computes them from the exclusive ones."""
    import hatchet as ht

    with open(path) as f:
        gf = ht.GraphFrame.from_literal(json.load(f))
    nodes = {}
    for n in gf.graph.traverse():
        row = gf.dataframe.loc[n]
        nodes[n.frame["path"]] = {k: int(row[k]) for k in ("time", "time (inc)", "count",
                                                           "count (inc)", "launches")}
    gf.update_inclusive_columns()
    for n in gf.graph.traverse():
        nodes[n.frame["path"]]["hatchet time (inc)"] = int(gf.dataframe.loc[n]["time (inc)"])
    return {"roots": [r.frame["name"] for r in gf.graph.roots], "nodes": nodes}


if __name__ == "__main__":
    if sys.argv[1] == "--hatchet":
        print(json.dumps(hatchet(sys.argv[2])))
    elif sys.argv[1] == "--iterations":
        print(json.dumps(iterations(sys.argv[2])))
    elif sys.argv[1] == "--args":
        print(json.dumps(gpu_args(sys.argv[2])))
    elif sys.argv[1] == "--cpu":
        print(json.dumps(hta(sys.argv[2], cpu_only=True)))
    else:
        print(json.dumps(hta(sys.argv[1])))
