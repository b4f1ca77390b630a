#!/usr/bin/env python3
"""GPU time's cost in a PyTorch-shaped loop on the fakes (docs/performance.md, "GPU time in a
PyTorch-shaped loop").

bench_torch_loop makes, per op, the CUDA calls an eager PyTorch op makes around its launch
(cudaGetDevice, cudaStreamIsCapturing, cuCtxGetCurrent, cudaLaunchKernel, cudaGetLastError),
and every fourth op a GEMM through the fake cuBLAS, whose runtime LD_PRELOAD cannot see. It runs
bare, in profile mode without GPU time, and in profile mode with GPU time through the fake CUPTI
two ways: correlation by the launch callbacks (the default) and the external-id setup
(NVTXCORR_GPU_CORRELATION=external: API records for every call). The fake CUPTI charges the
calling thread a cost per callback it makes and per API record it writes (--callback-ns,
--record-ns: its stand-in for CUPTI's own work). Every repetition runs every configuration once,
in a fresh random order; a cell is the median ns per op over the repetitions, an added cost
the median of the paired differences against bare. A counting run per GPU configuration
(FAKECUPTI_STATS) gives what CUPTI was asked to do per op (the same with the fake charging
nothing: what is left is nvtxcorr's work and the fake's own bookkeeping), and the summary how many kernels got
no launch label: counts, exact on any machine.

  torch_loop_bench.py --build BUILD [--reps R] [--ops N] [--batches B] [--smoke]
--smoke (CTest: bench.torch-loop-smoke): a short run that checks every number is produced, the
callbacks setup makes no API record and no callback for a call that is not a launch, and leaves
no kernel uncorrelated; it never judges time.
"""
import argparse
import atexit
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

CONFIGS = [  # (key, title)
    ("bare", "bare"),
    ("profile", "profile mode, NVTXCORR_GPU=0"),
    ("callbacks", "profile + GPU time: launch callbacks"),
    ("external", "profile + GPU time: external ids, API records"),
    ("callbacks-free", "launch callbacks, the fake CUPTI charging nothing"),
    ("external-free", "external ids, the fake CUPTI charging nothing"),
]
LAUNCHES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"}


def env_for(b, config, out=None, stats=None, costs=True):
    if config.endswith("-free"):
        config, costs = config[:-len("-free")], False
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("NVTXCORR", "NVTX_", "FAKECU", "LD_PRELOAD"))}
    e["LD_LIBRARY_PATH"] = os.path.join(b.build, "fakes")
    if config == "bare":
        return e
    e.update({"LD_PRELOAD": b.lib, "NVTXCORR": "1",
              "NVTXCORR_PROFILE": out or os.devnull, "NVTXCORR_GPU": "0"})
    if config in ("callbacks", "external"):
        e.update({"NVTXCORR_GPU": "1",
                  "NVTXCORR_CUPTI_LIBRARY": os.path.join(b.build, "fakes", "libfake_cupti.so")})
        if costs:
            e.update({"FAKECUPTI_CALLBACK_NS": str(b.callback_ns),
                      "FAKECUPTI_RECORD_NS": str(b.record_ns)})
        if config == "external":
            e["NVTXCORR_GPU_CORRELATION"] = "external"
    if stats:
        e["FAKECUPTI_STATS"] = stats
    return e


def run(b, config, ops, batches, **kw):
    prog = os.path.join(b.build, "tests", "bench", "bench_torch_loop")
    p = subprocess.run([prog, str(ops), str(batches)], env=env_for(b, config, **kw),
                       capture_output=True, text=True, timeout=300)
    vals = dict(line.split() for line in p.stdout.splitlines() if len(line.split()) == 2)
    if p.returncode != 0 or "ns_per_op" not in vals:
        sys.exit(f"torch_loop_bench: {config}: rc {p.returncode}: {p.stderr[-1000:]}")
    return float(vals["ns_per_op"]), int(vals["launches"])


