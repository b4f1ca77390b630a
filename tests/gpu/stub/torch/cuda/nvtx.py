"""torch.cuda.nvtx of the stub: NVTX3 through libstub_nvtx.so (built next to the fakes;
STUB_TORCH_NVTX names it), so the ranges reach the NVTX tool as PyTorch's do."""
import ctypes
import os

_lib = ctypes.CDLL(os.environ["STUB_TORCH_NVTX"]) if os.environ.get("STUB_TORCH_NVTX") else None


def range_push(msg):
    if _lib:
        _lib.stub_nvtx_push(msg.encode())


def range_pop():
    if _lib:
        _lib.stub_nvtx_pop()


def mark(msg):
    if _lib:
        _lib.stub_nvtx_mark(msg.encode())
