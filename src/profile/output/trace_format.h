/* What the trace's forms (trace_kineto.c, trace_chrome.c) and trace.c format alike: the
 * events' common fields, written into a caller's buffer. */
#ifndef NVTXCORR_PROF_TRACE_FORMAT_H
#define NVTXCORR_PROF_TRACE_FORMAT_H
#include "context/context.h"
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/base/process.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include <string.h>

/* Appends a string literal at p + n. */
#define PUT(lit) (memcpy(p + n, lit, sizeof(lit) - 1), n += sizeof(lit) - 1)

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

#endif
