"""GPU check of profile mode's GPU time (CUPTI), run by scripts/gpu-check on a real GPU.

  torch_gpu_time.py work WORK.json        the workload, under nvtxcorr's profile mode: a GPU
                                          warm-up (softmax, left out of the comparisons), eager
                                          steps, then a decode step captured with
                                          torch.cuda.graphs and replayed REPLAYS times between
                                          two CUDA events; WORK.json: the events' span and the
                                          libcupti objects mapped in the process
  torch_gpu_time.py torch-profile OUT.json
                                          the same workload under torch.profiler (no nvtxcorr:
                                          one CUPTI client per process), one session for the
                                          eager part and the capture, one for the replays, so
                                          that they hold every kernel nvtxcorr's run counts;
                                          OUT.json:
                                          {"eager"|"replay": {kernel name: [count, total ns]}}
  torch_gpu_time.py compare NVTXCORR.json OUT.json WORK.json
                                          prints verdict lines (PASS|FAIL name: evidence)
  torch_gpu_time.py throughput            decode-loop replays per second ("replays_per_s X",
                                          "replays N"), run bare and under nvtxcorr
  torch_gpu_time.py op-loop [torch-profiler]
                                          host ns per op of an eager loop of small ops (every
                                          fourth a small-N GEMM through cuBLAS), the issuing
                                          alone timed ("ns_per_op X", "ops N"): run bare, under
                                          nvtxcorr, and under torch.profiler (the argument)

Kernel durations do not depend on who records them, so two runs of the same deterministic
workload give the same executions per kernel and the same times up to run-to-run noise (5%).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

torch = None  # imported by the modes that run the workload (compare needs none)

HIDDEN, EAGER_STEPS, REPLAYS = 1024, 20, 50
TOLERANCE = 0.05


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


WARM_UP = "cunn_SoftMax"  # the GPU warm-up's kernel functions: left out of the comparisons


def warm_gpu():
    """About 0.2 s of GPU work before anything is measured, so that both processes measure at
    the GPU's working clocks (an idle H200 drops to a few hundred MHz); compare leaves its
    softmax kernels out."""
    x = torch.empty(8192, 8192, device="cuda")  # launches nothing: only softmax kernels
    for _ in range(1000):
        torch.softmax(x, dim=1)
    torch.cuda.synchronize()


def warm_up(step):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # outside capture, as torch.cuda.graphs requires
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()


def capture(step):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    torch.cuda.synchronize()
    return g


def eager(step):
    for _ in range(EAGER_STEPS):
        step()
    warm_up(step)


def cupti_objects():
    """The distinct libcupti files mapped in this process (two would be two CUPTIs)."""
    seen = {}
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "cupti" in os.path.basename(parts[5]).lower():
                seen.setdefault(parts[4], parts[5])  # inode: one object, however named
    return sorted(seen.values())


def work(out):
    warm_gpu()
    step = model()
    eager(step)
    g = capture(step)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(REPLAYS):
        g.replay()
    end.record()
    torch.cuda.synchronize()
    with open(out, "w") as f:
        json.dump({"replays": REPLAYS, "events_ns": int(start.elapsed_time(end) * 1e6),
                   "cupti": cupti_objects()}, f)


def torch_profile(out):
    from torch.profiler import ProfilerActivity, profile

    def kernels(prof):
        ks = {}
        for e in prof.events():
            if str(getattr(e, "device_type", "")).endswith("CUDA"):
                k = ks.setdefault(e.name, [0, 0])
                k[0] += 1
                k[1] += int(round(e.time_range.elapsed_us() * 1000))  # a device event's span
        return ks
    # The sessions cover every kernel nvtxcorr's run counts (Kineto keeps only what starts and
    # ends inside a session, libkineto's outOfRange): the warm-up, the model's own kernels
    # (randn, ones), and the capture, whose generator prologue runs two fill kernels
    # (CUDAGraph::capture_begin -> CUDAGeneratorState::capture_prologue) before the capture
    # begins. Each session ends synchronized (torch.profiler's exit synchronizes).
    with profile(activities=[ProfilerActivity.CUDA]) as p1:
        warm_gpu()  # inside, as in nvtxcorr's run: CUPTI's start does not come between
        step = model()
        eager(step)
        g = capture(step)
    with profile(activities=[ProfilerActivity.CUDA]) as p2:
        for _ in range(REPLAYS):
            g.replay()
        torch.cuda.synchronize()
    with open(out, "w") as f:
        json.dump({"eager": kernels(p1), "replay": kernels(p2)}, f)


# ---- compare ----------------------------------------------------------------------------
def base_name(demangled):
    """A kernel function's base name from torch.profiler's demangled name, as nvtxcorr's
    "function": no return type, namespaces, template or function arguments."""
    s = demangled.replace("(anonymous namespace)", "")
    depth, cut = 0, len(s)
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    head, out, depth = s[:cut], "", 0
    for ch in head:  # drop template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out += ch
    return out.split()[-1].split("::")[-1] if out.split() else demangled


def demangled(names):
    """{mangled: base name} for names nvtxcorr left mangled (its demangler gave up) that
    c++filt can read, as torch.profiler's demangler does; {} without c++filt."""
    tool = shutil.which("c++filt")
    if not names or not tool:
        return {}
    p = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True)
    out = p.stdout.splitlines()
    return {n: base_name(d) for n, d in zip(names, out) if d != n} if len(out) == len(names) else {}


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"{what} {path}: {e.__class__.__name__}: {e}"