def counts(b, config, ops):
    """What CUPTI did per op, and the kernels left without a launch label, in one run."""
    with tempfile.TemporaryDirectory() as tmp:
        out, stats = os.path.join(tmp, "p.json"), os.path.join(tmp, "stats")
        _, launches = run(b, config, ops, 1, out=out, stats=stats, costs=False)
        with open(out) as f:
            t = json.load(f)["totals"]
        st = {}
        with open(stats) as f:
            for line in f:
                parts = line.split()
                st[tuple(parts[:-1])] = int(parts[-1])
    total_ops = ops + ops // 10 + 4  # the warm-up and the one batch
    other_cb = sum(v for k, v in st.items() if k[0] == "callbacks" and k[1] not in LAUNCHES and
                   not k[1].startswith(("cudaGraphLaunch", "cuGraphLaunch")))
    return {"callbacks": st.get(("callbacks_total",), 0) / total_ops,
            "records": st.get(("api_records_total",), 0) / total_ops,
            "other_callbacks": other_cb, "kernels": t["gpu_kernels"],
            "uncorrelated": t["gpu_uncorrelated_kernels"], "launches": launches}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--callback-ns", type=int, default=100)
    ap.add_argument("--record-ns", type=int, default=300)
    ap.add_argument("--smoke", action="store_true")
    b = ap.parse_args()
    if not os.path.exists(os.path.join(b.build, "fakes", "libfake_cupti.so")):
        print("skipped: built without CUPTI headers (no fake CUPTI)")
        return 0
    if b.smoke:
        b.reps, b.ops, b.batches = 2, 2000, 2
    b.lib = os.path.join(b.build, "lib", "libnvtxcorr.so")
    if re.search(r"[\s:]", b.lib):
        # ld.so splits LD_PRELOAD at spaces and colons (a clone under "My Projects"): the
        # library is preloaded through a link in a temporary directory.
        links = tempfile.mkdtemp(prefix="nvtxcorr-torch-loop-")
        atexit.register(shutil.rmtree, links, True)
        os.symlink(b.lib, os.path.join(links, "libnvtxcorr.so"))
        b.lib = os.path.join(links, "libnvtxcorr.so")
    ns = {c: [] for c, _ in CONFIGS}
    for _ in range(b.reps):
        order = [c for c, _ in CONFIGS]
        random.shuffle(order)
        for c in order:
            ns[c].append(run(b, c, b.ops, b.batches)[0])
    cnt = {c: counts(b, c, b.ops) for c in ("callbacks", "external")}
    bare = ns["bare"]
    w = print
    w(f"bench_torch_loop, {b.ops} ops per batch, fastest of {b.batches} batches, median of "
      f"{b.reps} repetitions; the fake CUPTI charges {b.callback_ns} ns per callback and "
      f"{b.record_ns} ns per API record.\n")
    w("| configuration | ns per op | added over bare | CUPTI callbacks per op | API records "
      "per op | kernels without a launch label |")
    w("|---|---:|---:|---:|---:|---:|")
    for c, title in CONFIGS:
        med = statistics.median(ns[c])
        add = statistics.median(x - y for x, y in zip(ns[c], bare))
        k = cnt.get(c.replace("-free", ""))
        extra = (f"{k['callbacks']:.2f} | {k['records']:.2f} | {k['uncorrelated']} of {k['kernels']}"
                 if k else "- | - | -")
        w(f"| {title} | {med:.0f} | {'+%.0f' % add if c != 'bare' else '-'} | {extra} |")
    bad = []
    cb = cnt["callbacks"]
    if cb["records"] != 0:
        bad.append(f"callbacks setup: {cb['records']} API records per op")
    if cb["other_callbacks"]:
        bad.append(f"callbacks setup: {cb['other_callbacks']} callbacks for calls that are not "
                   f"launches")
    if cb["uncorrelated"] or cb["kernels"] < cb["launches"]:
        bad.append(f"callbacks setup: {cb['uncorrelated']} of {cb['kernels']} kernels "
                   f"uncorrelated ({cb['launches']} launches)")
    if cnt["external"]["records"] <= 1:
        bad.append("external setup: the fake wrote no API record per call (it must, or the "
                   "comparison shows nothing)")
    for m in bad:
        print(f"torch_loop_bench: {m}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
