/* The stub torch's torch.cuda.nvtx (tests/gpu/stub/torch/cuda/nvtx.py): NVTX3's header-only
 * API behind three exported functions that ctypes can call, so the ranges reach whatever tool
 * NVTX_INJECTION64_PATH names, as PyTorch's do. */
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) void stub_nvtx_push(const char *msg)
{
    nvtxRangePushA(msg);
}

__attribute__((visibility("default"))) void stub_nvtx_pop(void)
{
    nvtxRangePop();
}

__attribute__((visibility("default"))) void stub_nvtx_mark(const char *msg)
{
    nvtxMarkA(msg);
}
