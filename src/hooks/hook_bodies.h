/* Wrapper bodies, one per kind of hooked call in hooks.def, shared by the driver and runtime
 * hook files (which differ only in the result type and its codes). Each body forwards at
 * once when the library is disabled or no NVTX tool is attached; otherwise it brackets the
 * real call, which is always made exactly once with the caller's arguments, and its result
 * is returned unchanged. */
#ifndef NVTXCORR_HOOK_BODIES_H
#define NVTXCORR_HOOK_BODIES_H
#include "core/attributes.h"
#include "core/capture.h"
#include "core/emit.h"
#include "core/graphs.h"
#include "core/kernels.h"
#include "core/map.h"
#include "core/record.h"
#include "core/resolve.h"
#include "core/routes.h"
#include "core/state.h"
#include "hooks.h"
#include "init.h"
#include "launch.h"
#include "profile/counting/launch.h"
#include "profile/profile.h"
/* R: result type; NOTFOUND: returned only when no real function exists at all. */
#define NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
    __typeof__(&sym) real = (__typeof__(&sym))nvtxcorr_real(NVTXCORR_SLOT_##sym);                  \
    if (NVTXCORR_UNLIKELY(real == NULL)) return NOTFOUND;

/* Launch hooks. On x86-64 the exported symbol is an assembly entry stub whose first
 * instruction jumps where its route (nvtxcorr_stub_routes_t, routes.c) points: the real
 * function itself when the library is pass-through or profiling between windows
 * (PROFILE_IDLE), with the caller's registers and stack untouched; one of the stub's fast
 * paths (ACTIVE, PROFILE, PROFILE while a trace is written); or the C body below, a hidden
 * function, while nothing else applies (not yet initialised, the slot not yet resolved, a
 * capture open anywhere, an NVTX tool without a range push or pop). routes.c rewrites the
 * routes whenever one of those changes, so the launch itself tests none of them. A fast path
 * forwards straight to the real function when the launch is nested inside another hooked call
 * (a runtime launch reaching the driver: the depth is nonzero and the stack pointer below the
 * outermost launch's, launch.h); an outermost launch whose handle has a record at its first
 * probe in the map, with a range to push, is bracketed by the stub itself. Anything else (a
 * first launch, a probe that misses, a "-" rule, a record without its profile site) goes to the
 * C body, which does all of it. In C, GCC cannot forward an 11-argument call without saving
 * every argument register and reloading the stack arguments, and it saves five callee-saved
 * registers it then barely uses: that was most of the cost of a range (docs/performance.md,
 * "The launch path at its floor"). Elsewhere the C body is the exported symbol itself. Either
 * way the entry has a second, hidden name, nvtxcorr_local_<sym>, for the hook table
 * (hooks.h). */
#include "entry_stubs.h"

/* `pkind` names the launch's kind for profile mode; `grid` is "(x, y, z)", used only by
 * profile mode's trace. */
#define NVTXCORR_BODY_LAUNCH(R, NOTFOUND, sym, ptsz, params, args, slow, mapsym, key, stream,      \
                             pkind, grid, abi)                                                     \
    NVTXCORR_LAUNCH_BODY_ATTRS R NVTXCORR_LAUNCH_BODY_NAME(sym) params                             \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        int mode = nvtxcorr_launch_mode();                                                         \
        if (NVTXCORR_UNLIKELY(mode != NVTXCORR_MODE_ACTIVE)) {                                     \
            if (mode != NVTXCORR_MODE_PROFILE) {                                                   \
                if (mode == NVTXCORR_MODE_INITIALISING) nvtxcorr_passed_while_starting();          \
                return real args;                                                                  \
            }                                                                                      \
            if (!nvtxcorr_launch_outermost()) {                                                    \
                nvtxcorr_thread.depth--;                                                           \
                return real args;                                                                  \
            }                                                                                      \
            NVTXCORR_PROFILE_LAUNCH(R, real args, pkind, slow, &mapsym, key, stream, ptsz, grid,   \
                                    #sym);                                                         \
        }                                                                                          \
        const nvtxcorr_label_t *pushed = nvtxcorr_launch_begin(slow, &mapsym, (const void *)(key), \
                                                               (const void *)(stream), ptsz);      \
        R r = real args;                                                                           \
        nvtxcorr_launch_end(pushed);                                                               \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LAUNCH_STUB(R, sym, params, mapsym, stream, grid, abi)

/* A call that is not a launch: `after` runs once per outermost call, with the result r,
 * while the depth is still held, so anything an NVTX tool or the driver calls back into
 * from there passes through instead of re-entering our locks. */
#define NVTXCORR_BODY_AFTER(R, NOTFOUND, sym, params, args, after)                                 \
    NVTXCORR_EXPORT R sym params                                                                   \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        if (!nvtxcorr_active()) return real args;                                                  \
        int outer = nvtxcorr_enter();                                                              \
        R r = real args;                                                                           \
        if (outer) {                                                                               \
            after;                                                                                 \
        }                                                                                          \
        nvtxcorr_leave();                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

/* Name tracking and unloads act at any depth: cudart loads modules lazily from inside a
 * launch, and those names are the only ones an old driver gives. Both are idempotent. The
 * depth is still raised around them, as around every hook that takes our locks, so a signal
 * handler that launches while this thread is inside passes through instead of re-entering a
 * lock this thread holds. */
#define NVTXCORR_BODY_ALWAYS(R, NOTFOUND, sym, params, args, after)                                \
    NVTXCORR_EXPORT R sym params                                                                   \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        if (!nvtxcorr_active()) return real args;                                                  \
        (void)nvtxcorr_enter();                                                                    \
        R r = real args;                                                                           \
        after;                                                                                     \
        nvtxcorr_leave();                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

/* Destroy forgets the handle before the real call: once destroyed, the handle may be reused
 * by an instantiation on another thread, whose record must not be dropped. The depth is held
 * across both, as in every other body. */
#define NVTXCORR_BODY_BEFORE(R, NOTFOUND, sym, params, args, before)                               \
    NVTXCORR_EXPORT R sym params                                                                   \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        if (!nvtxcorr_active()) return real args;                                                  \
        if (nvtxcorr_enter()) {                                                                    \
            before;                                                                                \
        }                                                                                          \
        R r = real args;                                                                           \
        nvtxcorr_leave();                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

#include "hook_kinds.h"

#endif
