/* Trace mode's writer thread: the launching thread hands each launch to it instead of
 * formatting the launch's events itself (docs/profile.md, Trace mode). A launch is a small
 * record (the profile launch, the entry point, the grid, the thread) put in its thread's ring
 * of PROF_TRACE_RING; the writer takes the records out, formats them with trace.c's form into
 * its own buffer, which trace.c writes out as it does every thread's. What the launching
 * thread pays is the copy; the formatting (most of trace mode's cost per launch) runs on the
 * writer's core.
 *
 * Nothing waits for the writer on the launch path: a full ring (the writer behind, or not
 * scheduled) makes the launch format its own events, as without the writer, into its own
 * buffer, with its own caches; the writer formats a thread's records with a shadow of that
 * thread's caches (`shadow`), so the two never share one. Events are not in time order in the
 * file (they never were across threads); viewers sort them.
 *
 * A ring has one producer (its thread) and one consumer (the writer). A thread that exits
 * leaves its ring to the writer: each record names its thread, so the block's next owner
 * changes nothing. At the trace's close the writer is asked to take every record out and is
 * waited for a bounded time (about a second); what it has not taken by then is left out and
 * said. The writer polls (again at once while it finds work, then after 1, 2, 4 ... 16 ms)
 * rather than being woken: the close may run in a signal handler, where a condition variable
 * cannot be signalled. It blocks every signal. A forked child has no writer: its launches
 * format their own events, and its rings' records (the parent's) are dropped. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "core/config.h"
#include "core/log.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "profile/base/process.h"
#include "profile/counting/stats.h"
#include "trace.h"
#include "trace_writer.h"
_Atomic int nvtxcorr_prof_trace_writer_on;
static _Atomic unsigned drain_asked, drain_done;

/* Formats what is in t's ring into the writer's buffer; returns how many records it took out. */
static size_t consume(prof_thread_t *t)
{
    prof_trace_rec_t *ring = atomic_load_explicit(&t->ring, memory_order_acquire);
    if (ring == NULL) return 0;
    uint64_t tail = atomic_load_explicit(&t->ring_tail, memory_order_relaxed),
             head = atomic_load_explicit(&t->ring_head, memory_order_acquire);
    if (head != tail && t->shadow == NULL) t->shadow = nvtxcorr_prof_zalloc(sizeof *t->shadow);
    prof_thread_t *sh = t->shadow; /* NULL only when out of memory: the records are dropped */
    size_t n = 0;
    for (; tail != head; tail++) {
        const prof_trace_rec_t *r = &ring[tail % PROF_TRACE_RING];
        if (sh) {
            if (sh->tid != r->tid) sh->tid = r->tid, sh->where_pid = 0; /* remade for it */
            nvtxcorr_prof_trace_launch(sh, &r->pl, r->api, r->grid[0], r->grid[1], r->grid[2]);
        }
        if (++n % 64 == 0) /* room for the launching thread as it goes */
            atomic_store_explicit(&t->ring_tail, tail + 1, memory_order_release);
    }
    atomic_store_explicit(&t->ring_tail, tail, memory_order_release);
    return n;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {0, (long)ms * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void *writer(void *unused)
{
    (void)unused;
    unsigned idle = 1;
    for (;;) {
        unsigned asked = atomic_load(&drain_asked);
        size_t n = 0;
        for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_acquire);
             t; t = t->next)
            n += consume(t);
        if (asked != atomic_load(&drain_done)) {
            atomic_store(&drain_done, asked);
            continue;
        }
        if (n) { /* more may have come meanwhile */
            idle = 1;
            continue;
        }
        sleep_ms(idle);
        idle = idle < 16 ? idle * 2 : 16;
    }
    return NULL;
}

void nvtxcorr_prof_trace_writer_start(void)
{
    if (!nvtxcorr_config.trace_writer || !nvtxcorr_profile_tracing()) return;
    int err = nvtxcorr_prof_helper_thread(writer);
    if (err == 0)
        atomic_store(&nvtxcorr_prof_trace_writer_on, 1);
    else
        nvtxcorr_prof_say("warn", "trace: no writer thread (", nvtxcorr_prof_strerror(err),
                          "); each launch formats its own events", (char *)NULL);
}

static uint64_t count(size_t field)
{
    uint64_t sum = 0;
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_acquire); t;
         t = t->next)
        sum += atomic_load_explicit((_Atomic uint64_t *)((char *)t + field), memory_order_relaxed);
    return sum;
}

/* Async-signal-safe: polls. */
void nvtxcorr_prof_trace_writer_drain(void)
{
    if (!atomic_load(&nvtxcorr_prof_trace_writer_on)) return;
    /* Nothing queued (the writer has kept up): nothing to wait for. */
    uint64_t left =
        count(offsetof(prof_thread_t, ring_head)) - count(offsetof(prof_thread_t, ring_tail));
    if (left) {
        unsigned want = atomic_fetch_add(&drain_asked, 1) + 1;
        for (int i = 0; i < 1000 && (int)(atomic_load(&drain_done) - want) < 0; i++)
            sleep_ms(1);
        left =
            count(offsetof(prof_thread_t, ring_head)) - count(offsetof(prof_thread_t, ring_tail));
    }
    char n[24];
    if (left) {
        n[nvtxcorr_fmt_u64(n, left)] = 0;
        nvtxcorr_prof_say("warn", "trace: ", n,
                          " launches left out: the writer thread did not format them in time",
                          (char *)NULL);
    }
    if (NVTXCORR_LOG_ON(NVTXCORR_LOG_DEBUG)) {
        char m[24];
        n[nvtxcorr_fmt_u64(n, count(offsetof(prof_thread_t, ring_head)))] = 0;
        m[nvtxcorr_fmt_u64(m, count(offsetof(prof_thread_t, inline_full)))] = 0;
        nvtxcorr_prof_say("debug", "trace: ", n, " launches formatted by the writer thread, ", m,
                          " by their own thread (its queue full)", (char *)NULL);
    }
}

void nvtxcorr_prof_trace_writer_after_fork(void)
{
    atomic_store(&nvtxcorr_prof_trace_writer_on, 0);
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_relaxed); t;
         t = t->next) {
        atomic_store_explicit(&t->ring_head, 0, memory_order_relaxed);
        atomic_store_explicit(&t->ring_tail, 0, memory_order_relaxed);
        atomic_store_explicit(&t->inline_full, 0, memory_order_relaxed);
    }
}
