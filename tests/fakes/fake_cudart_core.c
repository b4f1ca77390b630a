/*
 * Fake CUDA runtime, core part: finding the driver exactly as the real runtime does, per-thread
 * state and last error, error names, devices, memory, streams and driver entry points.
 *
 * Driver loading (once, at the first call that needs the driver): dlopen("libcuda.so.1",
 * RTLD_NOW); dlsym(handle, "cuGetProcAddress_v2"); through it the probe with an empty symbol
 * and cuInit, then "cuGetProcAddress" at 11030 and 12000 (the re-resolution a profiler may
 * answer with its own wrapper), then every other entry point through the 12000 result, at the
 * versions and flags the real CUDA 13.0 runtime uses.  Unlike the real runtime the fake accepts
 * older drivers (FAKECUDA_DRIVER_VERSION): an entry point newer than the driver is left unset
 * and the runtime calls that need it fail with cudaErrorCallRequiresNewerDriver.
 *
 * "Device" memory is host memory from the driver's cuMemAlloc; cudaMemcpy and cudaMemset are
 * plain memcpy/memset (kernels compute nothing, so programs must not check results).
 */
#define _GNU_SOURCE
#include "fake_cudart.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

struct rt_driver rt_drv;
__thread struct rt_thread *rt_tls __attribute__((tls_model("initial-exec")));

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t rt_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_thread *rt_threads;
static cudaError_t rt_load_error = cudaSuccess;

struct rt_thread *rt_thread_slow(void)
{
    /* Never freed: a handful of bytes per thread, and the thread may still be exiting. */
    struct rt_thread *t = calloc(1, sizeof(*t));
    if (t == NULL) abort();
    pthread_mutex_lock(&rt_threads_lock);
    t->next = rt_threads;
    rt_threads = t;
    pthread_mutex_unlock(&rt_threads_lock);
    rt_tls = t;
    return t;
}

