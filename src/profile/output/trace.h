/* Between trace.c (the file, its pages and the per-thread buffers) and the two forms of its
 * events, trace_kineto.c and trace_chrome.c: each form is a table of formatters (head, a
 * site's constant part, a launch, a GPU operation, tail), none knowing the others or the
 * file. A form formats into memory trace.c gives it and returns the bytes written; trace.c
 * reserves, commits, writes and closes. The small formatters both forms use on the hot path
 * are here, inline (a call across files per field cost instructions per launch).
 *
 * An event that is neither a launch nor a GPU operation (an iteration's span, a marker) is
 * written by its own function with nvtxcorr_prof_trace_reserve and _commit: on the calling
 * thread's track, after the events it already wrote. */
#ifndef NVTXCORR_PROFILE_TRACE_H
#define NVTXCORR_PROFILE_TRACE_H

#include <string.h>
#include "context/context.h"
#include "core/attributes.h"
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "profile/base/process.h"
#include "profile/counting/launch.h"
#include "profile/counting/record.h"
#include "profile/counting/stats.h"
#include "profile/gpu/gpu.h"
/* Appends a string literal at p + n. */
#define PUT(lit) (memcpy(p + n, lit, sizeof(lit) - 1), n += sizeof(lit) - 1)

typedef struct prof_trace_form {
    /* The file's start, up to where the first event goes (at most 512 bytes). */
    size_t (*head)(char *p);
    /* A site's constant part (at most 3,200 bytes), copied at the start of each launch. */
    size_t (*prefix)(char *p, const nvtxcorr_profile_site_t *s, const char *label,
                     const char *category);
    /* A launch's events after its site's prefix (at most 800 bytes). */
    size_t (*launch)(char *p, prof_thread_t *t, const nvtxcorr_profile_launch_t *pl,
                     const char *api, unsigned gx, unsigned gy, unsigned gz);
    /* A GPU operation's events (at most PROF_TRACE_EVENT_MAX bytes); its track is named
     * already. */
    size_t (*gpu)(char *p, const prof_trace_op_t *op);
    /* What follows the events at a normal close (at most `size` bytes). */
    size_t (*tail)(char *p, size_t size);
} prof_trace_form_t;

extern const prof_trace_form_t nvtxcorr_prof_trace_kineto, nvtxcorr_prof_trace_chrome;

/* Room for `need` more bytes (at most PROF_TRACE_EVENT_MAX) in the calling thread's buffer,
 * within one page, or NULL; then commit what was written there. */
char *nvtxcorr_prof_trace_reserve(prof_thread_t **out, size_t need);
void nvtxcorr_prof_trace_commit(prof_thread_t *t, size_t len);

/* ---- the writer thread (trace_writer.c) ---- */
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

static inline size_t prof_fmt_hex(char *p, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    size_t digits = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
    for (size_t i = digits; i-- > 0; v >>= 4)
        p[i] = hex[v & 15];
    return digits;
}

/* ns as microseconds with three decimals. */
static inline size_t prof_fmt_us(char *p, uint64_t ns)
{
    size_t n = nvtxcorr_fmt_u64(p, ns / 1000);
    unsigned f = (unsigned)(ns % 1000);
    p[n] = '.', p[n + 1] = (char)('0' + f / 100), p[n + 2] = (char)('0' + f / 10 % 10);
    p[n + 3] = (char)('0' + f % 10);
    return n + 4;
}

/* ",\"pid\":P,\"tid\":T,\"ts\":U.UUU" for the calling thread; the constant part is kept per
 * thread (and remade in a forked child). */
static inline size_t prof_fmt_where(char *out, prof_thread_t *t, uint64_t ticks)
{
    if (t->where_pid != nvtxcorr_prof_process.pid) {
        char *p = t->where;
        size_t n = 0;
        PUT(",\"pid\":");
        n += nvtxcorr_fmt_u64(p + n, (uint64_t)nvtxcorr_prof_process.pid);
        PUT(",\"tid\":");
        n += nvtxcorr_fmt_u64(p + n, t->tid);
        PUT(",\"ts\":");
        t->where_len = n;
        t->where_pid = nvtxcorr_prof_process.pid;
        t->call_api = NULL;
    }
    memcpy(out, t->where, t->where_len);
    return t->where_len +
           prof_fmt_us(out + t->where_len, prof_ticks_ns(ticks - nvtxcorr_prof_clock.origin));
}

/* The same for a GPU track: one per device and stream, up to its "ts": (trace.c names it). */
static inline size_t prof_fmt_gpu_where(char *p, uint32_t device, uint32_t stream)
{
    size_t n = 0;
    PUT(",\"pid\":");
    n += nvtxcorr_fmt_u64(p + n, (uint64_t)nvtxcorr_prof_process.pid);
    PUT(",\"tid\":");
    n += nvtxcorr_fmt_u64(p + n, 1000000000ull + device * 1000000ull + stream % 1000000);
    PUT(",\"ts\":");
    return n;
}

/* The launch's own part of its call's args: the stream handle (`stream`: chrome, after its
 * "stream":"0x), the grid, capture. Kept per thread: a thread mostly launches on one stream
 * with few grids (formatting them was a fifth of the trace's instructions per launch). */
