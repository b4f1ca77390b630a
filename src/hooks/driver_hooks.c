/* Driver API hooks: the exported cu* wrappers of hooks.def, with bodies by kind from
 * hook_bodies.h. Reached directly (-lcuda), via dlsym on a libcuda handle (dlsym.c) and via
 * cuGetProcAddress (procaddr.c). */
#include "hook_bodies.h"

#define NVTXCORR_HOOK_RESULT CUresult
#define NVTXCORR_HOOK_OK CUDA_SUCCESS
#define NVTXCORR_HOOK_NOTFOUND CUDA_ERROR_NOT_FOUND
#define NVTXCORR_HOOK_CAPTURE_ENDED(r)                                                             \
    ((r) == CUDA_SUCCESS || (r) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||                        \
     (r) == CUDA_ERROR_STREAM_CAPTURE_UNJOINED)

#define DRIVER(kind, sym, pub, ver, ptsz, params, args, ...)                                       \
    NVTXCORR_HOOK_##kind(sym, ptsz, params, args, __VA_ARGS__)
#include "core/hooks.def"
#include "hook_bodies_end.h"
