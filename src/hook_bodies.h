/* Wrapper bodies, one per kind of hooked call in hooks.def, shared by the driver and runtime
 * hook files (which differ only in the result type and its codes). Each body forwards at
 * once when the library is disabled or no NVTX tool is attached; otherwise it brackets the
 * real call, which is always made exactly once with the caller's arguments, and its result
 * is returned unchanged. */
#ifndef NVTXCORR_HOOK_BODIES_H
#define NVTXCORR_HOOK_BODIES_H

#include "nvtxcorr.h"

/* R: result type; NOTFOUND: returned only when no real function exists at all. */
#define NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                   \
    __typeof__(&sym) real = (__typeof__(&sym))nvtxcorr_real(NVTXCORR_SLOT_##sym);              \
    if (NVTXCORR_UNLIKELY(real == NULL))                                                       \
        return NOTFOUND;

#define NVTXCORR_BODY_LAUNCH(R, NOTFOUND, sym, ptsz, params, args, kind, map, key, stream)     \
    NVTXCORR_EXPORT R sym params                                                               \
    {                                                                                          \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                   \
        if (!nvtxcorr_active())                                                                \
            return real args;                                                                  \
        const nvtxcorr_label_t *pushed =                                                       \
            nvtxcorr_launch_begin(kind, map, (const void *)(key), (const void *)(stream), ptsz); \
        R r = real args;                                                                       \
        nvtxcorr_launch_end(pushed);                                                           \
        return r;                                                                              \
    }

/* A call that is not a launch: `after` runs once per outermost call, with the result r,
 * while the depth is still held, so anything an NVTX tool or the driver calls back into
 * from there passes through instead of re-entering our locks. */
#define NVTXCORR_BODY_AFTER(R, NOTFOUND, sym, params, args, after)                             \
    NVTXCORR_EXPORT R sym params                                                               \
    {                                                                                          \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                   \
        if (!nvtxcorr_active())                                                                \
            return real args;                                                                  \
        int outer = nvtxcorr_enter();                                                          \
        R r = real args;                                                                       \
        if (outer) {                                                                           \
            after;                                                                             \
        }                                                                                      \
        nvtxcorr_leave();                                                                      \
        return r;                                                                              \
    }

/* Name tracking and unloads act at any depth: cudart loads modules lazily from inside a
 * launch, and those names are the only ones an old driver gives. Both are idempotent. */
#define NVTXCORR_BODY_ALWAYS(R, NOTFOUND, sym, params, args, after)                            \
    NVTXCORR_EXPORT R sym params                                                               \
    {                                                                                          \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                   \
        if (!nvtxcorr_active())                                                                \
            return real args;                                                                  \
        R r = real args;                                                                       \
        after;                                                                                 \
        return r;                                                                              \
    }

/* Destroy forgets the handle before the real call: once destroyed, the handle may be reused
 * by an instantiation on another thread, whose record must not be dropped. */
#define NVTXCORR_BODY_BEFORE(R, NOTFOUND, sym, params, args, before)                           \
    NVTXCORR_EXPORT R sym params                                                               \
    {                                                                                          \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                   \
        if (nvtxcorr_active() && nvtxcorr_thread.depth == 0) {                                 \
            before;                                                                            \
        }                                                                                      \
        return real args;                                                                      \
    }

#endif