/* Asks the driver for one entry point; NULL when absent or newer than the driver. */
static void *rt_proc(const char *symbol, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult status;
    if (rt_drv.getProcAddress(symbol, &p, version, flags, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS)
        return NULL;
    /* An older driver answers with an older ABI of the symbol: a different signature. */
    return rt_drv.version >= version ? p : NULL;
}

/* Stores a data pointer into a function-pointer field without type punning through void **. */
#define RT_RESOLVE(field, symbol, version, flags)                                                  \
    do {                                                                                           \
        void *p_ = rt_proc(symbol, version, flags);                                                \
        memcpy(&rt_drv.field, &p_, sizeof(p_));                                                    \
    } while (0)

void (*rt_api_frame)(int domain, const char *name, int exit, int result);

static void rt_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h == NULL) {
        rt_load_error = cudaErrorInsufficientDriver;
        return;
    }
    void *frame = dlsym(h, "fakecuda_api_frame");
    memcpy(&rt_api_frame, &frame, sizeof frame);
    PFN_cuGetProcAddress_v12000 first;
    void *sym = dlsym(h, "cuGetProcAddress_v2");
    memcpy(&first, &sym, sizeof(sym));
    if (first == NULL) {
        rt_load_error = cudaErrorInsufficientDriver;
        return;
    }
    CUdriverProcAddressQueryResult st;
    void *p = NULL;
    first("", &p, 0, 0, &st); /* the real runtime's opening probe */
    p = NULL;
    first("cuInit", &p, 2000, 0, &st);
    memcpy(&rt_drv.init, &p, sizeof(p));
    first("cuGetProcAddress", &p, 11030, 0, &st);
    p = NULL;
    first("cuGetProcAddress", &p, 12000, 0, &st);
    memcpy(&rt_drv.getProcAddress, &p, sizeof(p));
    if (rt_drv.getProcAddress == NULL) {
        rt_load_error = cudaErrorInsufficientDriver;
        return;
    }
    rt_drv.version = 1000000; /* unknown until asked: accept what the driver gives */
    RT_RESOLVE(driverGetVersion, "cuDriverGetVersion", 2020, 0);
    if (rt_drv.init == NULL || rt_drv.driverGetVersion == NULL ||
        rt_drv.driverGetVersion(&rt_drv.version) != CUDA_SUCCESS) {
        rt_load_error = cudaErrorInsufficientDriver;
        return;
    }
    RT_RESOLVE(deviceGet, "cuDeviceGet", 2000, 0);
    RT_RESOLVE(deviceGetCount, "cuDeviceGetCount", 2000, 0);
    RT_RESOLVE(primaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, 0);
    RT_RESOLVE(ctxSetCurrent, "cuCtxSetCurrent", 4000, 0);
    RT_RESOLVE(ctxSynchronize, "cuCtxSynchronize", 2000, 0);
    RT_RESOLVE(profilerStart, "cuProfilerStart", 4000, 0);
    RT_RESOLVE(profilerStop, "cuProfilerStop", 4000, 0);
    RT_RESOLVE(moduleLoadData, "cuModuleLoadData", 2000, 0);
    RT_RESOLVE(moduleGetFunction, "cuModuleGetFunction", 2000, 0);
    RT_RESOLVE(libraryLoadData, "cuLibraryLoadData", 12000, 0);
    RT_RESOLVE(libraryGetKernel, "cuLibraryGetKernel", 12000, 0);
    RT_RESOLVE(moduleUnload, "cuModuleUnload", 2000, 0);
    RT_RESOLVE(libraryUnload, "cuLibraryUnload", 12000, 0);
    RT_RESOLVE(kernelGetFunction, "cuKernelGetFunction", 12000, 0);
    RT_RESOLVE(memAlloc, "cuMemAlloc", 3020, 0);
    RT_RESOLVE(memFree, "cuMemFree", 3020, 0);
    RT_RESOLVE(launchKernel, "cuLaunchKernel", 4000, 0);
    RT_RESOLVE(launchKernel_ptsz, "cuLaunchKernel", 7000, 2);
    RT_RESOLVE(launchCooperativeKernel, "cuLaunchCooperativeKernel", 9000, 0);
    RT_RESOLVE(launchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 9000, 2);
    RT_RESOLVE(launchKernelEx, "cuLaunchKernelEx", 11060, 0);
    RT_RESOLVE(launchKernelEx_ptsz, "cuLaunchKernelEx", 11060, 2);
    RT_RESOLVE(streamCreate, "cuStreamCreate", 2000, 0);
    RT_RESOLVE(streamDestroy, "cuStreamDestroy", 4000, 0);
    RT_RESOLVE(streamSynchronize, "cuStreamSynchronize", 2000, 0);
    RT_RESOLVE(streamSynchronize_ptsz, "cuStreamSynchronize", 7000, 2);
    RT_RESOLVE(graphCreate, "cuGraphCreate", 10000, 0);
    RT_RESOLVE(graphAddKernelNode, "cuGraphAddKernelNode", 12000, 0);
    RT_RESOLVE(graphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040, 0);
    RT_RESOLVE(graphLaunch, "cuGraphLaunch", 10000, 0);
    RT_RESOLVE(graphLaunch_ptsz, "cuGraphLaunch", 10000, 2);
    RT_RESOLVE(graphExecDestroy, "cuGraphExecDestroy", 10000, 0);
    RT_RESOLVE(graphDestroy, "cuGraphDestroy", 10000, 0);
    RT_RESOLVE(streamBeginCapture, "cuStreamBeginCapture", 10010, 0);
    RT_RESOLVE(streamBeginCapture_ptsz, "cuStreamBeginCapture", 10010, 2);
    RT_RESOLVE(streamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph", 12030, 0);
    RT_RESOLVE(streamBeginCaptureToGraph_ptsz, "cuStreamBeginCaptureToGraph", 12030, 2);
    RT_RESOLVE(streamEndCapture, "cuStreamEndCapture", 10000, 0);
    RT_RESOLVE(streamEndCapture_ptsz, "cuStreamEndCapture", 10000, 2);
    RT_RESOLVE(streamIsCapturing, "cuStreamIsCapturing", 10000, 0);
    RT_RESOLVE(streamIsCapturing_ptsz, "cuStreamIsCapturing", 10000, 2);
    RT_RESOLVE(streamGetCaptureInfo, "cuStreamGetCaptureInfo", 12030, 0);
    RT_RESOLVE(streamGetCaptureInfo_ptsz, "cuStreamGetCaptureInfo", 12030, 2);
    RT_RESOLVE(threadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode", 10010, 0);
    RT_RESOLVE(graphExecUpdate, "cuGraphExecUpdate", 12000, 0);
    RT_RESOLVE(graphInstantiateWithParams, "cuGraphInstantiateWithParams", 12000, 0);
    RT_RESOLVE(graphInstantiateWithParams_ptsz, "cuGraphInstantiateWithParams", 12000, 2);

    CUresult r = rt_drv.init(0);
    if (r == CUDA_SUCCESS && rt_drv.primaryCtxRetain != NULL)
        r = rt_drv.primaryCtxRetain(&rt_drv.primary, 0);
    if (r != CUDA_SUCCESS || rt_drv.ctxSetCurrent == NULL)
        rt_load_error = r == CUDA_ERROR_NO_DEVICE ? cudaErrorNoDevice
                        : r != CUDA_SUCCESS       ? (cudaError_t)r
                                                  : cudaErrorInsufficientDriver;
}

cudaError_t rt_init_slow(struct rt_thread *t)
{
    pthread_once(&rt_once, rt_load);
    if (rt_load_error != cudaSuccess) return rt_ret(rt_load_error);
    /* Like the real runtime: every thread works in the device's primary context. */
    CUresult r = rt_drv.ctxSetCurrent(rt_drv.primary);
    if (r != CUDA_SUCCESS) return rt_cu(r);
    t->ctx_current = 1;
    return cudaSuccess;
}

/* ---- errors ---------------------------------------------------------------------------------- */

static cudaError_t rt_body_cudaGetLastError(void)
{
    struct rt_thread *t = rt_self();
    cudaError_t e = t->last_error;
    t->last_error = cudaSuccess;
    return e;
}

RT_API cudaError_t cudaGetLastError(void)
{
    return RT_FRAMED("cudaGetLastError", rt_body_cudaGetLastError());
}

static cudaError_t rt_body_cudaPeekAtLastError(void)
{
    return rt_self()->last_error;
}

RT_API cudaError_t cudaPeekAtLastError(void)
{
    return RT_FRAMED("cudaPeekAtLastError", rt_body_cudaPeekAtLastError());
}

static const struct {
    int value;
    const char *name;
} rt_errors[] = {
#include "fake_cudart_errors.inc"
};

RT_API const char *cudaGetErrorName(cudaError_t error)
{
    for (size_t i = 0; i < sizeof(rt_errors) / sizeof(rt_errors[0]); i++)
        if (rt_errors[i].value == (int)error) return rt_errors[i].name;
    return "unrecognized error code";
}

RT_API const char *cudaGetErrorString(cudaError_t error)
{
    /* Short descriptions for the codes tests print; the name for the rest. */
    switch (error) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInsufficientDriver:
        return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice:
        return "no CUDA-capable device is detected";
    case cudaErrorInvalidDeviceFunction:
        return "invalid device function";
    case cudaErrorInvalidResourceHandle:
        return "invalid resource handle";
    case cudaErrorLaunchFailure:
        return "unspecified launch failure";
    case cudaErrorNotSupported:
        return "operation not supported";
    case cudaErrorStreamCaptureUnsupported:
        return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
        return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureImplicit:
        return "operation would make the legacy stream depend on a capturing blocking stream";
    default:
        return cudaGetErrorName(error);
    }
}

