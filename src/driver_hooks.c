/* Driver API hooks: the exported cu* wrappers of hooks.def. Reached directly (-lcuda), via
 * dlsym on a libcuda handle (resolve.c) and via cuGetProcAddress (procaddr.c). */
#include "hook_bodies.h"

#define OK CUDA_SUCCESS
#define NOTFOUND CUDA_ERROR_NOT_FOUND

#define LAUNCH_FN(sym, ptsz, params, args, f, s)                                                   \
    NVTXCORR_BODY_LAUNCH(CUresult, NOTFOUND, sym, ptsz, params, args, NVTXCORR_KEY_FUNCTION,       \
                         &nvtxcorr_function_labels, f, s)
#define LAUNCH_GRAPH(sym, ptsz, params, args, e, s)                                                \
    NVTXCORR_BODY_LAUNCH(CUresult, NOTFOUND, sym, ptsz, params, args, NVTXCORR_KEY_GRAPH,          \
                         &nvtxcorr_graph_labels, e, s)
#define INSTANTIATE(sym, ptsz, params, args, pe, g)                                                \
    NVTXCORR_BODY_AFTER(CUresult, NOTFOUND, sym, params, args,                                     \
                        if (r == OK && (pe) && *(pe)) nvtxcorr_graph_instantiated(*(pe), g))
#define EXEC_UPDATE(sym, ptsz, params, args, e, g)                                                 \
    NVTXCORR_BODY_AFTER(CUresult, NOTFOUND, sym, params, args,                                     \
                        if (r == OK) nvtxcorr_graph_updated(e, g))
#define EXEC_DESTROY(sym, ptsz, params, args, e)                                                   \
    NVTXCORR_BODY_BEFORE(CUresult, NOTFOUND, sym, params, args, nvtxcorr_graph_destroyed(e))
#define CAPTURE_BEGIN(sym, ptsz, params, args, ...)                                                \
    NVTXCORR_BODY_AFTER(CUresult, NOTFOUND, sym, params, args,                                     \
                        if (r == OK) nvtxcorr_capture_changed(+1))
/* An invalidated or unjoined capture has still ended. */
#define CAPTURE_END(sym, ptsz, params, args, ...)                                                  \
    NVTXCORR_BODY_AFTER(CUresult, NOTFOUND, sym, params, args,                                     \
                        if (r == OK || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||               \
                            r == CUDA_ERROR_STREAM_CAPTURE_UNJOINED) nvtxcorr_capture_changed(-1))
#define TRACK_FUNCTION(sym, ptsz, params, args, pf, name)                                          \
    NVTXCORR_BODY_ALWAYS(CUresult, NOTFOUND, sym, params, args,                                    \
                         if (r == OK && (pf) && *(pf)) nvtxcorr_track_name(*(pf), name))
#define TRACK_KERNEL(sym, ptsz, params, args, pk, name)                                            \
    NVTXCORR_BODY_ALWAYS(CUresult, NOTFOUND, sym, params, args,                                    \
                         if (r == OK && (pk) && *(pk)) nvtxcorr_track_name(*(pk), name))
#define TRACK_KERNEL_FUNCTION(sym, ptsz, params, args, pf, k)                                      \
    NVTXCORR_BODY_ALWAYS(CUresult, NOTFOUND, sym, params, args,                                    \
                         if (r == OK && (pf) && *(pf)) nvtxcorr_track_alias(*(pf), k))
/* An unloaded module's handles may come back for other kernels: drop cached labels. */
#define UNLOAD(sym, ptsz, params, args, ...)                                                       \
    NVTXCORR_BODY_ALWAYS(CUresult, NOTFOUND, sym, params, args,                                    \
                         if (r == OK) nvtxcorr_forget_functions())
#define SPECIAL(...) /* procaddr.c */

#define DRIVER(kind, sym, pub, ver, ptsz, params, args, ...)                                       \
    kind(sym, ptsz, params, args, __VA_ARGS__)
#include "hooks.def"
