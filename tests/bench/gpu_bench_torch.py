"""Real-GPU benchmark, PyTorch part (tests/bench/gpu-bench runs it; it needs CUDA-enabled torch).

A decode-like step -- a few small ops on one token's activations -- is captured once into a
torch.cuda.CUDAGraph and replayed many times; the host-side time per replay (one
cudaGraphLaunch, which nvtxcorr wraps in one range) is measured. Replays go out in chunks
small enough not to fill the launch queue; the synchronisation between chunks is not timed.
--hand puts torch.cuda.nvtx.range_push/range_pop around each replay: what a PyTorch user would
write by hand.

Prints "batch <ns per replay>" per batch and "launches <n>", like the launch-loop programs.
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hand", action="store_true")
    ap.add_argument("-n", type=int, default=20000, help="replays per batch")
    ap.add_argument("-b", type=int, default=5, help="batches")
    ap.add_argument("-c", type=int, default=32, help="replays per synchronised chunk")
    args = ap.parse_args()

    dev = torch.device("cuda")
    hidden = 1024
    x = torch.randn(1, hidden, device=dev)
    w1 = torch.randn(hidden, 4 * hidden, device=dev) / hidden ** 0.5
    w2 = torch.randn(4 * hidden, hidden, device=dev) / hidden ** 0.5
    gamma = torch.ones(hidden, device=dev)

    def step():  # norm, MLP with activation, residual: ~6 kernels
        h = torch.nn.functional.layer_norm(x, (hidden,), gamma)
        h = torch.nn.functional.gelu(h @ w1)
        return x + h @ w2

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside capture, as torch.cuda.graphs requires
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    for _ in range(args.c):
        graph.replay()
    torch.cuda.synchronize()

    push, pop, replay = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop, graph.replay
    launches = args.c
    for _ in range(args.b):
        total = 0
        chunks = max(1, args.n // args.c)
        for _ in range(chunks):
            if args.hand:
                t0 = time.perf_counter_ns()
                for _ in range(args.c):
                    push("decode.step")
                    replay()
                    pop()
                total += time.perf_counter_ns() - t0
            else:
                t0 = time.perf_counter_ns()
                for _ in range(args.c):
                    replay()
                total += time.perf_counter_ns() - t0
            torch.cuda.synchronize()
        launches += chunks * args.c
        print(f"batch {total / (chunks * args.c):.1f}", flush=True)
    assert torch.isfinite(out).all()
    print(f"launches {launches}")


if __name__ == "__main__":
    main()
