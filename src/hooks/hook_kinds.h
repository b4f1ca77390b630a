/* One hook per kind of row of hooks.def (NVTXCORR_HOOK_<kind>), each a body of
 * hook_bodies.h with the kind's own step. */
#ifndef NVTXCORR_HOOK_BODIES_H
#error "hook_kinds.h is included by hook_bodies.h only"
#endif
#ifndef NVTXCORR_HOOK_KINDS_H
#define NVTXCORR_HOOK_KINDS_H

/* The kinds of hooks.def, written once for both layers. A file that includes this header
 * first defines its layer's result type and codes:
 *   NVTXCORR_HOOK_RESULT            CUresult / cudaError_t
 *   NVTXCORR_HOOK_OK, NVTXCORR_HOOK_NOTFOUND
 *   NVTXCORR_HOOK_CAPTURE_ENDED(r)  whether an end-capture call with result r ended the capture
 *                                   (an invalidated or unjoined capture has ended too)
 * and ends with hook_bodies_end.h, which undefines them and every NVTXCORR_HOOK_<kind>.
 * Handles are cast to the driver's types: the runtime's are the same objects. */
#define NVTXCORR_HOOK_LAUNCH_FN(sym, ptsz, params, args, f, s, grid, abi)                          \
    NVTXCORR_BODY_LAUNCH(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, ptsz, params, args,    \
                         nvtxcorr_function_label_slow, nvtxcorr_function_labels, f, s,             \
                         NVTXCORR_PROFILE_FUNCTION, grid, abi)
#define NVTXCORR_HOOK_LAUNCH_HOST(sym, ptsz, params, args, func, s, grid, abi)                     \
    NVTXCORR_BODY_LAUNCH(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, ptsz, params, args,    \
                         nvtxcorr_host_label_slow, nvtxcorr_host_labels, func, s,                  \
                         NVTXCORR_PROFILE_HOST, grid, abi)
#define NVTXCORR_HOOK_LAUNCH_GRAPH(sym, ptsz, params, args, e, s, abi)                             \
    NVTXCORR_BODY_LAUNCH(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, ptsz, params, args,    \
                         nvtxcorr_graph_label_slow, nvtxcorr_graph_labels, e, s,                   \
                         NVTXCORR_PROFILE_GRAPH, (0, 0, 0), abi)
#define NVTXCORR_HOOK_INSTANTIATE(sym, ptsz, params, args, pe, g)                                  \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (r == NVTXCORR_HOOK_OK && (pe) && *(pe))                                \
                            nvtxcorr_graph_instantiated((CUgraphExec) * (pe), (CUgraph)(g)))
#define NVTXCORR_HOOK_EXEC_UPDATE(sym, ptsz, params, args, e, g)                                   \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (r == NVTXCORR_HOOK_OK)                                                 \
                            nvtxcorr_graph_updated((CUgraphExec)(e), (CUgraph)(g)))
#define NVTXCORR_HOOK_EXEC_DESTROY(sym, ptsz, params, args, e)                                     \
    NVTXCORR_BODY_BEFORE(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         nvtxcorr_graph_destroyed((CUgraphExec)(e)))
#define NVTXCORR_HOOK_CAPTURE_BEGIN(sym, ptsz, params, args, ...)                                  \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (r == NVTXCORR_HOOK_OK) nvtxcorr_capture_changed(+1))
#define NVTXCORR_HOOK_CAPTURE_END(sym, ptsz, params, args, ...)                                    \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (NVTXCORR_HOOK_CAPTURE_ENDED(r)) nvtxcorr_capture_changed(-1))
/* Driver only: kernel names for drivers older than cuFuncGetName (12.3). */
#define NVTXCORR_HOOK_TRACK_FUNCTION(sym, ptsz, params, args, pf, name)                            \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK && (pf) && *(pf))                               \
                             nvtxcorr_track_name(*(pf), name))
#define NVTXCORR_HOOK_TRACK_KERNEL(sym, ptsz, params, args, pk, name)                              \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK && (pk) && *(pk))                               \
                             nvtxcorr_track_name(*(pk), name))
#define NVTXCORR_HOOK_TRACK_KERNEL_FUNCTION(sym, ptsz, params, args, pf, k)                        \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK && (pf) && *(pf))                               \
                             nvtxcorr_track_alias(*(pf), k))
/* An unloaded module's handles may come back for other kernels: drop cached labels. */
#define NVTXCORR_HOOK_UNLOAD(sym, ptsz, params, args, ...)                                         \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK) nvtxcorr_forget_functions())
/* Driver only: cuProfilerStart (start 1) and cuProfilerStop (0) open and close profile
 * mode's windows (profile.h); the real call is made first, whatever it returns. */
#define NVTXCORR_HOOK_PROFILER(sym, ptsz, params, args, start)                                     \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        nvtxcorr_profile_profiler_api(start))
/* The resolvers: the real one answers, and only what it returned is wrapped (procaddr.c). */
#define NVTXCORR_HOOK_PROC_ADDRESS(sym, ptsz, params, args, symbol, pfn, version, flags)           \
    NVTXCORR_EXPORT NVTXCORR_HOOK_RESULT sym params                                                \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NVTXCORR_HOOK_NOTFOUND)                                         \
        NVTXCORR_HOOK_RESULT r = real args;                                                        \
        if (r == NVTXCORR_HOOK_OK && (pfn))                                                        \
            *(pfn) = nvtxcorr_wrap_driver(symbol, version, flags, *(pfn));                         \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)
/* Runtime only. The runtime resolves through a driver cuGetProcAddress that is usually
 * already ours, so most answers arrive wrapped; the version of the plain form is the
 * runtime's own and unknown here (-1): only pointers already held in a slot are wrapped. */
#define NVTXCORR_HOOK_ENTRY_POINT(sym, ptsz, params, args, symbol, pfn, flags, version)            \
    NVTXCORR_EXPORT NVTXCORR_HOOK_RESULT sym params                                                \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NVTXCORR_HOOK_NOTFOUND)                                         \
        NVTXCORR_HOOK_RESULT r = real args;                                                        \
        if (r == NVTXCORR_HOOK_OK && (pfn) && *(pfn)) {                                            \
            int v = (version);                                                                     \
            *(pfn) = nvtxcorr_wrap_driver(                                                         \
                symbol, v, nvtxcorr_entry_point_flags(symbol, v, flags, ptsz, *(pfn)), *(pfn));    \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

#endif
