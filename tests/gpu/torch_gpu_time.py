"""GPU check of profile mode's GPU time (CUPTI), run by scripts/gpu-check on a real GPU.

  torch_gpu_time.py work                      the workload: PyTorch eager ops, then a decode
                                              step captured with torch.cuda.graphs and replayed
  torch_gpu_time.py torch-profile OUT.json    the same workload under torch.profiler (no
                                              nvtxcorr: one CUPTI client per process); writes
                                              its CUDA kernels: {name: [count, total_ns]}
  torch_gpu_time.py compare NVTXCORR.json TORCH.json
                                              nvtxcorr's GPU totals per label (by kernel label)
                                              and in all against torch.profiler's, within 2%;
                                              the graph's replays and kernels per replay
  torch_gpu_time.py throughput                decode-loop replays per second (prints
                                              "replays_per_s X"), run bare and under nvtxcorr

Kernel durations do not depend on who records them, so two runs of the same deterministic
workload give the same per-kernel GPU totals up to run-to-run noise (the 2% allowance).
"""
import json
import re
import sys
import time

try:  # compare needs no torch
    import torch
except ImportError:
    torch = None

HIDDEN, EAGER_STEPS, REPLAYS = 1024, 20, 50


def model():
    dev = torch.device("cuda")
    torch.manual_seed(0)
    x = torch.randn(8, HIDDEN, device=dev)
    w1 = torch.randn(HIDDEN, 4 * HIDDEN, device=dev) / HIDDEN ** 0.5
    w2 = torch.randn(4 * HIDDEN, HIDDEN, device=dev) / HIDDEN ** 0.5
    gamma = torch.ones(HIDDEN, device=dev)

    def step():  # norm, MLP with activation, residual
        h = torch.nn.functional.layer_norm(x, (HIDDEN,), gamma)
        h = torch.nn.functional.gelu(h @ w1)
        return x + h @ w2
    return step


def capture(step):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside capture, as torch.cuda.graphs requires
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    return g


def work():
    step = model()
    for _ in range(EAGER_STEPS):
        step()
    g = capture(step)
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()


def torch_profile(out):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        work()
    kernels = {}
    for e in prof.events():
        if str(getattr(e, "device_type", "")).endswith("CUDA"):
            k = kernels.setdefault(e.name, [0, 0])
            k[0] += 1
            k[1] += int(round(e.time_range.elapsed_us() * 1000))  # a device event's own span
    with open(out, "w") as f:
        json.dump(kernels, f)


def compare(nv_path, torch_path):
    nv, tk = json.load(open(nv_path)), json.load(open(torch_path))
    if not nv.get("gpu_time"):
        print(f"FAIL gpu-time: no GPU time: {nv.get('gpu_time_note')}")
        return 1
    tk = {n: v for n, v in tk.items() if not re.match(r"(?i)mem(cpy|set)", n)}
    ops = [k for k in nv["kernels"] if k["gpu_kernels"] and k["name"] not in ("[memcpy]",
                                                                             "[memset]")]
    status, total_nv, total_tk = 0, sum(k["gpu_ns"] for k in ops), sum(v[1] for v in tk.values())
    ok = abs(total_nv - total_tk) <= 0.02 * total_tk
    print(f"{'ok  ' if ok else 'FAIL'} gpu-time total: nvtxcorr {total_nv} ns, torch.profiler "
          f"{total_tk} ns ({len(ops)} kernels, {sum(v[0] for v in tk.values())} executions)")
    status |= not ok
    # Per label: torch.profiler's (demangled) names matched to nvtxcorr's base names.
    by_label_nv, by_label_tk, used = {}, {}, set()
    for k in ops:
        label = k["label"] or k["function"]
        by_label_nv[label] = by_label_nv.get(label, 0) + k["gpu_ns"]
        pat = re.compile(r"(^|[^\w])" + re.escape(k["function"]) + r"($|[^\w])")
        for n, (_, ns) in tk.items():
            if n not in used and (n == k["name"] or pat.search(n)):
                used.add(n)
                by_label_tk[label] = by_label_tk.get(label, 0) + ns
    for label in sorted(by_label_nv, key=lambda x: -by_label_nv[x]):
        a, b = by_label_nv[label], by_label_tk.get(label, 0)
        if a < 0.01 * total_nv:
            continue  # too small for 2% to mean anything
        ok = abs(a - b) <= 0.02 * max(b, 1)
        status |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} gpu-time label {label}: nvtxcorr {a} ns, "
              f"torch.profiler {b} ns")
    graphs = nv.get("graphs") or []
    ok = len(graphs) == 1 and graphs[0]["replays"] == REPLAYS
    status |= not ok
    print(f"{'ok  ' if ok else 'FAIL'} gpu-time graph: {graphs[0]['label'] if graphs else '-'} "
          f"{graphs[0]['replays'] if graphs else 0} replays of "
          f"{graphs[0]['kernels_per_replay'] if graphs else 0} kernels, "
          f"{graphs[0]['gpu_replay_mean_ns'] if graphs else 0} ns per replay")
    split = [e["label"] for e in nv.get("kernel_labels", [])]
    print(f"     gpu-time by kernel label: {', '.join(split)}")
    return status


def throughput():
    step = model()
    g = capture(step)
    for _ in range(200):
        g.replay()
    torch.cuda.synchronize()
    best = 0.0
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(2000):
            g.replay()
        torch.cuda.synchronize()
        best = max(best, 2000 / (time.perf_counter() - t))
    print(f"replays_per_s {best:.1f}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "work"
    if what == "work":
        work()
        print("torch gpu-time work ok")
    elif what == "torch-profile":
        torch_profile(sys.argv[2])
    elif what == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    elif what == "throughput":
        throughput()
    else:
        sys.exit(f"unknown: {what}")
