"""GPU check: PyTorch eager kernels and a torch.cuda.graphs replay, under nvtxcorr with the
recording NVTX tool (scripts/gpu-check runs it bare first, then preloaded).

The phases are NVTX ranges of the default domain ("check:eager", "check:replay") so that the
check can count nvtxcorr's ranges inside each. The eager phase runs under torch.profiler
(CUPTI; nvtxcorr's range mode never loads CUPTI), which prints how many kernels ran in it:
the check wants exactly that many nvtxcorr ranges there (each eager launch is one kernel and
one range). The replay phase replays the graph REPLAYS times: exactly REPLAYS graph ranges,
nothing else. The results are compared with the CPU's, so a launch that did not run shows."""
import re

import torch
from torch.profiler import ProfilerActivity, profile

REPLAYS = 5


def kernels_in(prof):
    return sum(1 for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA") and
               not re.match(r"(?i)mem(cpy|set)", e.name))


def main():
    torch.manual_seed(0)
    x = torch.randn(256, 256, device="cuda")
    w = torch.randn(256, 256, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("check:eager")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            y = torch.relu(x @ w) + 1.0  # GEMM, then elementwise kernels
        torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"eager kernels {kernels_in(prof)}")
    eager_ok = torch.allclose(y.cpu(), torch.relu(x.cpu() @ w.cpu()) + 1.0, rtol=1e-3, atol=1e-2)

    static_x = torch.randn(256, 256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside capture, as torch.cuda.graphs requires
        for _ in range(3):
            static_y = torch.relu(static_x @ w) + 1.0
    torch.cuda.current_stream().wait_stream(s)
    acc = torch.zeros(256, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = torch.relu(static_x @ w) + 1.0
        acc.add_(1.0)  # in place: after the replays, acc counts them
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("check:replay")
    for _ in range(REPLAYS):
        g.replay()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    graph_ok = torch.allclose(static_y.cpu(), torch.relu(static_x.cpu() @ w.cpu()) + 1.0,
                              rtol=1e-3, atol=1e-2) and torch.allclose(
                                  acc.cpu(), torch.ones(256) * REPLAYS)
    print(f"graph replays {REPLAYS}")
    print(f"torch values {'ok' if eager_ok and graph_ok else 'WRONG'}")


if __name__ == "__main__":
    main()
