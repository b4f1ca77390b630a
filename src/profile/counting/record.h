/* The launch path's half of stats.c: a launch counted in the calling thread's record for its
 * site. Inline, so that it is inlined into nvtxcorr_profile_end (profile.c): the library is
 * built without link-time optimisation, and a call here would cost every profiled launch. What it
 * calls out of line (a thread's first record block, a full bucket's carry) is stats.c's. */
#ifndef NVTXCORR_PROFILE_RECORD_H
#define NVTXCORR_PROFILE_RECORD_H
#include "context/context.h"
#include "context_stats.h"
#include "core/attributes.h"
#include "launch.h"
#include "profile/base/histogram.h"
#include "stats.h"
prof_record_t *nvtxcorr_prof_chunk_new(prof_thread_t *t, uint32_t id);
/* A record's 16-bit bucket b (at `bucket`) is full: 65,536 more go to the site's shared
 * bucket and it restarts from 0. */
__attribute__((noinline, cold)) void nvtxcorr_prof_spill(nvtxcorr_profile_site_t *s,
                                                         _Atomic uint16_t *bucket, unsigned b);

#define PROF_BUMP(field, by)                                                                       \
    atomic_store_explicit(&(field), atomic_load_explicit(&(field), memory_order_relaxed) + (by),   \
                          memory_order_relaxed)

static inline __attribute__((always_inline)) void prof_record(const nvtxcorr_profile_launch_t *pl,
                                                              int failed)
{
    prof_thread_t *t = nvtxcorr_prof_self;
    if (NVTXCORR_UNLIKELY(t == NULL) && (t = nvtxcorr_prof_thread_attach()) == NULL) return;
    uint32_t id = pl->site->id;
    prof_record_t *c = atomic_load_explicit(&t->chunks[id / PROF_CHUNK], memory_order_relaxed);
    if (NVTXCORR_UNLIKELY(c == NULL) && (c = nvtxcorr_prof_chunk_new(t, id)) == NULL) return;
    prof_record_t *r = &c[id % PROF_CHUNK];
    if (failed) PROF_BUMP(r->errors, 1); /* a launch that failed while capturing too */
    if (pl->capturing) { /* recorded into a graph, not run: counted apart, not timed */
        PROF_BUMP(r->capture, 1);
        return;
    }
    uint64_t ns = pl->ns, n = atomic_load_explicit(&r->launches, memory_order_relaxed);
    atomic_store_explicit(&r->launches, n + 1, memory_order_relaxed);
    PROF_BUMP(r->total_ns, ns);
    if (n == 0 || ns < atomic_load_explicit(&r->min_ns, memory_order_relaxed))
        atomic_store_explicit(&r->min_ns, ns, memory_order_relaxed);
    if (ns > atomic_load_explicit(&r->max_ns, memory_order_relaxed))
        atomic_store_explicit(&r->max_ns, ns, memory_order_relaxed);
    if (atomic_load_explicit(&nvtxcorr_context_active, memory_order_relaxed)) {
        prof_ctx_cell_t *x = nvtxcorr_prof_ctx_cell(t, pl->ctx, id);
        if (x) PROF_BUMP(x->launches, 1), PROF_BUMP(x->ns, ns);
    }
    unsigned b = prof_bucket(ns);
    unsigned v = atomic_load_explicit(&r->hist[b], memory_order_relaxed) + 1u;
    if (NVTXCORR_LIKELY(v != PROF_SPILL))
        atomic_store_explicit(&r->hist[b], (uint16_t)v, memory_order_relaxed);
    else
        nvtxcorr_prof_spill(pl->site, &r->hist[b], b);
}

#endif
