/*
 * Fake CUDA runtime: kernel launches and stream capture.
 *
 * Each runtime launch calls the matching driver entry point through the pointer cuGetProcAddress
 * gave: cudaLaunchKernel and <<<>>> (__cudaLaunchKernel) -> cuLaunchKernel, the _ptsz runtime
 * entry points -> cuLaunchKernel_ptsz, cudaLaunchKernelExC -> cuLaunchKernelEx,
 * cudaLaunchCooperativeKernel -> cuLaunchCooperativeKernel.  The kernel handle passed to the
 * driver is the CUkernel of the host stub (cast to CUfunction, as the real runtime does).
 * Stream 0 stays NULL (the legacy stream) for the legacy entry points and becomes
 * CU_STREAM_PER_THREAD for the _ptsz ones.  Runtime and driver handle types are the same
 * structs, so streams and graphs pass through unchanged.
 */
#include "fake_cudart.h"

_Static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute),
               "cudaLaunchAttribute and CUlaunchAttribute must share a layout");

static inline cudaError_t rt_launch(CUfunction f, dim3 g, dim3 b, void **args, size_t shmem,
                                    cudaStream_t s, int ptsz)
{
    if (ptsz)
        return RT_CALL(launchKernel_ptsz, f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem,
                       rt_stream(s, 1), args, NULL);
    return RT_CALL(launchKernel, f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, rt_stream(s, 0),
                   args, NULL);
}

static inline cudaError_t rt_launch_host(const void *func, dim3 g, dim3 b, void **args,
                                         size_t shmem, cudaStream_t s, int ptsz)
{
    CUfunction f;
    cudaError_t e = rt_init();
    if (e == cudaSuccess) e = rt_kernel_for(func, &f);
    return e != cudaSuccess ? e : rt_launch(f, g, b, args, shmem, s, ptsz);
}

/* What <<<>>> compiles to in CUDA 13: the kernel handle comes from __cudaGetKernel. */
static cudaError_t rt_body___cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                              void **args, size_t sharedMem, cudaStream_t stream)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess
               ? e
               : rt_launch((CUfunction)kernel, gridDim, blockDim, args, sharedMem, stream, 0);
}

RT_API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                      size_t sharedMem, cudaStream_t stream)
{
    return RT_FRAMED("__cudaLaunchKernel", rt_body___cudaLaunchKernel(kernel, gridDim, blockDim,
                                                                      args, sharedMem, stream));
}

static cudaError_t rt_body___cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                   void **args, size_t sharedMem,
                                                   cudaStream_t stream)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess
               ? e
               : rt_launch((CUfunction)kernel, gridDim, blockDim, args, sharedMem, stream, 1);
}

RT_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                           void **args, size_t sharedMem, cudaStream_t stream)
{
    return RT_FRAMED(
        "__cudaLaunchKernel_ptsz",
        rt_body___cudaLaunchKernel_ptsz(kernel, gridDim, blockDim, args, sharedMem, stream));
}

static cudaError_t rt_body_cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                            void **args, size_t sharedMem, cudaStream_t stream)
{
    return rt_launch_host(func, gridDim, blockDim, args, sharedMem, stream, 0);
}

RT_API cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
    return RT_FRAMED("cudaLaunchKernel",
                     rt_body_cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream));
}

static cudaError_t rt_body_cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                                 void **args, size_t sharedMem, cudaStream_t stream)
{
    return rt_launch_host(func, gridDim, blockDim, args, sharedMem, stream, 1);
}

RT_API cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream)
{
    return RT_FRAMED(
        "cudaLaunchKernel_ptsz",
        rt_body_cudaLaunchKernel_ptsz(func, gridDim, blockDim, args, sharedMem, stream));
}

