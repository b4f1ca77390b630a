"""GPU check: PyTorch eager kernels and a torch.cuda.graphs replay, under nvtxcorr."""
import torch

x = torch.randn(1024, 1024, device="cuda")
w = torch.randn(1024, 1024, device="cuda")
for _ in range(3):
    y = torch.relu(x @ w) + 1.0          # eager: GEMM + elementwise kernels
torch.cuda.synchronize()

static_x = torch.randn(1024, 1024, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        static_y = torch.relu(static_x @ w)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_y = torch.relu(static_x @ w)
for _ in range(5):
    g.replay()
torch.cuda.synchronize()
print("torch ok", float(static_y.sum()) == float(static_y.sum()))
