"""GPU check: a Triton kernel launched LAUNCHES times (Triton's launcher finds cuLaunchKernelEx
with dlopen + dlsym in libcuda, not through cudart). scripts/gpu-check runs it bare and under
nvtxcorr with the recording tool, and counts the ranges named after the kernel (add_one).
Prints the launches and a result that depends on them (so a skipped launch shows)."""
import torch
import triton
import triton.language as tl

LAUNCHES, N = 5, 4096


@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def main():
    x = torch.zeros(N, device="cuda")
    for _ in range(LAUNCHES):
        add_one[(triton.cdiv(N, 1024),)](x, N, BLOCK=1024)
    torch.cuda.synchronize()
    print(f"triton launches {LAUNCHES}")
    print(f"triton sum {float(x.sum()):.0f}")  # N * LAUNCHES when every launch ran


if __name__ == "__main__":
    main()
