/* The launch bracket of every hook body (hook_bodies.h): the depth that makes only the
 * outermost hooked call act, and the range pushed around a launch. Inline: this is the
 * per-launch path, which does no string work, takes no lock and allocates nothing. */
#ifndef NVTXCORR_LAUNCH_H
#define NVTXCORR_LAUNCH_H

#include <stdatomic.h>
#include <stdint.h>

#include <nvtx3/nvToolsExt.h>
#include "core/attributes.h"
#include "core/capture.h"
#include "core/emit.h"
#include "core/map.h"
#include "core/record.h"
#include "core/state.h"
/* Whether a launch is the outermost hooked call of its thread, and if so enters it (depth 1).
 * A depth that cannot be true is reset: siglongjmp out of a signal taken inside a hooked call
 * skips the frames that would have lowered the depth, and every later launch of the thread
 * would pass through. A nested call runs deeper on the stack than the outermost launch's
 * frame (stacks grow down); a launch at or above that frame means the frames below are gone.
 * The frame address is the launch body's own (always inlined): its entry stack pointer less
 * the saved frame pointer, whatever the body's frame size, so that the x86-64 entry stub,
 * which compares its entry stack pointer with it (hook_bodies.h), agrees. A launch made deeper
 * than the skipped one (or from a signal stack or the slow-path stack above it) is taken as
 * nested until one is made from as high up. */
__attribute__((always_inline)) static inline int nvtxcorr_launch_outermost(void)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (NVTXCORR_UNLIKELY(nvtxcorr_thread.depth != 0) && sp < nvtxcorr_thread.outer_sp) {
        nvtxcorr_thread.depth++;
        return 0;
    }
    nvtxcorr_thread.depth = 1;
    nvtxcorr_thread.outer_sp = sp;
    return 1;
}

static inline const nvtxcorr_label_t *nvtxcorr_launch_begin(nvtxcorr_label_slow_fn slow,
                                                            nvtxcorr_map_t *map, const void *key,
                                                            const void *stream, int ptsz)
{
    if (!nvtxcorr_launch_outermost()) return NULL;
    const void *v = nvtxcorr_map_get(map, key);
    if (NVTXCORR_UNLIKELY(v == NULL)) v = slow(key);
    if ((uintptr_t)v & 1) /* skip */
        return NULL;
    const nvtxcorr_label_t *l = nvtxcorr_label_of(v);
    if (NVTXCORR_UNLIKELY(atomic_load_explicit(&nvtxcorr_captures_open, memory_order_relaxed)))
        l = nvtxcorr_capture_adjust(l, stream, ptsz);
    if (l == NULL) return NULL;
    nvtxDomainRangePushEx(nvtxcorr_domain, &l->attr);
    return l;
}

static inline void nvtxcorr_launch_end(const nvtxcorr_label_t *pushed)
{
    if (pushed) nvtxDomainRangePop(nvtxcorr_domain);
    nvtxcorr_thread.depth--;
}

/* Non-launch hooks (instantiate, capture begin/end, name tracking) use the same depth so
 * that a runtime call and the driver call beneath it act once. */
static inline int nvtxcorr_enter(void)
{
    if (nvtxcorr_thread.depth++ != 0) return 0;
    /* This hook's frame, for nvtxcorr_launch_outermost: a signal handler that launches while
     * this hook runs is below it, so nested (passes through), whatever a stale earlier
     * launch's frame says. */
    nvtxcorr_thread.outer_sp = (uintptr_t)__builtin_frame_address(0);
    return 1;
}
static inline void nvtxcorr_leave(void)
{
    nvtxcorr_thread.depth--;
}

#endif