def within(a, b):
    return abs(a - b) <= TOLERANCE * max(abs(b), 1)


def say(ok, name, evidence):
    print(f"{'PASS' if ok else 'FAIL'} {name}: {evidence}", flush=True)
    return 0 if ok else 1


def compare(nv_path, torch_path, work_path):
    nv, e1 = load(nv_path, "nvtxcorr summary")
    tk, e2 = load(torch_path, "torch.profiler kernels")
    wk, e3 = load(work_path, "workload facts")
    if e1 or e2 or e3:
        return say(False, "gpu-time", "; ".join(e for e in (e1, e2, e3) if e))
    status = 0
    t = nv.get("totals") or {}
    status |= say(nv.get("gpu_time") is True and t.get("gpu_uncorrelated_kernels") == 0 and
                  t.get("gpu_dropped_records") == 0 and t.get("gpu_kernels", 0) > 0,
                  "gpu-time.correlation",
                  f"gpu_time {nv.get('gpu_time')} ({nv.get('gpu_time_note')}); "
                  f"{t.get('gpu_kernels')} kernels, {t.get('gpu_uncorrelated_kernels')} "
                  f"uncorrelated, {t.get('gpu_dropped_records')} records dropped (want 0, 0)")
    kernels = [k for k in nv.get("kernels", []) if k.get("gpu_kernels")]
    total = t.get("gpu_ns") or 0
    sums = {"kernels": sum(k["gpu_ns"] for k in kernels),
            "by launch label": sum(e["gpu_ns"] or 0 for e in nv.get("labels", [])) +
            t.get("gpu_uncorrelated_ns", 0) + t.get("gpu_unlabelled_launch_ns", 0),
            "by kernel label": sum(e["gpu_ns"] or 0 for e in nv.get("kernel_labels", [])) +
            t.get("gpu_unlabelled_ns", 0)}
    status |= say(total > 0 and all(v == total for v in sums.values()), "gpu-time.views",
                  f"totals.gpu_ns {total}; " + ", ".join(f"{k} {v}" for k, v in sums.items()))
    # Executions and time per kernel function: nvtxcorr's (copies and memsets aside) against
    # torch.profiler's (demangled names, both sessions).
    ours, theirs = {}, {}
    plain = demangled([k["function"] for k in kernels if k["function"].startswith("_Z")])
    for k in kernels:
        f = plain.get(k["function"], k["function"])
        if k["name"] in ("[memcpy]", "[memset]") or f.startswith(WARM_UP):
            continue
        a = ours.setdefault(f, [0, 0])
        a[0] += k["gpu_kernels"]
        a[1] += k["gpu_ns"]
    for session in ("eager", "replay"):
        for name, (n, ns) in tk.get(session, {}).items():
            if re.match(r"(?i)mem(cpy|set)", name):
                continue
            if base_name(name).startswith(WARM_UP):
                continue
            a = theirs.setdefault(base_name(name), [0, 0])
            a[0] += n
            a[1] += ns
    def n(d, f):
        return d.get(f, [0, 0])[0]
    wrong = [f"{f}: {n(ours, f)} vs {n(theirs, f)}" for f in sorted(set(ours) | set(theirs))
             if n(ours, f) != n(theirs, f)]
    n_ours, n_theirs = sum(v[0] for v in ours.values()), sum(v[0] for v in theirs.values())
    status |= say(not wrong and n_ours > 0, "gpu-time.counts",
                  f"{n_ours} executions of {len(ours)} kernel functions, torch.profiler "
                  f"{n_theirs} of {len(theirs)}" + (f"; differ: {'; '.join(wrong[:4])}"
                                                   if wrong else ": every count equal"))
    t_ours, t_theirs = sum(v[1] for v in ours.values()), sum(v[1] for v in theirs.values())
    slow = [f"{f} {ours[f][1]} vs {theirs.get(f, [0, 0])[1]} ns" for f in ours
            if ours[f][1] >= 0.01 * max(t_ours, 1) and
            not within(ours[f][1], theirs.get(f, [0, 0])[1])]
    status |= say(within(t_ours, t_theirs) and t_ours > 0 and not slow, "gpu-time.times",
                  f"kernel time {t_ours} ns, torch.profiler {t_theirs} ns "
                  f"({(t_ours / t_theirs - 1) * 100 if t_theirs else 0:+.1f}%, within 5%; "
                  f"also each "
                  f"function of 1% or more)" + (f"; off: {'; '.join(slow[:3])}" if slow else ""))
    graphs = nv.get("graphs") or []
    rep = tk.get("replay", {})
    tk_per_replay = sum(n for name, (n, _) in rep.items()) / REPLAYS
    tk_replay_ns = sum(ns for name, (_, ns) in rep.items())
    g = graphs[0] if len(graphs) == 1 else {}
    span = wk.get("events_ns", 0)
    ok = (len(graphs) == 1 and g["replays"] == REPLAYS == wk.get("replays") and
          g["kernels_per_replay"] == tk_per_replay and g["gpu_ns"] > 0 and
          within(g["gpu_ns"], tk_replay_ns) and g["gpu_ns"] <= span)
    status |= say(ok, "gpu-time.graph",
                  f"{len(graphs)} graph label(s); {g.get('replays')} replays of "
                  f"{g.get('kernels_per_replay')} kernels (torch.profiler: {tk_per_replay:g} per "
                  f"replay), {g.get('gpu_ns')} ns (torch.profiler {tk_replay_ns} ns; CUDA events "
                  f"around the replays {span} ns, an upper bound)")
    cupti = wk.get("cupti") or []
    status |= say(len(cupti) == 1, "cupti-copies",
                  f"{len(cupti)} libcupti object(s) mapped in torch's process: {cupti}")
    return status


