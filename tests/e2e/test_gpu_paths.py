"""GPU time on every path a kernel takes to the GPU (scenarios/scn_paths.c): a static runtime
inside the program, a library with a runtime of its own (the fake cuBLAS), the driver
directly, dlsym, the entry-point API, the shared runtime, graphs through each, and a launch no
hook sees. Each path alone and all of them mixed on threads, exact to the nanosecond against
the fake CUPTI's own log of the records it made (FAKECUPTI_LOG); and what CUPTI was asked to
do for the calls that are not launches (FAKECUPTI_STATS): nothing."""
import collections
import json
import os
import re
import tempfile

from harness import check, scenario
from test_cupti import fake_cupti

# Each path alone; a launch no hook sees after one it does (CUPTI starts at the first launch
# nvtxcorr sees).
PATHS = ["static", "static-graph", "blas", "blas-captured", "blas-graph", "driver", "dlsym",
         "entry-point", "shared", "driver,unhooked"]
# Kernel -> the label table's label (LABELS below).
KERNEL_LABEL = {"static_launch_kernel": "static.launch", "static_chevron_kernel": "static.chevron",
                "static_ex_kernel": "static.ex", "static_node_kernel": "static.node",
                "gemmSN_NN_kernel": "blas.gemm", "splitKreduce_kernel": "blas.reduce",
                "driver_kernel": "driver", "dlsym_kernel": "dlsym", "ep_kernel": "entry_point",
                "alpha": "shared", "unhooked_kernel": "unhooked"}
# A replayed graph's launch label, by its first node's kernel.
GRAPH_LABEL = {"static_node_kernel": "static.graph", "gemmSN_NN_kernel": "blas.graph"}
LABELS = "\n".join([f"{k}  {v}" for k, v in KERNEL_LABEL.items()] +
                   ["graph:top=static_node*  static.graph", "graph:top=gemmSN*  blas.graph"]) + "\n"
# The calls the fake driver and runtimes make that are not launches.
NOT_LAUNCHES = {"cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxGetDevice", "cuStreamIsCapturing",
                "cuStreamIsCapturing_ptsz", "cuStreamSynchronize", "cuStreamSynchronize_ptsz",
                "cuStreamQuery", "cuStreamQuery_ptsz", "cudaStreamIsCapturing",
                "cudaStreamIsCapturing_ptsz", "cudaGetLastError", "cudaPeekAtLastError",
                "cudaSetDevice", "cudaGetDevice", "cudaDeviceSynchronize", "cudaMemcpyAsync",
                "cudaMemcpyAsync_ptsz", "cudaMemsetAsync", "cudaMemsetAsync_ptsz",
                "cudaStreamSynchronize", "cudaStreamSynchronize_ptsz"}


def paths_run(env, path, threads=1, iterations=2, extra=None):
    """scn_paths under profile mode with the fake CUPTI: (run, summary, log ops, stats)."""
    tmp = tempfile.mkdtemp(prefix="nvtxcorr-paths-")
    labels = os.path.join(tmp, "paths.conf")
    with open(labels, "w") as f:
        f.write(LABELS)
    log, stats, out = (os.path.join(tmp, n) for n in ("log", "stats", "p.json"))
    e = {"NVTXCORR_PROFILE": out, "NVTXCORR_GPU": "1", "NVTXCORR_LABELS": labels,
         "NVTXCORR_CUPTI_LIBRARY": fake_cupti(env), "FAKECUPTI_LOG": log,
         "FAKECUPTI_STATS": stats}
    e.update(extra or {})
    run = env.run_ok([env.prog("scn_paths"), path, str(threads), str(iterations)], tool=False,
                     env=e, balanced=False)
    with open(out) as f:
        d = json.load(f)
    ops = []
    with open(log) as f:
        for line in f:
            _, corr, name, start, end, graph, node = line.rstrip("\n").split("\t")
            ops.append((int(corr), name, int(end) - int(start), int(graph)))
    st = collections.Counter()
    with open(stats) as f:
        for line in f:
            parts = line.split()
            st[tuple(parts[:-1])] = int(parts[-1])
    return run, d, ops, st


def expected(ops):
    """From the fake's log alone: {launch label: (kernels, ns)}, {kernel label: (kernels, ns)}.
    A graph replay's operations share its correlation id; its first node names the graph."""
    first = {}
    for corr, name, _, graph in ops:
        if graph:
            first.setdefault(corr, name)
    by_launch, by_kernel = collections.Counter(), collections.Counter()
    n_launch, n_kernel = collections.Counter(), collections.Counter()
    for corr, name, ns, graph in ops:
        launch = (GRAPH_LABEL[first[corr]] if graph else
                  "[not hooked]" if name == "unhooked_kernel" else KERNEL_LABEL[name])
        by_launch[launch] += ns
        n_launch[launch] += 1
        by_kernel[KERNEL_LABEL[name]] += ns
        n_kernel[KERNEL_LABEL[name]] += 1
    return ({k: (n_launch[k], v) for k, v in by_launch.items()},
            {k: (n_kernel[k], v) for k, v in by_kernel.items()})


def views(d):
    def view(entries):
        return {e["label"]: (e["gpu_kernels"], e["gpu_ns"]) for e in entries if e["gpu_kernels"]}
    return view(d["labels"]), view(d["kernel_labels"])


