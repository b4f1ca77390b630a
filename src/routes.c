/* Where each x86-64 launch entry stub jumps (nvtxcorr.h, hook_bodies.h). Every launch stub
 * puts its route in one section; the linker gathers them between __start_ and __stop_ of its
 * name. A route's entry starts as the stub's C body (which initialises the library) and is
 * rewritten here after anything it depends on changes: the mode, the count of captures open,
 * whether profile mode writes a trace, the slot's real function (resolve.c) and the NVTX
 * tool's push and pop (read once, before the mode becomes active). Those change a handful of
 * times in a run (a capture's begin and end, a window), launches millions of times, so the
 * launch tests none of them.
 *
 * Writers never lock, so that a signal handler or a forked child may refresh too: each refresh
 * claims a new generation of the route word (a compare-and-swap, after reading what it
 * depends on), writes every entry, and starts again if another refresh claimed a newer one
 * meanwhile. The last refresh to finish has written every entry after the newest claim, and
 * that claim read the inputs after every change made before it. In between, a launch may take
 * the previous route for a moment: exactly as if it had read the mode a moment earlier. On
 * other architectures, and in builds without the stubs, the section is empty. */
#include "nvtxcorr.h"

extern nvtxcorr_stub_routes_t __start_nvtxcorr_routes[] __attribute__((weak)) NVTXCORR_HIDDEN;
extern nvtxcorr_stub_routes_t __stop_nvtxcorr_routes[] __attribute__((weak)) NVTXCORR_HIDDEN;

enum { ROUTE_BODY, ROUTE_REAL, ROUTE_ACTIVE, ROUTE_PROFILE, ROUTE_TRACE };

static _Atomic int tracing;
static _Atomic unsigned route_word; /* generation << 8 | route */

static unsigned route_now(void)
{
    int mode = atomic_load(&nvtxcorr_mode);
    if (mode == NVTXCORR_MODE_PASSTHROUGH || mode == NVTXCORR_MODE_PROFILE_IDLE) return ROUTE_REAL;
    /* A launch into a capture is labelled apart, or skipped (capture.c): the C body asks. */
    if (atomic_load(&nvtxcorr_captures_open) != 0) return ROUTE_BODY;
    if (mode == NVTXCORR_MODE_ACTIVE)
        return nvtxcorr_tool_push && nvtxcorr_tool_pop ? ROUTE_ACTIVE : ROUTE_BODY;
    if (mode == NVTXCORR_MODE_PROFILE) return atomic_load(&tracing) ? ROUTE_TRACE : ROUTE_PROFILE;
    return ROUTE_BODY; /* not initialised, or initialising */
}

static void *target(const nvtxcorr_stub_routes_t *r, unsigned route)
{
    void *real = atomic_load_explicit(&nvtxcorr_real_fn[r->slot], memory_order_acquire);
    if (real == NULL) return r->body; /* the body resolves it */
    switch (route) {
    case ROUTE_REAL:
        return real;
    case ROUTE_ACTIVE:
        return (void *)r->active;
    case ROUTE_PROFILE:
        return (void *)r->profile;
    case ROUTE_TRACE:
        return (void *)r->trace;
    default:
        return r->body;
    }
}

void nvtxcorr_routes_refresh(void)
{
    for (;;) {
        unsigned w = atomic_load(&route_word);
        unsigned next = ((w >> 8) + 1) << 8 | route_now();
        if (!atomic_compare_exchange_strong(&route_word, &w, next)) continue;
        for (nvtxcorr_stub_routes_t *r = __start_nvtxcorr_routes; r < __stop_nvtxcorr_routes; r++)
            atomic_store_explicit(&r->entry, target(r, next & 0xff), memory_order_release);
        if (atomic_load(&route_word) == next) return;
    }
}

void nvtxcorr_routes_tracing(int on)
{
    atomic_store(&tracing, on != 0);
    nvtxcorr_routes_refresh();
}

void nvtxcorr_set_mode(int mode)
{
    atomic_store_explicit(&nvtxcorr_mode, mode, memory_order_release);
    nvtxcorr_routes_refresh();
}
