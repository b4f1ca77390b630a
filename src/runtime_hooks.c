/* Runtime API hooks: the exported cuda* wrappers of hooks.def, for programs that use the
 * shared libcudart (nvcc -cudart shared, PyTorch). CUDA 13's <<<>>> calls __cudaLaunchKernel
 * with a cudaKernel_t, which is a CUkernel: it shares the driver's per-handle labels. The
 * runtime then launches through a driver pointer that is hooked too; the thread's depth
 * counter keeps that to one range. A static cudart never reaches these; its driver calls
 * are caught by cuGetProcAddress instead. */
#include "hook_bodies.h"

#define OK cudaSuccess
#define NOTFOUND cudaErrorSymbolNotFound

#define LAUNCH_KERNEL(sym, ptsz, params, args, k, s)                                               \
    NVTXCORR_BODY_LAUNCH(cudaError_t, NOTFOUND, sym, ptsz, params, args, NVTXCORR_KEY_FUNCTION,    \
                         &nvtxcorr_function_labels, k, s)
#define LAUNCH_HOST(sym, ptsz, params, args, func, s)                                              \
    NVTXCORR_BODY_LAUNCH(cudaError_t, NOTFOUND, sym, ptsz, params, args, NVTXCORR_KEY_HOST,        \
                         &nvtxcorr_host_labels, func, s)
#define LAUNCH_GRAPH(sym, ptsz, params, args, e, s)                                                \
    NVTXCORR_BODY_LAUNCH(cudaError_t, NOTFOUND, sym, ptsz, params, args, NVTXCORR_KEY_GRAPH,       \
                         &nvtxcorr_graph_labels, e, s)
#define INSTANTIATE(sym, ptsz, params, args, pe, g)                                                \
    NVTXCORR_BODY_AFTER(cudaError_t, NOTFOUND, sym, params, args,                                  \
                        if (r == OK && (pe) && *(pe))                                              \
                            nvtxcorr_graph_instantiated((CUgraphExec) * (pe), (CUgraph)(g)))
#define EXEC_UPDATE(sym, ptsz, params, args, e, g)                                                 \
    NVTXCORR_BODY_AFTER(cudaError_t, NOTFOUND, sym, params, args,                                  \
                        if (r == OK) nvtxcorr_graph_updated((CUgraphExec)(e), (CUgraph)(g)))
#define EXEC_DESTROY(sym, ptsz, params, args, e)                                                   \
    NVTXCORR_BODY_BEFORE(cudaError_t, NOTFOUND, sym, params, args,                                 \
                         nvtxcorr_graph_destroyed((CUgraphExec)(e)))
#define CAPTURE_BEGIN(sym, ptsz, params, args, ...)                                                \
    NVTXCORR_BODY_AFTER(cudaError_t, NOTFOUND, sym, params, args,                                  \
                        if (r == OK) nvtxcorr_capture_changed(+1))
#define CAPTURE_END(sym, ptsz, params, args, ...)                                                  \
    NVTXCORR_BODY_AFTER(cudaError_t, NOTFOUND, sym, params, args,                                  \
                        if (r == OK || r == cudaErrorStreamCaptureInvalidated ||                   \
                            r == cudaErrorStreamCaptureUnjoined) nvtxcorr_capture_changed(-1))
#define SPECIAL(...) /* procaddr.c */

#define RUNTIME(kind, sym, ptsz, params, args, ...) kind(sym, ptsz, params, args, __VA_ARGS__)
#include "hooks.def"
