/* Which function a resolver hands out for a hooked symbol: our hook, once the real function
 * it found is stored in the symbol's slot (core/resolve.c), or the real function itself. dlsym
 * (dlsym.c), cuGetProcAddress and cudaGetDriverEntryPoint (procaddr.c) all follow this rule. */
#include <stddef.h>
#include "core/attributes.h"
#include "core/config.h"
#include "core/log.h"
#include "core/resolve.h"
#include "core/routes.h"
#include "core/state.h"
#include "hooks.h"
#include "init.h"
/* The hooks by their hidden aliases (NVTXCORR_LOCAL_ALIAS): never another library's
 * definition of the same name. Declared with a placeholder type, used only as addresses. */
#define DRIVER(kind, sym, ...) void nvtxcorr_local_##sym(void) NVTXCORR_HIDDEN;
#define RUNTIME DRIVER
#include "core/hooks.def"

const nvtxcorr_hook_t nvtxcorr_hooks[NVTXCORR_SLOT_COUNT] = {
#define DRIVER(kind, sym, pub, ver, ptsz, ...)                                                     \
    {#sym, #pub, ver, ptsz, (void *)nvtxcorr_local_##sym},
#define RUNTIME(kind, sym, ptsz, ...) {#sym, NULL, 0, ptsz, (void *)nvtxcorr_local_##sym},
#include "core/hooks.def"
};

int nvtxcorr_slot_of_hook(const void *fn)
{
    for (int i = 0; i < NVTXCORR_SLOT_COUNT; i++)
        if (nvtxcorr_hooks[i].hook == fn) return i;
    return -1;
}

/* Stores `real` in slot `id` (the first one wins) and returns our hook, or `real` itself when
 * the slot already holds another implementation. */
static void *claim_slot(nvtxcorr_slot_id_t id, void *real)
{
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&nvtxcorr_real_fn[id], &expected, real)) {
        nvtxcorr_keep_loaded(real);
        nvtxcorr_routes_refresh();
        return nvtxcorr_hooks[id].hook;
    }
    if (expected == real) return nvtxcorr_hooks[id].hook;
    /* Until initialisation ends the configuration (the log level) is still being written. */
    int mode = atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire);
    if (mode >= NVTXCORR_MODE_ACTIVE || mode == NVTXCORR_MODE_PASSTHROUGH)
        nvtxcorr_log(NVTXCORR_LOG_DEBUG, "%s: second implementation %p passed through unwrapped",
                     nvtxcorr_hooks[id].symbol, real);
    return real;
}

/* Whether a resolver hands out our hook for a real function. Disabled or no NVTX tool: no,
 * the real function, so that path costs nothing. While another thread initialises the answer
 * is not known yet, and our hook is right either way. */
int nvtxcorr_hand_out_hooks(void)
{
    return nvtxcorr_active() || (atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire) ==
                                     NVTXCORR_MODE_INITIALISING &&
                                 !nvtxcorr_initialising_here());
}

void *nvtxcorr_claim(nvtxcorr_slot_id_t id, void *real)
{
    if (real == NULL || nvtxcorr_slot_of_hook(real) >= 0) return real;
    return nvtxcorr_hand_out_hooks() ? claim_slot(id, real) : real;
}

void *nvtxcorr_claim_nowait(nvtxcorr_slot_id_t id, void *real)
{
    if (real == NULL || nvtxcorr_slot_of_hook(real) >= 0) return real;
    int mode = atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire);
    if (mode == NVTXCORR_MODE_PASSTHROUGH ||
        (mode == NVTXCORR_MODE_UNINIT && nvtxcorr_config_disabled()))
        return real;
    /* Active, or not known yet: our hook, which forwards if the library turns out to be
     * pass-through. */
    return claim_slot(id, real);
}
