/* Where the entry stubs jump (src/routes.c): routes of this program's own, in the section
 * routes.c walks, each chosen from the mode, the captures open, the trace, the slot's real
 * function and the NVTX tool; and a refresh that returns leaves every route as the caller's
 * change says even while another thread refreshes too. (The first version let an older
 * refresh on another thread, still writing the routes it had read before, overwrite the new
 * ones after the newer refresh had returned: a capture's first launch could then take the
 * range path. This check counted about 25,000 such returns of 400,000.) */
#include <pthread.h>
#include "core/resolve.h"
#include "core/routes.h"
#include "core/state.h"
#include "test_core.h"

/* As many routes as the library has (hooks.def's launch rows), so that a refresh takes as
 * long as the library's: the race below needs that long a window to show. */
enum { N = 18 };
static char body[N], active[N], profile[N], trace[N], real[N];
__attribute__((used, section(NVTXCORR_ROUTES_SECTION))) static nvtxcorr_stub_routes_t routes[N];

static void set_up(void)
{
    for (int i = 0; i < N; i++)
        routes[i] = (nvtxcorr_stub_routes_t){&body[i],    0,         &body[i],   &active[i],
                                             &profile[i], &trace[i], (unsigned)i};
}

static void set_real(void)
{
    for (int i = 0; i < N; i++)
        atomic_store(&nvtxcorr_real_fn[i], (void *)&real[i]);
}

/* Whether every route leads to `where`'s entry for it. */
static int all_at(const char *where)
{
    for (int i = 0; i < N; i++)
        if (__atomic_load_n(&routes[i].entry, __ATOMIC_ACQUIRE) != &where[i]) return 0;
    return 1;
}

static _Atomic int stop;

static void *refresher(void *unused)
{
    (void)unused;
    while (!atomic_load(&stop))
        nvtxcorr_routes_refresh();
    return NULL;
}

void test_routes(void)
{
    /* Nothing resolved yet: the C body whatever the mode. */
    set_up();
    nvtxcorr_set_mode(NVTXCORR_MODE_PASSTHROUGH);
    CHECK(all_at(body));
    set_real();
    nvtxcorr_routes_refresh(); /* what resolve.c does once it stores a slot */
    CHECK(all_at(real));
    nvtxcorr_set_mode(NVTXCORR_MODE_PROFILE_IDLE);
    CHECK(all_at(real));
    nvtxcorr_set_mode(NVTXCORR_MODE_INITIALISING);
    CHECK(all_at(body));
    /* Active: the stub's range path only for a tool with both the push and the pop. */
    nvtxcorr_set_mode(NVTXCORR_MODE_ACTIVE);
    CHECK(all_at(body));
    nvtxcorr_tool_push = (void *)&active[0];
    nvtxcorr_set_mode(NVTXCORR_MODE_ACTIVE);
    CHECK(all_at(body));
    nvtxcorr_tool_pop = (void *)&active[1];
    nvtxcorr_set_mode(NVTXCORR_MODE_ACTIVE);
    CHECK(all_at(active));
    atomic_store(&nvtxcorr_captures_open, 1);
    nvtxcorr_routes_refresh();
    CHECK(all_at(body));
    atomic_store(&nvtxcorr_captures_open, 0);
    nvtxcorr_routes_refresh();
    CHECK(all_at(active));
    nvtxcorr_set_mode(NVTXCORR_MODE_PROFILE);
    CHECK(all_at(profile));
    nvtxcorr_routes_tracing(1);
    CHECK(all_at(trace));
    nvtxcorr_routes_tracing(0);
    CHECK(all_at(profile));

    /* A capture's begin and end on this thread while another thread refreshes all along: each
     * refresh this thread makes returns with every route as its change says. */
    nvtxcorr_set_mode(NVTXCORR_MODE_ACTIVE);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, refresher, NULL) == 0);
    unsigned stale = 0;
    for (int i = 0; i < 200000; i++) {
        atomic_store(&nvtxcorr_captures_open, 1);
        nvtxcorr_routes_refresh();
        stale += !all_at(body);
        atomic_store(&nvtxcorr_captures_open, 0);
        nvtxcorr_routes_refresh();
        stale += !all_at(active);
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    CHECK_EQ(stale, 0);
    CHECK(all_at(active));
    nvtxcorr_set_mode(NVTXCORR_MODE_ACTIVE);
}