static cudaError_t rt_launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args,
                                int ptsz)
{
    if (config == NULL) return rt_ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = rt_init();
    if (e == cudaSuccess) e = rt_kernel_for(func, &f);
    if (e != cudaSuccess) return e;
    CUlaunchConfig c = {
        .gridDimX = config->gridDim.x,
        .gridDimY = config->gridDim.y,
        .gridDimZ = config->gridDim.z,
        .blockDimX = config->blockDim.x,
        .blockDimY = config->blockDim.y,
        .blockDimZ = config->blockDim.z,
        .sharedMemBytes = (unsigned)config->dynamicSmemBytes,
        .hStream = rt_stream(config->stream, ptsz),
        .attrs = (CUlaunchAttribute *)config->attrs, /* same layout and ids */
        .numAttrs = config->numAttrs,
    };
    if (ptsz) return RT_CALL(launchKernelEx_ptsz, &c, f, args, NULL);
    return RT_CALL(launchKernelEx, &c, f, args, NULL);
}

static cudaError_t rt_body_cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                               void **args)
{
    return rt_launch_ex(config, func, args, 0);
}

RT_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                       void **args)
{
    return RT_FRAMED("cudaLaunchKernelExC", rt_body_cudaLaunchKernelExC(config, func, args));
}

static cudaError_t rt_body_cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
                                                    const void *func, void **args)
{
    return rt_launch_ex(config, func, args, 1);
}

RT_API cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                            void **args)
{
    return RT_FRAMED("cudaLaunchKernelExC_ptsz",
                     rt_body_cudaLaunchKernelExC_ptsz(config, func, args));
}

static cudaError_t rt_launch_coop(const void *func, dim3 g, dim3 b, void **args, size_t shmem,
                                  cudaStream_t s, int ptsz)
{
    CUfunction f;
    cudaError_t e = rt_init();
    if (e == cudaSuccess) e = rt_kernel_for(func, &f);
    if (e != cudaSuccess) return e;
    if (ptsz)
        return RT_CALL(launchCooperativeKernel_ptsz, f, g.x, g.y, g.z, b.x, b.y, b.z,
                       (unsigned)shmem, rt_stream(s, 1), args);
    return RT_CALL(launchCooperativeKernel, f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem,
                   rt_stream(s, 0), args);
}

static cudaError_t rt_body_cudaLaunchCooperativeKernel(const void *func, dim3 gridDim,
                                                       dim3 blockDim, void **args, size_t sharedMem,
                                                       cudaStream_t stream)
{
    return rt_launch_coop(func, gridDim, blockDim, args, sharedMem, stream, 0);
}

RT_API cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                               void **args, size_t sharedMem, cudaStream_t stream)
{
    return RT_FRAMED(
        "cudaLaunchCooperativeKernel",
        rt_body_cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem, stream));
}

static cudaError_t rt_body_cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
                                                            dim3 blockDim, void **args,
                                                            size_t sharedMem, cudaStream_t stream)
{
    return rt_launch_coop(func, gridDim, blockDim, args, sharedMem, stream, 1);
}

RT_API cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                                    void **args, size_t sharedMem,
                                                    cudaStream_t stream)
{
    return RT_FRAMED(
        "cudaLaunchCooperativeKernel_ptsz",
        rt_body_cudaLaunchCooperativeKernel_ptsz(func, gridDim, blockDim, args, sharedMem, stream));
}

/* ---- stream capture -------------------------------------------------------------------------- */

/* The capture modes and statuses have the same values in both APIs. */
static cudaError_t rt_begin(cudaStream_t s, enum cudaStreamCaptureMode mode, int ptsz)
{
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    if (ptsz) return RT_CALL(streamBeginCapture_ptsz, rt_stream(s, 1), (CUstreamCaptureMode)mode);
    return RT_CALL(streamBeginCapture, rt_stream(s, 0), (CUstreamCaptureMode)mode);
}

RT_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return rt_begin(stream, mode, 0);
}

RT_API cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return rt_begin(stream, mode, 1);
}

static cudaError_t rt_begin_to_graph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t *deps,
                                     const cudaGraphEdgeData *edges, size_t n,
                                     enum cudaStreamCaptureMode mode, int ptsz)
{
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    /* cudaGraphNode_t/cudaGraphEdgeData are the driver's CUgraphNode/CUgraphEdgeData. */
    if (ptsz)
        return RT_CALL(streamBeginCaptureToGraph_ptsz, rt_stream(s, 1), (CUgraph)g,
                       (const CUgraphNode *)deps, (const CUgraphEdgeData *)edges, n,
                       (CUstreamCaptureMode)mode);
    return RT_CALL(streamBeginCaptureToGraph, rt_stream(s, 0), (CUgraph)g,
                   (const CUgraphNode *)deps, (const CUgraphEdgeData *)edges, n,
                   (CUstreamCaptureMode)mode);
}