def check_exact(what, d, ops):
    check(ops, f"{what}: the fake CUPTI logged no operation")
    launch, kernel = expected(ops)
    got_launch, got_kernel = views(d)
    t = d["totals"]
    check(d["gpu_time"] is True and d["gpu_correlation"] == "callbacks",
          f"{what}: gpu_time {d['gpu_time']}, correlation {d.get('gpu_correlation')}, "
          f"note {d['gpu_time_note']}")
    check(got_launch == launch, f"{what}: by launch label\n  got      {got_launch}\n"
          f"  expected {launch}\n  totals {d['totals']}\n  note {d['gpu_time_note']}")
    check(got_kernel == kernel, f"{what}: by kernel label\n  got      {got_kernel}\n"
          f"  expected {kernel}")
    check(t["gpu_uncorrelated_kernels"] == 0 and t["gpu_ns"] == sum(o[2] for o in ops),
          f"{what}: totals {t}")
    unhooked = [o for o in ops if o[1] == "unhooked_kernel"]
    check(t["gpu_not_hooked_kernels"] == len(unhooked) and
          t["gpu_not_hooked_ns"] == sum(o[2] for o in unhooked), f"{what}: not hooked {t}")


def check_launches_only(what, st):
    """CUPTI called back for launches only, and wrote no API record at all."""
    framed = {k[1] for k in st if k[0] == "frames"}
    check(framed & NOT_LAUNCHES, f"{what}: the fakes reported no call that is not a launch: {st}")
    called = {k[1] for k in st if k[0] == "callbacks"}
    check(called and not called & NOT_LAUNCHES,
          f"{what}: callbacks for calls that are not launches: {called & NOT_LAUNCHES}")
    check(st[("api_records_total",)] == 0, f"{what}: {st[('api_records_total',)]} API records")


@scenario
def test_gpu_paths_each_exact(env):
    """Each path alone: every kernel, graph node included, under its launch's label, exact to
    the fake's log; a launch no hook saw under [not hooked]; CUPTI did nothing for the calls
    that are not launches."""
    for path in PATHS:
        run, d, ops, st = paths_run(env, path)
        check(run.err == "", f"{path}: {run.err}")
        check_exact(path, d, ops)
        check_launches_only(path, st)
        if "unhooked" not in path:
            check(d["totals"]["gpu_not_hooked_kernels"] == 0, f"{path}: {d['totals']}")


@scenario
def test_gpu_paths_mixed_threads(env):
    """Every path in one process, on 4 threads at once, 3 times each: still exact, and the
    same with a nested call sharing its runtime call's correlation id (which CUPTI does not
    document either way)."""
    for extra in ({}, {"FAKECUPTI_NESTED_SAME_ID": "1"}):
        run, d, ops, st = paths_run(env, "all", threads=4, iterations=3, extra=extra)
        check(run.err == "", f"{extra}: {run.err}")
        check_exact(f"all {extra}", d, ops)
        check_launches_only(f"all {extra}", st)
        check(re.search(r"^done (\d+)$", run.out, re.M), run.out)


@scenario
def test_gpu_paths_external_correlation_compared(env):
    """NVTXCORR_GPU_CORRELATION=external (the external-id setup, kept for comparison): an API
    record for every call, and the launches of the runtimes nvtxcorr cannot interpose are
    uncorrelated, which is what the callbacks fix. The fake must show both for the tests above
    to mean anything."""
    run, d, ops, st = paths_run(env, "all", extra={"NVTXCORR_GPU_CORRELATION": "external"})
    check(d["gpu_correlation"] == "external", f"{d.get('gpu_correlation')}")
    recorded = {k[1] for k in st if k[0] == "api_records"}
    check(recorded & NOT_LAUNCHES, f"API records only for {recorded}")
    # (The very first launch can be correlated: CUPTI starts inside it, after its runtime
    # call began, which CUPTI then never saw.)
    t = d["totals"]
    eager = [o for o in ops if o[1].startswith(("static_", "gemmSN")) and not o[3]]
    check(t["gpu_uncorrelated_kernels"] >= len(eager) - 1 > 0, f"{t}")
    got_launch, _ = views(d)
    for label, kernel in (("static.ex", "static_ex_kernel"), ("blas.gemm", "gemmSN_NN_kernel")):
        check(got_launch.get(label, (0, 0))[0] == 0 < sum(o[1] == kernel for o in ops),
              f"{label}: {got_launch}")


@scenario
def test_gpu_paths_callbacks_unavailable(env):
    """A CUPTI that refuses the launch callbacks: one warning, external correlation instead,
    with API records for the launch entry points alone where CUPTI can (per-cbid, 12.5+), for
    every call where it cannot."""
    run, d, ops, st = paths_run(env, "driver", extra={"FAKECUPTI_NO_API_CALLBACKS": "1"})
    check(run.err.count("\n") == 1 and "launch callbacks unavailable" in run.err, run.err)
    check(d["gpu_correlation"] == "external", f"{d.get('gpu_correlation')}")
    recorded = {k[1] for k in st if k[0] == "api_records"}
    check(recorded == {"cuLaunchKernel"}, f"API records for {recorded}")
    launch, _ = expected(ops)
    check(views(d)[0] == launch, f"{views(d)[0]} {launch}")
    run, d, ops, st = paths_run(env, "driver", extra={"FAKECUPTI_NO_API_CALLBACKS": "1",
                                                       "FAKECUPTI_NO_PER_CBID": "1"})
    recorded = {k[1] for k in st if k[0] == "api_records"}
    check(recorded & NOT_LAUNCHES and d["gpu_correlation"] == "external", f"{recorded}")
    check(views(d)[0] == expected(ops)[0], f"{views(d)[0]}")
