/* Runtime API hooks: the exported cuda* wrappers of hooks.def, for programs that use the
 * shared libcudart (nvcc -cudart shared, PyTorch), with bodies by kind from hook_bodies.h.
 * CUDA 13's <<<>>> calls __cudaLaunchKernel with a cudaKernel_t, which is a CUkernel: it
 * shares the driver's per-handle labels. The runtime then launches through a driver pointer
 * that is hooked too; the thread's depth counter keeps that to one range. A static cudart
 * never reaches these; its driver calls are caught by cuGetProcAddress instead. */
#include "hook_bodies.h"

#define NVTXCORR_HOOK_RESULT cudaError_t
#define NVTXCORR_HOOK_OK cudaSuccess
#define NVTXCORR_HOOK_NOTFOUND cudaErrorSymbolNotFound
#define NVTXCORR_HOOK_CAPTURE_ENDED(r)                                                             \
    ((r) == cudaSuccess || (r) == cudaErrorStreamCaptureInvalidated ||                             \
     (r) == cudaErrorStreamCaptureUnjoined)

#define RUNTIME(kind, sym, ptsz, params, args, ...)                                                \
    NVTXCORR_HOOK_##kind(sym, ptsz, params, args, __VA_ARGS__)
#include "core/hooks.def"
#include "hook_bodies_end.h"
