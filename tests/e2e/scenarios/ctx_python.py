"""A Python program annotated with the `nvtx` package from PyPI, as a Python framework is
(torch.cuda.nvtx, vLLM), launching kernels on the fake driver through ctypes. Run by
tests/e2e/test_context.py under `nvtxcorr stat`, which makes nvtxcorr the NVTX tool of the
package's own NVTX instance."""
import ctypes

import nvtx

cuda = ctypes.CDLL("libcuda.so.1")
check = lambda what, rc: print(f"rc {what} {rc}")
check("init", cuda.cuInit(0))
ctx = ctypes.c_void_p()
check("retain", cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0))
check("current", cuda.cuCtxSetCurrent(ctx))
gemm = ctypes.c_void_p()
check("make", cuda.fakecuda_make_function(b"gemm_kernel", ctypes.byref(gemm)))


def launch():
    check("launch", cuda.cuLaunchKernel(gemm, 1, 1, 1, 1, 1, 1, 0, None, None, None))


launch()  # no range open: []
with nvtx.annotate("forward", domain="torch"):
    with nvtx.annotate("attn.qkv", domain="torch"):
        launch()
    nvtx.push_range("mlp.up", domain="torch")
    launch()
    launch()
    nvtx.pop_range(domain="torch")
    with nvtx.annotate("app.step", domain="app"):  # another domain
        launch()


@nvtx.annotate("decorated", domain="torch")
def decorated():
    launch()


decorated()
