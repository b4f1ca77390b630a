/* The CUDA calls nvtxcorr makes for itself (cuda_calls.c), driver and runtime alike. */
#ifndef NVTXCORR_CUDA_CALLS_H
#define NVTXCORR_CUDA_CALLS_H

/* One row each: id, the public name, the ABI version asked of cuGetProcAddress (0: a runtime
 * function, found by name with nvtxcorr_find_real), and whether the per-thread-default-stream
 * variant is wanted. None of them is hooked (hooks.def), so what the driver or the runtime
 * answers is the real function. */
#define NVTXCORR_CUDA_CALLS(X)                                                                     \
    /* naming kernels (kernels.c): CUDA 12.3+ drivers */                                           \
    X(cuFuncGetName, cuFuncGetName, 12030, 0)                                                      \
    X(cuKernelGetName, cuKernelGetName, 12030, 0)                                                  \
    /* whether a launch's stream captures (capture.c), for both stream variants */                 \
    X(cuStreamIsCapturing, cuStreamIsCapturing, 10000, 0)                                          \
    X(cuStreamIsCapturing_ptsz, cuStreamIsCapturing, 10000, 1)                                     \
    /* a graph's kernels (graphs.c) */                                                             \
    X(cuGraphGetNodes, cuGraphGetNodes, 10000, 0)                                                  \
    X(cuGraphNodeGetType, cuGraphNodeGetType, 10000, 0)                                            \
    X(cuGraphKernelNodeGetParams_v2, cuGraphKernelNodeGetParams, 12000, 0)                         \
    X(cuGraphChildGraphNodeGetGraph, cuGraphChildGraphNodeGetGraph, 10000, 0)                      \
    /* naming a runtime host stub, keeping the runtime's last error (kernels.c) */                 \
    X(cudaFuncGetName, cudaFuncGetName, 0, 0)                                                      \
    X(cudaGetFuncBySymbol, cudaGetFuncBySymbol, 0, 0)                                              \
    X(cudaPeekAtLastError, cudaPeekAtLastError, 0, 0)                                              \
    X(cudaGetLastError, cudaGetLastError, 0, 0)                                                    \
    /* the Kineto trace's deviceProperties (profile/trace_meta.c) */                               \
    X(cuDeviceGetCount, cuDeviceGetCount, 2000, 0)                                                 \
    X(cuDeviceGetName, cuDeviceGetName, 2000, 0)                                                   \
    X(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, 0)                                              \
    X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, 0)

typedef enum nvtxcorr_cuda_id {
#define NVTXCORR_CUDA_ID(id, pub, version, ptsz) NVTXCORR_CUDA_##id,
    NVTXCORR_CUDA_CALLS(NVTXCORR_CUDA_ID)
#undef NVTXCORR_CUDA_ID
        NVTXCORR_CUDA_COUNT
} nvtxcorr_cuda_id_t;

/* The real function of row `id`, resolved once; NULL while its library is not loaded (asked
 * again next time) or when it lacks the function (remembered). Never waits for
 * initialisation. Callers cast to the function's type. */
void *nvtxcorr_cuda_fn(nvtxcorr_cuda_id_t id);
/* A driver entry point by name, through the real cuGetProcAddress_v2, uncached; NULL if the
 * driver lacks it or is not loaded. For the fixed set nvtxcorr uses itself, see
 * nvtxcorr_cuda_fn. */
void *nvtxcorr_driver_lookup(const char *public_name, int version, int ptsz);

#endif
