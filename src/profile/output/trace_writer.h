/* Trace mode's writer thread (trace_writer.c): the launches a thread hands it, formatted off
 * the launching thread. */
#ifndef NVTXCORR_PROF_TRACE_WRITER_H
#define NVTXCORR_PROF_TRACE_WRITER_H
#include "core/attributes.h"
#include "profile/base/pages.h"
#include "profile/counting/launch.h"
#include "profile/counting/record.h"
#include "profile/counting/stats.h"
enum { PROF_TRACE_RING = 1024 }; /* launches a thread may have waiting: 80 KiB a thread */
typedef struct prof_trace_rec {
    nvtxcorr_profile_launch_t pl;
    const char *api;
    unsigned grid[3];
    unsigned tid; /* the launching thread's (a block may pass to another thread) */
} prof_trace_rec_t;
extern _Atomic int nvtxcorr_prof_trace_writer_on;

/* Queues a launch for the writer thread: 0 when there is none, or no room (then the launch's
 * own thread formats it). Inline on the launch path; the ring is allocated at the thread's
 * first launch handed over. */
static inline int prof_trace_hand_off(const nvtxcorr_profile_launch_t *pl, const char *api,
                                      unsigned gx, unsigned gy, unsigned gz)
{
    if (!atomic_load_explicit(&nvtxcorr_prof_trace_writer_on, memory_order_relaxed)) return 0;
    prof_thread_t *t = nvtxcorr_prof_self; /* attached by the launch's count */
    if (NVTXCORR_UNLIKELY(t == NULL)) return 0;
    prof_trace_rec_t *ring = atomic_load_explicit(&t->ring, memory_order_relaxed);
    if (NVTXCORR_UNLIKELY(ring == NULL)) {
        if ((ring = nvtxcorr_prof_zalloc(PROF_TRACE_RING * sizeof *ring)) == NULL) return 0;
        atomic_store_explicit(&t->ring, ring, memory_order_release);
    }
    uint64_t head = atomic_load_explicit(&t->ring_head, memory_order_relaxed);
    if (head - atomic_load_explicit(&t->ring_tail, memory_order_acquire) >= PROF_TRACE_RING) {
        PROF_BUMP(t->inline_full, 1);
        return 0;
    }
    prof_trace_rec_t *r = &ring[head % PROF_TRACE_RING];
    r->pl = *pl;
    r->api = api;
    r->grid[0] = gx, r->grid[1] = gy, r->grid[2] = gz;
    r->tid = t->tid;
    atomic_store_explicit(&t->ring_head, head + 1, memory_order_release);
    return 1;
}

/* The writer thread. _start once profile mode has started (no thread when
 * NVTXCORR_TRACE_WRITER=0 or pthread_create fails: launches format their own events;
 * prof_trace_hand_off above queues a launch for it); _drain has the writer consume every
 * queue, waiting a bounded time, before the trace closes; _after_fork: a child has no writer. */
void nvtxcorr_prof_trace_writer_start(void);
void nvtxcorr_prof_trace_writer_drain(void);
void nvtxcorr_prof_trace_writer_after_fork(void);

#endif