static inline size_t prof_fmt_launch_args(char *p, prof_thread_t *t,
                                          const nvtxcorr_profile_launch_t *pl, int stream,
                                          unsigned gx, unsigned gy, unsigned gz)
{
    int graph = pl->site->graph;
    if (t->args_len == 0 || t->args_stream != pl->stream || t->args_graph != graph ||
        (!graph && (t->args_grid[0] != gx || t->args_grid[1] != gy || t->args_grid[2] != gz))) {
        char *q = t->args_text;
        size_t k = 0;
        if (stream) {
            k = prof_fmt_hex(q, (uintptr_t)pl->stream);
            q[k++] = '"';
        }
        if (!graph) {
            if (k) q[k++] = ',';
            memcpy(q + k, "\"grid\":[", 8), k += 8;
            k += nvtxcorr_fmt_u64(q + k, gx);
            q[k++] = ',';
            k += nvtxcorr_fmt_u64(q + k, gy);
            q[k++] = ',';
            k += nvtxcorr_fmt_u64(q + k, gz);
            q[k++] = ']';
        }
        t->args_stream = pl->stream, t->args_graph = graph;
        t->args_grid[0] = gx, t->args_grid[1] = gy, t->args_grid[2] = gz;
        t->args_len = k;
    }
    size_t n = t->args_len;
    memcpy(p, t->args_text, n);
    if (pl->capturing) {
        if (n) p[n++] = ',';
        PUT("\"capture\":true");
    }
    return n;
}

/* The label a launch's events are named by: its label, or the kernel's name for a "-" rule. */
/* `,"context":["outer",...,"inner"]`: a GPU operation's program context (docs/profile.md,
 * Program context), whole elements only, within PROF_CONTEXT_ARG_MAX bytes so that the event
 * still fits a page; nothing for []. */
enum { PROF_CONTEXT_ARG_MAX = 320 };
static inline size_t prof_fmt_context(char *p, uint32_t ctx)
{
    if (ctx == NVTXCORR_CONTEXT_ROOT) return 0;
    uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
    unsigned depth = nvtxcorr_context_path(ctx, path, NVTXCORR_CONTEXT_PATH_MAX);
    size_t n = 0;
    memcpy(p, ",\"context\":[", 12), n = 12;
    for (unsigned i = 0; i < depth; i++) {
        char e[NVTXCORR_CONTEXT_ELEMENT_MAX * 6 + 8];
        size_t len = nvtxcorr_fmt_json(e, sizeof e, nvtxcorr_context_name(path[i]));
        if (n + len + 4 > PROF_CONTEXT_ARG_MAX) break;
        if (i) p[n++] = ',';
        p[n++] = '"';
        memcpy(p + n, e, len), n += len;
        p[n++] = '"';
    }
    p[n++] = ']';
    return n;
}

static inline const char *prof_label_of(const nvtxcorr_profile_site_t *s)
{
    return s->label_id != PROF_NO_LABEL
               ? atomic_load_explicit(&nvtxcorr_prof_labels[s->label_id], memory_order_acquire)
                     ->text
               : s->function;
}

/* The trace, to the rest of profile mode. */
int nvtxcorr_prof_trace_init(void);
int nvtxcorr_prof_trace_init(void);
/* A launch's events, formatted into the calling thread's buffer with `fmt`'s caches (the
 * launching thread's own block, or the shadow the writer keeps for it). */
void nvtxcorr_prof_trace_launch(prof_thread_t *fmt, const nvtxcorr_profile_launch_t *pl,
                                const char *api, unsigned gx, unsigned gy, unsigned gz);
/* trace_writer.c: the writer thread. _start once profile mode has started (no thread when
 * NVTXCORR_TRACE_WRITER=0 or pthread_create fails: launches format their own events;
 * trace.h's prof_trace_hand_off queues a launch for it); _drain has the writer consume every
 * queue, waiting a bounded time, before the trace closes; _after_fork: a child has no writer. */
void nvtxcorr_prof_trace_writer_start(void);
void nvtxcorr_prof_trace_writer_drain(void);
void nvtxcorr_prof_trace_writer_after_fork(void);
void nvtxcorr_prof_trace_finish(int from_signal);
/* A window (NVTXCORR_WINDOW) as a ProfilerStep#<index> span on the calling thread's track,
 * from start to end (prof_now ticks). */
void nvtxcorr_prof_trace_window(unsigned index, const char *reason, uint64_t start_ticks,
                                uint64_t end_ticks);
void nvtxcorr_prof_trace_after_fork(void);
/* trace_meta.c: the Kineto form's top-level fields. The head, up to "traceEvents": [ (at most
 * 512 bytes); deviceProperties, asked of the driver at the first GPU operation; the tail
 * written after the events' "]" at a normal close (deviceProperties, "}"). */
size_t nvtxcorr_prof_kineto_head(char *p);
void nvtxcorr_prof_kineto_devices(void);
size_t nvtxcorr_prof_kineto_tail(char *p, size_t size);
/* Trace mode: an instant event on the calling thread (graph instantiations and updates), the
 * core's graph event (registered by nvtxcorr_profile_init). */
int nvtxcorr_profile_tracing(void);
void nvtxcorr_profile_graph_event(const char *text);

#endif