# ---- throughput -------------------------------------------------------------------------
def throughput():
    warm_gpu()
    step = model()
    warm_up(step)
    g = capture(step)
    for _ in range(200):
        g.replay()
    torch.cuda.synchronize()
    best, replays = 0.0, 200
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(1000):
            g.replay()
        torch.cuda.synchronize()
        best = max(best, 1000 / (time.perf_counter() - t))
        replays += 1000
    print(f"replays_per_s {best:.1f}")
    print(f"replays {replays}")


# ---- host cost per op ------------------------------------------------------------------
OPS, OP_REPS = 4000, 5


def op_loop(profiler):
    """The eager loop's host ns per op: the best of OP_REPS timed passes of OPS ops (the issuing
    alone: the GPU runs small kernels faster than one thread issues them, so the time is the
    host's; it synchronizes after each pass, untimed), after one pass untimed (the cuBLAS
    handle, the caching allocator, CUPTI's start). With torch.profiler, the timed passes run
    inside one session of it (CUDA activity, as for GPU time)."""
    import contextlib
    x = torch.randn(8, HIDDEN, device="cuda")
    w = torch.randn(HIDDEN, HIDDEN, device="cuda") / HIDDEN ** 0.5

    def one_pass():
        t = time.perf_counter_ns()
        for i in range(OPS):
            y = x @ w if i % 4 == 0 else x + 1.0  # noqa: F841
        ns = time.perf_counter_ns() - t
        torch.cuda.synchronize()
        return ns / OPS
    one_pass()
    if profiler:
        from torch.profiler import ProfilerActivity, profile
        session = profile(activities=[ProfilerActivity.CUDA])
    else:
        session = contextlib.nullcontext()
    with session:
        best = min(one_pass() for _ in range(OP_REPS))
    print(f"ns_per_op {best:.0f}")
    print(f"ops {OPS * (OP_REPS + 1)}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "work"
    if what != "compare":
        import torch  # noqa: F811
    if what == "work":
        work(sys.argv[2])
        print("torch gpu-time work ok")
    elif what == "torch-profile":
        torch_profile(sys.argv[2])
    elif what == "compare":
        sys.exit(compare(*sys.argv[2:5]))
    elif what == "throughput":
        throughput()
    elif what == "op-loop":
        op_loop(sys.argv[2:3] == ["torch-profiler"])
    else:
        sys.exit(f"unknown: {what}")