/* ---- versions and devices -------------------------------------------------------------------- */

RT_API cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL) return rt_ret(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

RT_API cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL) return rt_ret(cudaErrorInvalidValue);
    pthread_once(&rt_once, rt_load);
    /* 0 when there is no driver at all, as documented. */
    *driverVersion = rt_drv.driverGetVersion != NULL ? rt_drv.version : 0;
    return cudaSuccess;
}

RT_API cudaError_t cudaGetDeviceCount(int *count)
{
    if (count == NULL) return rt_ret(cudaErrorInvalidValue);
    *count = 0;
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    return RT_CALL(deviceGetCount, count);
}

static cudaError_t rt_body_cudaSetDevice(int device)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return e;
    if (device < 0 || device >= n) return rt_ret(cudaErrorInvalidDevice);
    rt_self()->device = device;
    return cudaSuccess;
}

RT_API cudaError_t cudaSetDevice(int device)
{
    return RT_FRAMED("cudaSetDevice", rt_body_cudaSetDevice(device));
}

static cudaError_t rt_body_cudaGetDevice(int *device)
{
    if (device == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    *device = rt_self()->device;
    return cudaSuccess;
}

RT_API cudaError_t cudaGetDevice(int *device)
{
    return RT_FRAMED("cudaGetDevice", rt_body_cudaGetDevice(device));
}

static cudaError_t rt_body_cudaDeviceSynchronize(void)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(ctxSynchronize);
}

RT_API cudaError_t cudaDeviceSynchronize(void)
{
    return RT_FRAMED("cudaDeviceSynchronize", rt_body_cudaDeviceSynchronize());
}

/* As the real runtime: the driver's profiler API through its cuGetProcAddress pointers. */
RT_API cudaError_t cudaProfilerStart(void)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(profilerStart);
}

RT_API cudaError_t cudaProfilerStop(void)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(profilerStop);
}

/* ---- memory ---------------------------------------------------------------------------------- */

RT_API cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (devPtr == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    if (size == 0) {
        *devPtr = NULL; /* the runtime allows empty allocations */
        return cudaSuccess;
    }
    CUdeviceptr p = 0;
    e = RT_CALL(memAlloc, &p, size);
    *devPtr = e == cudaSuccess ? (void *)(uintptr_t)p : NULL;
    return e;
}

RT_API cudaError_t cudaFree(void *devPtr)
{
    cudaError_t e = rt_init(); /* cudaFree(0) is the customary way to initialise */
    if (e != cudaSuccess || devPtr == NULL) return e;
    return RT_CALL(memFree, (CUdeviceptr)(uintptr_t)devPtr);
}

