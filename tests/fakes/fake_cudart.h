/*
 * Internal header of the fake CUDA runtime (libcudart.so.13) used by the tests of nvtxcorr.
 *
 * The fake runtime lets real programs built with `nvcc -cudart shared` run on the fake driver.
 * What matters for nvtxcorr is HOW it reaches the driver, and that is copied from the real
 * runtime: dlopen("libcuda.so.1"), dlsym("cuGetProcAddress_v2"), cuGetProcAddress re-resolved
 * through itself, then every driver function through cuGetProcAddress_v2 (the _ptsz flavour
 * for the runtime's own _ptsz entry points).  It never links against libcuda, so a profiler that
 * hooks cuGetProcAddress sees the same requests as with the real runtime.  Nothing in this
 * header is exported.
 */
#ifndef NVTXCORR_FAKE_CUDART_H
#define NVTXCORR_FAKE_CUDART_H

/* Declares both flavours of every runtime entry point (cudaLaunchKernel and _ptsz, ...). */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "cudart_abi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/*
 * The CUDA and NVTX signatures are fixed and a fake ignores many of their arguments; naming
 * each one unused would only add noise.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* FAKECUDART_STATIC: the runtime built into a program or a library (libfake_cudart_static.a),
 * as nvcc's default static cudart and cuBLAS's own runtime are: nothing exported, so no
 * preloaded library can interpose its entry points. */
#ifdef FAKECUDART_STATIC
#define RT_API __attribute__((visibility("hidden")))
#else
#define RT_API __attribute__((visibility("default")))
#endif
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Driver entry points the runtime uses, each at the ABI version the real runtime asks for. */
struct rt_driver {
    int version; /* cuDriverGetVersion */
    CUcontext primary;
    PFN_cuGetProcAddress_v12000 getProcAddress;
    PFN_cuInit_v2000 init;
    PFN_cuDriverGetVersion_v2020 driverGetVersion;
    PFN_cuDeviceGet_v2000 deviceGet;
    PFN_cuDeviceGetCount_v2000 deviceGetCount;
    PFN_cuDevicePrimaryCtxRetain_v7000 primaryCtxRetain;
    PFN_cuCtxSetCurrent_v4000 ctxSetCurrent;
    PFN_cuCtxSynchronize_v2000 ctxSynchronize;
    PFN_cuProfilerStart_v4000 profilerStart;
    PFN_cuProfilerStop_v4000 profilerStop;
    PFN_cuMemAlloc_v3020 memAlloc;
    PFN_cuMemFree_v3020 memFree;
    PFN_cuStreamCreate_v2000 streamCreate;
    PFN_cuStreamDestroy_v4000 streamDestroy;
    PFN_cuStreamSynchronize_v2000 streamSynchronize;
    PFN_cuStreamSynchronize_v7000_ptsz streamSynchronize_ptsz;
    PFN_cuModuleLoadData_v2000 moduleLoadData;
    PFN_cuModuleGetFunction_v2000 moduleGetFunction;
    PFN_cuLibraryLoadData_v12000 libraryLoadData;
    PFN_cuLibraryGetKernel_v12000 libraryGetKernel;
    PFN_cuModuleUnload_v2000 moduleUnload;
    PFN_cuLibraryUnload_v12000 libraryUnload;
    PFN_cuKernelGetFunction_v12000 kernelGetFunction;
    PFN_cuLaunchKernel_v4000 launchKernel;
    PFN_cuLaunchKernel_v7000_ptsz launchKernel_ptsz;
    PFN_cuLaunchKernelEx_v11060 launchKernelEx;
    PFN_cuLaunchKernelEx_v11060_ptsz launchKernelEx_ptsz;
    PFN_cuLaunchCooperativeKernel_v9000 launchCooperativeKernel;
    PFN_cuLaunchCooperativeKernel_v9000_ptsz launchCooperativeKernel_ptsz;
    PFN_cuGraphLaunch_v10000 graphLaunch;
    PFN_cuGraphLaunch_v10000_ptsz graphLaunch_ptsz;
    PFN_cuGraphCreate_v10000 graphCreate;
    PFN_cuGraphDestroy_v10000 graphDestroy;
    PFN_cuGraphAddKernelNode_v12000 graphAddKernelNode;
    PFN_cuGraphInstantiateWithFlags_v11040 graphInstantiateWithFlags;
    PFN_cuGraphInstantiateWithParams_v12000 graphInstantiateWithParams;
    PFN_cuGraphInstantiateWithParams_v12000_ptsz graphInstantiateWithParams_ptsz;
    PFN_cuGraphExecDestroy_v10000 graphExecDestroy;
    PFN_cuGraphExecUpdate_v12000 graphExecUpdate;
    PFN_cuStreamBeginCapture_v10010 streamBeginCapture;
    PFN_cuStreamBeginCapture_v10010_ptsz streamBeginCapture_ptsz;
    PFN_cuStreamBeginCaptureToGraph_v12030 streamBeginCaptureToGraph;
    PFN_cuStreamBeginCaptureToGraph_v12030_ptsz streamBeginCaptureToGraph_ptsz;
    PFN_cuStreamEndCapture_v10000 streamEndCapture;
    PFN_cuStreamEndCapture_v10000_ptsz streamEndCapture_ptsz;
    PFN_cuStreamIsCapturing_v10000 streamIsCapturing;
    PFN_cuStreamIsCapturing_v10000_ptsz streamIsCapturing_ptsz;
    PFN_cuStreamGetCaptureInfo_v12030 streamGetCaptureInfo;
    PFN_cuStreamGetCaptureInfo_v12030_ptsz streamGetCaptureInfo_ptsz;
    PFN_cuThreadExchangeStreamCaptureMode_v10010 threadExchangeStreamCaptureMode;
};
extern struct rt_driver rt_drv;

