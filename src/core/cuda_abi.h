/* The CUDA headers, seen with ABI symbol names. cuda.h maps some names to their newest ABI
 * version with macros (cuGetProcAddress -> cuGetProcAddress_v2, cuGraphInstantiate ->
 * cuGraphInstantiateWithFlags, ...). A preload library defines the ABI symbols themselves, so
 * those macros are undone here; hooks.def then declares every hooked symbol with the exact
 * signature the driver exports under that name. Headers only: no CUDA library is linked. */
#ifndef NVTXCORR_CUDA_ABI_H
#define NVTXCORR_CUDA_ABI_H

#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_runtime_api.h>

#undef cuGetProcAddress
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuStreamBeginCapture
#undef cuStreamGetCaptureInfo
#undef cuGraphKernelNodeGetParams

/* Prototypes for every hooked symbol, derived from the table. A mismatch with a declaration
 * in cuda.h or cuda_runtime_api.h is a compile error, which is the point. */
#define DRIVER(kind, sym, pub, ver, ptsz, params, ...) CUresult CUDAAPI sym params;
#define RUNTIME(kind, sym, ptsz, params, ...) cudaError_t CUDARTAPI sym params;
#include "hooks.def"

#endif
