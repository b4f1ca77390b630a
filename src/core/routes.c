/* Where each x86-64 launch entry stub jumps (routes.h, hooks/entry_stubs.h). Every launch stub
 * puts its route in one section; the linker gathers them between __start_ and __stop_ of its
 * name. A route's entry starts as the stub's C body (which initialises the library) and is
 * rewritten here after anything it depends on changes: the mode, the count of captures open,
 * whether profile mode writes a trace, the slot's real function (resolve.c) and the NVTX
 * tool's push and pop (read once, before the mode becomes active). Those change a handful of
 * times in a run (a capture's begin and end, a window), launches millions of times, so the
 * launch tests none of them.
 *
 * Writers never lock, so that a signal handler, a window's helper thread and a forked child may
 * all refresh. Each refresh claims a generation (one atomic add), then reads what the routes
 * depend on, then writes each route with its generation in one 16-byte compare-and-swap,
 * leaving alone a route that a later refresh has written already. So a route's generation
 * only grows, and when a refresh returns every route holds what a refresh claimed no earlier
 * than it wrote: one that read the inputs after the caller changed one. A launch the caller
 * makes next takes the new route (a capture's first launch takes the C body, the launch after
 * cuProfilerStop is not counted). Signals are blocked meanwhile, so a handler that leaves by
 * siglongjmp cannot abandon a refresh halfway. Another thread may take the previous route for
 * a moment, exactly as if it had read the mode a moment earlier. On other architectures, and
 * in builds without the stubs, the section is empty. */
#define _GNU_SOURCE
#include <signal.h>
#include "attributes.h"
#include "resolve.h"
#include "routes.h"
#include "state.h"
extern nvtxcorr_stub_routes_t __start_nvtxcorr_routes[] __attribute__((weak)) NVTXCORR_HIDDEN;
extern nvtxcorr_stub_routes_t __stop_nvtxcorr_routes[] __attribute__((weak)) NVTXCORR_HIDDEN;

enum { ROUTE_BODY, ROUTE_REAL, ROUTE_ACTIVE, ROUTE_PROFILE, ROUTE_TRACE };

static _Atomic int tracing;
static _Atomic uint64_t generation; /* the last one claimed */

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

/* Replaces (entry, gen) with (to, g) if it still holds (entry, gen): one locked cmpxchg16b
 * (every x86-64 CPU this library's stubs run on has it), so a route's target and generation
 * never part. Elsewhere there are no routes to write. */
static int swap_route(nvtxcorr_stub_routes_t *r, void *entry, uint64_t gen, void *to, uint64_t g)
{
#if defined(__x86_64__)
    unsigned char done;
    __asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
                     : "=q"(done), "+m"(*r), "+a"(entry), "+d"(gen)
                     : "b"(to), "c"(g)
                     : "memory", "cc");
    return done;
#else
    (void)r, (void)entry, (void)gen, (void)to, (void)g;
    return 1;
#endif
}

void nvtxcorr_routes_refresh(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    uint64_t g = atomic_fetch_add(&generation, 1) + 1;
    unsigned route = route_now(); /* after the claim: a later claim reads later inputs */
    for (nvtxcorr_stub_routes_t *r = __start_nvtxcorr_routes; r < __stop_nvtxcorr_routes; r++)
        for (;;) {
            uint64_t gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
            void *entry = __atomic_load_n(&r->entry, __ATOMIC_ACQUIRE);
            if (gen >= g || swap_route(r, entry, gen, target(r, route), g)) break;
        }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
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