/* Per-thread state, allocated on first use (one initial-exec TLS pointer keeps access cheap). */
#define RT_MAX_CONFIGS 16
struct rt_thread {
    int ctx_current;        /* the primary context was made current on this thread */
    int device;             /* cudaSetDevice */
    cudaError_t last_error; /* cudaGetLastError */
    int nconfigs;           /* <<<>>> configurations pushed and not yet popped */
    struct rt_config {
        dim3 grid, block;
        size_t shmem;
        cudaStream_t stream;
    } configs[RT_MAX_CONFIGS];
    struct rt_thread *next; /* all threads' blocks, kept reachable after the thread exits */
};
struct rt_thread *rt_thread_slow(void);
extern __thread struct rt_thread *rt_tls __attribute__((tls_model("initial-exec")));

static inline struct rt_thread *rt_self(void)
{
    struct rt_thread *t = rt_tls;
    return RT_LIKELY(t != NULL) ? t : rt_thread_slow();
}

/*
 * Loads the driver on first use and makes the primary context current on this thread.
 * Returns the error every runtime call reports when that is impossible.
 */
cudaError_t rt_init_slow(struct rt_thread *t);
static inline cudaError_t rt_init(void)
{
    struct rt_thread *t = rt_self();
    return RT_LIKELY(t->ctx_current) ? cudaSuccess : rt_init_slow(t);
}

/* Records a failure as the thread's last error, as every runtime call does, and returns it. */
static inline cudaError_t rt_ret(cudaError_t e)
{
    if (RT_UNLIKELY(e != cudaSuccess)) rt_self()->last_error = e;
    return e;
}

/*
 * Driver results become runtime errors by value: the codes that matter here (invalid value 1,
 * invalid handle 400, not found 500, launch failure 719, not supported 801, the capture errors
 * 900-908 ...) have the same numbers in both enumerations.
 */
static inline cudaError_t rt_cu(CUresult r)
{
    return rt_ret((cudaError_t)r);
}

/* Calls a driver entry point, or fails as a runtime on a driver too old to have it. */
#define RT_CALL(fn, ...)                                                                           \
    (rt_drv.fn != NULL ? rt_cu(rt_drv.fn(__VA_ARGS__)) : rt_ret(cudaErrorCallRequiresNewerDriver))

/* The runtime's API frames, reported to CUPTI through the driver (fakecuda_api_frame, found
 * with dlsym in libcuda.so.1 when the driver is loaded), as the real runtime reports its calls;
 * RT_FRAMED(name, call) makes call inside a runtime frame named name. A call made before the
 * driver is loaded reports no frame. */
extern void (*rt_api_frame)(int domain, const char *name, int exit, int result);
#define RT_FRAMED(name, call)                                                                      \
    ({                                                                                             \
        void (*frame_)(int, const char *, int, int) = rt_api_frame;                                \
        if (frame_ != NULL) frame_(2, name, 0, 0);                                                 \
        cudaError_t e_ = (call);                                                                   \
        if (frame_ != NULL) frame_(2, name, 1, (int)e_);                                           \
        e_;                                                                                        \
    })

/* Launch handle (a CUkernel, or a CUfunction on drivers without libraries) of a host stub. */
cudaError_t rt_kernel_for(const void *hostFun, CUfunction *out);
cudaError_t rt_function_for(const void *hostFun, CUfunction *out);

/* Stream 0 of a legacy entry point is the legacy stream; of a _ptsz one, the per-thread one. */
static inline CUstream rt_stream(cudaStream_t s, int ptsz)
{
    return s == NULL && ptsz ? CU_STREAM_PER_THREAD : (CUstream)s;
}

#endif /* NVTXCORR_FAKE_CUDART_H */