RT_API cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                 const cudaGraphNode_t *deps,
                                                 const cudaGraphEdgeData *edges, size_t n,
                                                 enum cudaStreamCaptureMode mode)
{
    return rt_begin_to_graph(stream, graph, deps, edges, n, mode, 0);
}

RT_API cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                                      const cudaGraphNode_t *deps,
                                                      const cudaGraphEdgeData *edges, size_t n,
                                                      enum cudaStreamCaptureMode mode)
{
    return rt_begin_to_graph(stream, graph, deps, edges, n, mode, 1);
}

RT_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(streamEndCapture, rt_stream(stream, 0), pGraph);
}

RT_API cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(streamEndCapture_ptsz, rt_stream(stream, 1), pGraph);
}

static cudaError_t rt_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *status, int ptsz)
{
    if (status == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    e = ptsz ? RT_CALL(streamIsCapturing_ptsz, rt_stream(s, 1), &st)
             : RT_CALL(streamIsCapturing, rt_stream(s, 0), &st);
    *status = (enum cudaStreamCaptureStatus)st;
    return e;
}

static cudaError_t rt_body_cudaStreamIsCapturing(cudaStream_t stream,
                                                 enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return rt_is_capturing(stream, pCaptureStatus, 0);
}

RT_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                         enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return RT_FRAMED("cudaStreamIsCapturing",
                     rt_body_cudaStreamIsCapturing(stream, pCaptureStatus));
}

static cudaError_t rt_body_cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                                      enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return rt_is_capturing(stream, pCaptureStatus, 1);
}

RT_API cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                              enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return RT_FRAMED("cudaStreamIsCapturing_ptsz",
                     rt_body_cudaStreamIsCapturing_ptsz(stream, pCaptureStatus));
}

static cudaError_t rt_capture_info(cudaStream_t s, enum cudaStreamCaptureStatus *status,
                                   unsigned long long *id, cudaGraph_t *graph,
                                   const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                   size_t *ndeps, int ptsz)
{
    if (status == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    const CUgraphEdgeData *ed = NULL;
    e = ptsz ? RT_CALL(streamGetCaptureInfo_ptsz, rt_stream(s, 1), &st, id ? &cid : NULL, graph,
                       deps, edges ? &ed : NULL, ndeps)
             : RT_CALL(streamGetCaptureInfo, rt_stream(s, 0), &st, id ? &cid : NULL, graph, deps,
                       edges ? &ed : NULL, ndeps);
    *status = (enum cudaStreamCaptureStatus)st;
    if (id != NULL) *id = cid;
    if (edges != NULL) *edges = (const cudaGraphEdgeData *)ed; /* same layout */
    return e;
}

RT_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                            enum cudaStreamCaptureStatus *captureStatus_out,
                                            unsigned long long *id_out, cudaGraph_t *graph_out,
                                            const cudaGraphNode_t **dependencies_out,
                                            const cudaGraphEdgeData **edgeData_out,
                                            size_t *numDependencies_out)
{
    return rt_capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                           edgeData_out, numDependencies_out, 0);
}

RT_API cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                                 enum cudaStreamCaptureStatus *captureStatus_out,
                                                 unsigned long long *id_out, cudaGraph_t *graph_out,
                                                 const cudaGraphNode_t **dependencies_out,
                                                 const cudaGraphEdgeData **edgeData_out,
                                                 size_t *numDependencies_out)
{
    return rt_capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                           edgeData_out, numDependencies_out, 1);
}

RT_API cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (mode == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    CUstreamCaptureMode m = (CUstreamCaptureMode)*mode;
    e = RT_CALL(threadExchangeStreamCaptureMode, &m);
    if (e == cudaSuccess) *mode = (enum cudaStreamCaptureMode)m;
    return e;
}