static cudaError_t rt_memcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    if ((int)kind < (int)cudaMemcpyHostToHost || (int)kind > (int)cudaMemcpyDefault)
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    if (count > 0 && (dst == NULL || src == NULL)) return rt_ret(cudaErrorInvalidValue);
    memmove(dst, src, count);
    return cudaSuccess;
}

static cudaError_t rt_memset(void *p, int value, size_t count)
{
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    if (count > 0 && p == NULL) return rt_ret(cudaErrorInvalidValue);
    memset(p, value, count);
    return cudaSuccess;
}

RT_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return rt_memcpy(dst, src, count, kind);
}

RT_API cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind)
{
    return rt_memcpy(dst, src, count, kind);
}

/* The asynchronous forms copy at once, even into a capturing stream (no memcpy nodes). */
static cudaError_t rt_body_cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return rt_memcpy(dst, src, count, kind);
}

RT_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return RT_FRAMED("cudaMemcpyAsync", rt_body_cudaMemcpyAsync(dst, src, count, kind, stream));
}

static cudaError_t rt_body_cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                                enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return rt_memcpy(dst, src, count, kind);
}

RT_API cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return RT_FRAMED("cudaMemcpyAsync_ptsz",
                     rt_body_cudaMemcpyAsync_ptsz(dst, src, count, kind, stream));
}

RT_API cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return rt_memset(devPtr, value, count);
}

RT_API cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return rt_memset(devPtr, value, count);
}

static cudaError_t rt_body_cudaMemsetAsync(void *devPtr, int value, size_t count,
                                           cudaStream_t stream)
{
    return rt_memset(devPtr, value, count);
}

RT_API cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return RT_FRAMED("cudaMemsetAsync", rt_body_cudaMemsetAsync(devPtr, value, count, stream));
}

static cudaError_t rt_body_cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                                cudaStream_t stream)
{
    return rt_memset(devPtr, value, count);
}

RT_API cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return RT_FRAMED("cudaMemsetAsync_ptsz",
                     rt_body_cudaMemsetAsync_ptsz(devPtr, value, count, stream));
}

/* ---- streams --------------------------------------------------------------------------------- */

RT_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    if (pStream == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    /* cudaStreamNonBlocking and CU_STREAM_NON_BLOCKING are both 1. */
    return e != cudaSuccess ? e : RT_CALL(streamCreate, (CUstream *)pStream, flags);
}

RT_API cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

RT_API cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(streamDestroy, (CUstream)stream);
}

static cudaError_t rt_body_cudaStreamSynchronize(cudaStream_t stream)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(streamSynchronize, rt_stream(stream, 0));
}

RT_API cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return RT_FRAMED("cudaStreamSynchronize", rt_body_cudaStreamSynchronize(stream));
}

static cudaError_t rt_body_cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(streamSynchronize_ptsz, rt_stream(stream, 1));
}

RT_API cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    return RT_FRAMED("cudaStreamSynchronize_ptsz", rt_body_cudaStreamSynchronize_ptsz(stream));
}

/* ---- driver entry points --------------------------------------------------------------------- */

/*
 * Forwarded to the driver's cuGetProcAddress_v2.  cudaEnableDefault becomes flags 0 in the
 * legacy entry point and the per-thread flavour (2) in the _ptsz one, which is what a program
 * built with --default-stream per-thread calls; cudaEnableLegacyStream is 1 and
 * cudaEnablePerThreadDefaultStream is 2, as in the driver.
 */
static cudaError_t rt_entry(const char *symbol, void **funcPtr, int version,
                            unsigned long long flags, enum cudaDriverEntryPointQueryResult *st,
                            int ptsz)
{
    if (symbol == NULL || funcPtr == NULL ||
        (flags & ~(unsigned long long)(cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream)))
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    cuuint64_t f = flags;
    if (f == cudaEnableDefault && ptsz) f = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = rt_drv.getProcAddress(symbol, funcPtr, version, f, &status);
    if (st != NULL) *st = (enum cudaDriverEntryPointQueryResult)status; /* same values */
    return rt_cu(r);
}

RT_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                                           unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return rt_entry(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 0);
}

RT_API cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                                unsigned long long flags,
                                                enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return rt_entry(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 1);
}

RT_API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                                    unsigned int cudaVersion,
                                                    unsigned long long flags,
                                                    enum cudaDriverEntryPointQueryResult *st)
{
    return rt_entry(symbol, funcPtr, (int)cudaVersion, flags, st, 0);
}

RT_API cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                         unsigned int cudaVersion,
                                                         unsigned long long flags,
                                                         enum cudaDriverEntryPointQueryResult *st)
{
    return rt_entry(symbol, funcPtr, (int)cudaVersion, flags, st, 1);
}
