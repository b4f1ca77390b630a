/* Private to src/profile/: the per-kernel and per-label records, the per-thread blocks that
 * hold their counters, the clock, and the async-signal-safe writer that the summary and the
 * trace are formatted with. */
#ifndef NVTXCORR_PROFILE_INTERNAL_H
#define NVTXCORR_PROFILE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "profile.h"

/* ---- histogram: fixed size, log scale ----
 * Values below 8 ns have a bucket each; above, every power of two is split into 4 equal
 * buckets (relative width at most 25%), up to 2^40 ns (18 minutes); the last bucket holds
 * everything above. docs/profile.md gives the same edges: a merge is a sum of buckets. */
enum { PROF_EXACT = 8, PROF_SUB = 4, PROF_TOP_OCTAVE = 40 };
enum { PROF_BUCKETS = PROF_EXACT + PROF_SUB * (PROF_TOP_OCTAVE - 3) };

static inline unsigned prof_bucket(uint64_t ns)
{
    if (ns < PROF_EXACT) return (unsigned)ns;
    unsigned o = 63u - (unsigned)__builtin_clzll(ns); /* >= 3 */
    unsigned b = PROF_EXACT + (o - 3) * PROF_SUB + (unsigned)((ns >> (o - 2)) & 3);
    return b < PROF_BUCKETS ? b : PROF_BUCKETS - 1;
}
/* Lower edge of bucket b, in ns. */
uint64_t nvtxcorr_prof_bucket_low(unsigned b);

/* ---- records: one per (thread, site), written only by the owning thread ----
 * Owner-only writes, each a relaxed load and store (a plain mov on x86-64), so the thread
 * that writes the summary at exit reads them race-free without any lock. A program may run
 * thousands of kernels on dozens of threads, so a record is kept small: 360 bytes, where
 * 64-bit buckets made it 1,296 (170 MB for 32 threads x 4,096 kernels). Its buckets count to
 * 65,535; the launch that would take one past that adds 65,536 to the site's shared `spill`
 * bucket instead (one atomic add per 65,536 launches of that thread, kernel and bucket), and
 * the bucket restarts from 0. */
typedef struct prof_record {
    _Atomic uint64_t launches, errors, capture, total_ns, min_ns, max_ns;
    _Atomic uint16_t hist[PROF_BUCKETS];
} prof_record_t;
enum { PROF_SPILL = 65536 };

/* Distinct (kernel name, label) pairs and graph labels: at most PROF_MAX_SITES sites in all,
 * so memory stays bounded whatever the program does, of which graph labels take at most
 * PROF_MAX_GRAPH_SITES. Default graph labels carry the instantiation's ordinal, so a program
 * that re-instantiates every step makes a new one each time; the graph bound keeps that churn
 * from taking the kernels' room. Beyond the bounds, kernels are counted under "[other]"
 * (PROF_OTHER_SITE) and graphs under "[other graphs]" (PROF_OTHER_GRAPHS_SITE, a graph site), so
 * every total, graph launches included, stays exact; the summary says how many launches each
 * took (docs/profile.md). */
enum {
    PROF_MAX_SITES = 32768,
    PROF_MAX_GRAPH_SITES = 8192,
    PROF_OTHER_SITE = 0,
    PROF_OTHER_GRAPHS_SITE = 1,
    PROF_CHUNK = 32,
    PROF_NO_LABEL = 0xffffffffu
};

struct nvtxcorr_profile_site {
    uint32_t id, label_id; /* label_id: PROF_NO_LABEL for a "-" rule */
    int graph;
    const char *name, *function; /* kernels: raw and base name; graphs: the label */
    const char *trace_prefix;    /* trace mode: the event's constant part, as JSON */
    size_t trace_prefix_len;
    struct nvtxcorr_profile_site *_Atomic next_in_label;
    /* What the records' 16-bit buckets carried over (prof_record_t), counted only while
     * spill_gen is this process's generation (nvtxcorr_prof_generation): a forked child starts
     * from 0 at its first carry, without touching the parent's. */
    _Atomic uint32_t spill_gen;
    _Atomic uint64_t spill[PROF_BUCKETS];
};

typedef struct prof_label {
    uint32_t id;
    const char *text, *category; /* category NULL when none */
    nvtxcorr_profile_site_t *_Atomic first;
} prof_label_t;

/* The published tables: entries [0, count) are complete; an entry is written before the
 * count that covers it is stored (release), and never changes afterwards. */
extern nvtxcorr_profile_site_t *_Atomic nvtxcorr_prof_sites[PROF_MAX_SITES];
extern prof_label_t *_Atomic nvtxcorr_prof_labels[PROF_MAX_SITES];
extern _Atomic uint32_t nvtxcorr_prof_site_count, nvtxcorr_prof_label_count;

/* ---- per-thread blocks ----
 * One per launching thread, linked into a list and never freed: a thread that exits leaves
 * its counts behind (its block is retired, then reused by a later thread, which keeps adding
 * to the same counters). A block holds records of this process only while its `gen` is
 * nvtxcorr_prof_generation, which a forked child increments: the parent's blocks are then
 * left out of the child's summary, and the child drops a block's records when it reuses the
 * block, at a launch, instead of clearing every record at fork (which made each child write,
 * and so copy, all of the parent's records). */
/* The trace buffer is written out in whole pages, and no event crosses a page boundary (the
 * gap is filled with blanks): a write cut short by SIGKILL stops at a page boundary (Linux
 * copies a write into the page cache page by page and checks for a fatal signal between
 * pages), so the file still ends with a complete event. An event is at most one page. */
enum { PROF_TRACE_BUF = 64 * 1024, PROF_TRACE_PAGE = 4096, PROF_TRACE_EVENT_MAX = 4000 };
/* context_stats.c: one (context, site) pair's counts on one thread, owner-written as records. */
typedef struct prof_ctx_cell {
    _Atomic uint64_t key; /* context << 32 | site + 1; 0: empty */
    _Atomic uint64_t launches, ns;
} prof_ctx_cell_t;
typedef struct prof_thread {
    prof_record_t *_Atomic chunks[PROF_MAX_SITES / PROF_CHUNK];
    prof_ctx_cell_t *_Atomic ctx_cells; /* NULL until its first launch with the tool */
    uint32_t ctx_used;                  /* pairs in the table */
    _Atomic uint32_t ctx_shift;         /* its size: 256 << ctx_shift */
    /* the last (context, site) counted: a thread mostly launches one kernel in a context */
    prof_ctx_cell_t *ctx_last;
    struct prof_thread *next;
    int retired;          /* under the list lock */
    _Atomic unsigned gen; /* the process generation its records belong to */
    /* trace mode: events formatted into buf[0, committed) by the owner; written out when the
     * buffer fills, when the thread exits and at process exit, under `busy` */
    char *_Atomic trace_buf; /* set by the owner, read at exit by any thread */
    _Atomic size_t committed;
    _Atomic int busy;
    unsigned tid;
    int where_pid; /* the process `where` was made for (a forked child remakes it) */
    size_t where_len;
    char where[64]; /* ",\"pid\":P,\"tid\":T,\"ts\":" */
    /* kineto form: the head of the last entry point's call event, up to its "ts" (remade
     * with `where`) */
    const char *call_api;
    size_t call_head_len;
    char call_head[192];
    /* the last launch's stream and grid, and their text in the trace's args: a thread
     * mostly launches on one stream with few grids (formatting them was a fifth of the
     * trace's instructions per launch) */
    const void *args_stream;
    unsigned args_grid[3];
    int args_graph;
    size_t args_len; /* 0: none yet */
    char args_text[64];
    /* trace mode's writer thread (trace_writer.c): the launches this thread handed it,
     * ring[tail, head) of PROF_TRACE_RING (head: how many it handed); head moved by the owner, tail
     * by the writer, which formats them with `shadow`'s caches (where, call_head, args_text above),
     * never the owner's */
    struct prof_trace_rec *_Atomic ring;
    _Atomic uint64_t ring_head, ring_tail;
    struct prof_thread *shadow;
    _Atomic uint64_t inline_full; /* by the owner: launches it kept, its ring full */
} prof_thread_t;

extern prof_thread_t *_Atomic nvtxcorr_prof_threads;
extern _Atomic unsigned nvtxcorr_prof_generation; /* 0, then +1 in each forked child */
extern __thread prof_thread_t *nvtxcorr_prof_self __attribute__((tls_model("initial-exec")));
prof_thread_t *nvtxcorr_prof_thread_attach(void);
/* intern.c: string-keyed tables (stats.c's sites and labels, gpu.c's CUPTI kernel names):
 * chained, `nbuckets` fixed, entries never removed; the caller locks. */
typedef struct prof_intern_entry {
    struct prof_intern_entry *next;
    void *value;
    char key[];
} prof_intern_entry_t;
typedef struct prof_intern {
    prof_intern_entry_t **buckets; /* [nbuckets] */
    size_t nbuckets, count;
} prof_intern_t;
const prof_intern_entry_t *nvtxcorr_prof_intern_find(const prof_intern_t *t, const char *key);
/* Adds key (copied) -> value; NULL when out of memory. */
const prof_intern_entry_t *nvtxcorr_prof_intern_add(prof_intern_t *t, const char *key, void *value);
/* pages.c: zeroed, never freed, async-signal-safe (mmap): per-thread state. */
void *nvtxcorr_prof_zalloc(size_t size);
/* Small zeroed blocks for the process's life, and a copy of s there (pages.c): NULL without
 * memory. */
void *nvtxcorr_prof_alloc(size_t size);
char *nvtxcorr_prof_strdup(const char *s);

/* ---- program context (context_stats.c; docs/profile.md, Context) ---- */
prof_ctx_cell_t *nvtxcorr_prof_ctx_cell_slow(prof_thread_t *t, uint32_t ctx, uint32_t site);
static inline prof_ctx_cell_t *nvtxcorr_prof_ctx_cell(prof_thread_t *t, uint32_t ctx, uint32_t site)
{
    prof_ctx_cell_t *c = t->ctx_last;
    uint64_t key = (uint64_t)ctx << 32 | (site + 1u);
    if (NVTXCORR_LIKELY(c != NULL) && atomic_load_explicit(&c->key, memory_order_relaxed) == key)
        return c;
    c = nvtxcorr_prof_ctx_cell_slow(t, ctx, site);
    t->ctx_last = c;
    return c;
}
/* gpu.c, under its lock: one operation of `ns` under (context, kernel site); a replayed one's
 * context (the launch's live path, the graph label, its node's capture path). */
/* Table 0: the whole run; 1 + (window & 1): a window's (gpu.c, windows). */
void nvtxcorr_prof_ctx_gpu(int table, uint32_t ctx, uint32_t site, uint64_t ns);
void nvtxcorr_prof_ctx_gpu_clear(unsigned window);
uint32_t nvtxcorr_prof_ctx_replayed(uint32_t live, const nvtxcorr_profile_site_t *graph,
                                    uint64_t node, int has_node, uint64_t ns);
/* cupti.c: a graph node's capture context (CUPTI's node ids), passed on to its clones. */
void nvtxcorr_prof_ctx_node_set(uint64_t node, uint32_t ctx);
int nvtxcorr_prof_ctx_node_get(uint64_t node, uint32_t *ctx);
void nvtxcorr_prof_ctx_node_clone(uint64_t original, uint64_t clone);
void nvtxcorr_prof_ctx_node_unavailable(const char *why);
void nvtxcorr_prof_ctx_fork(nvtxcorr_fork_t phase);
/* The summary's rows: one per (context, label), the launches' CPU side and the operations'
 * GPU side; `sorted` orders them by path, then label. site_launches/_ns: each site's own
 * counts; what the threads' context tables lack of them (launches made before an NVTX
 * instance took the tool, or without one) are rows of context []. */
typedef struct prof_ctx_row {
    uint32_t ctx, label, site;
    uint64_t launches, cpu_ns, gpu_kernels, gpu_ns;
} prof_ctx_row_t;
size_t nvtxcorr_prof_ctx_rows(const prof_ctx_row_t **rows, const uint32_t **sorted,
                              const uint64_t *site_launches, const uint64_t *site_ns,
                              uint32_t nsites);
const char *nvtxcorr_prof_ctx_row_label(const prof_ctx_row_t *r);
/* Why there is no context, or how many graph operations lack their node's: NULL when none. */
const char *nvtxcorr_prof_ctx_note(void);
/* Windows (window.c, on its helper): every thread's (context, site) counts now, kept; their
 * difference with the previous cut is the window's, which nvtxcorr_prof_ctx_rows reads
 * instead of the threads' tables while `use` is set, and window's GPU table (0: the run's). */
void nvtxcorr_prof_ctx_cut(void);
/* window.c: the index of the last window opened (1-based; 0: none yet). A launch in profile
 * mode with windows is in that window. */
extern _Atomic unsigned nvtxcorr_prof_windows_opened;
void nvtxcorr_prof_ctx_use_cut(int use, unsigned window);
void nvtxcorr_prof_ctx_set_note(const char *why);

/* ---- clock (clock.c) ----
 * rdtsc where the CPU reports an invariant TSC and the kernel itself keeps time with it (so
 * it is synchronised across CPUs), calibrated against CLOCK_MONOTONIC at start-up;
 * otherwise clock_gettime(CLOCK_MONOTONIC), which the vDSO answers without a system call. */
typedef struct prof_clock {
    int tsc;
    uint64_t mult; /* ns = ticks * mult >> 32 */
    uint64_t origin;
} prof_clock_t;
extern prof_clock_t nvtxcorr_prof_clock;
void nvtxcorr_prof_clock_init(void);
uint64_t nvtxcorr_prof_now_slow(void);
static inline uint64_t prof_now(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(nvtxcorr_prof_clock.tsc, 1)) return __builtin_ia32_rdtsc();
#endif
    return nvtxcorr_prof_now_slow();
}
static inline uint64_t prof_ticks_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * nvtxcorr_prof_clock.mult) >> 32);
}
uint64_t nvtxcorr_prof_realtime_ns(void);

/* ---- nvtxcorr's own work inside a launch call ----
 * CUPTI calls back into nvtxcorr on the launching thread, from inside the real call: a buffer
 * request, a completed buffer (whose records nvtxcorr aggregates, naming and labelling kernels
 * it has not seen). That time is nvtxcorr's, not the launch's: each callback adds what it
 * took to the thread's count, which the launch subtracts from its CPU time; the summary
 * reports the sum on its own line (totals.cpu_own_ns). PROF_OWN_IDLE: not inside a profiled
 * launch (a callback on CUPTI's own thread, or during the exit flush), nothing counted. */
#define PROF_OWN_IDLE UINT64_MAX
extern __thread uint64_t nvtxcorr_prof_own_ticks __attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t nvtxcorr_prof_own_ns;
static inline uint64_t prof_own_enter(void)
{
    return nvtxcorr_prof_own_ticks != PROF_OWN_IDLE ? prof_now() | 1 : 0;
}
static inline void prof_own_leave(uint64_t t0)
{
    if (t0 && nvtxcorr_prof_own_ticks != PROF_OWN_IDLE) nvtxcorr_prof_own_ticks += prof_now() - t0;
}

/* ---- the writer: a static buffer and write(2), async-signal-safe (no malloc, no stdio,
 * no locale) ---- */
typedef struct prof_out {
    int fd;
    int failed, err; /* err: the errno of the failure */
    int owned;       /* fd is a file nvtxcorr opened: checked to be it before each write */
    uint64_t dev, ino;
    size_t len;
    char buf[16384];
} prof_out_t;
/* Starts writing to fd; owned: a file nvtxcorr opened, which the program may close and
 * replace (a daemon closing every descriptor): each write first checks that the descriptor
 * still names that file (fstat's device and inode), and fails with EBADF otherwise. */
void nvtxcorr_out_open(prof_out_t *o, int fd, int owned);
/* Whether fd still names the file with this device and inode. */
int nvtxcorr_prof_fd_is(int fd, uint64_t dev, uint64_t ino);
/* Around the calls on a descriptor of ours that the program may close, and reopen for its own
 * file, on another thread meanwhile (the trace's, written by its writer thread): that check
 * and the write after it. ThreadSanitizer reports the program's close or open and our call as
 * a race on the descriptor, which is the very case the check answers
 * (e2e.trace-never-writes-into-the-programs-files under e2e.tsan): its runtime (libtsan, not
 * in its public header) is told to ignore this thread's accesses meanwhile. */
#if defined(__SANITIZE_THREAD__)
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define PROF_FD_RACE_BEGIN() __tsan_ignore_thread_begin()
#define PROF_FD_RACE_END() __tsan_ignore_thread_end()
#else
#define PROF_FD_RACE_BEGIN() ((void)0)
#define PROF_FD_RACE_END() ((void)0)
#endif
void nvtxcorr_out_flush(prof_out_t *o);
void nvtxcorr_out_mem(prof_out_t *o, const char *s, size_t n);
void nvtxcorr_out_str(prof_out_t *o, const char *s);
void nvtxcorr_out_u64(prof_out_t *o, uint64_t v);
void nvtxcorr_out_json(prof_out_t *o, const char *s); /* a quoted JSON string, or null */
void nvtxcorr_out_csv(prof_out_t *o, const char *s);  /* a CSV field, quoted when needed */
/* Into a caller's buffer: decimal, and JSON-escaped text; each returns the length written
 * (never more than `size`, no terminator). */
size_t nvtxcorr_fmt_u64(char *buf, uint64_t v);
size_t nvtxcorr_fmt_json(char *buf, size_t size, const char *s);
/* parts[0..n) appended to buf at len, within size, NUL-terminated; the new length.
 * Async-signal-safe (the notes are made where snprintf is not). */
size_t nvtxcorr_prof_join(char *buf, size_t size, size_t len, const char *const *parts, size_t n);
/* s for a line of the text table: control characters (C0, DEL, C1) and bytes that are not
 * well-formed UTF-8 become '?', so a name cannot break a line or the columns (NUL-terminated, cut
 * to fit size). */
size_t nvtxcorr_text_safe(char *buf, size_t size, const char *s);
/* A whole diagnostic line, "nvtxcorr: <level>: a b c\n", printed whatever NVTXCORR_LOG says
 * (profile mode's own messages): the parts are concatenated, up to a NULL. */
void nvtxcorr_prof_say(const char *level, ...) __attribute__((sentinel));
const char *nvtxcorr_prof_strerror(int err);
/* Sorts v[0, n) so that before(v[i], v[i + 1]) or neither is before the other; no allocation,
 * so the signal path may use it. */
void nvtxcorr_prof_sort(uint32_t *v, size_t n, int (*before)(uint32_t a, uint32_t b));

/* ---- process facts, captured at start and after fork ---- */
typedef struct prof_process {
    int pid;
    uint64_t start_ns; /* CLOCK_REALTIME */
    char profile_path[4096], trace_path[4096];
} prof_process_t;
extern prof_process_t nvtxcorr_prof_process;
/* path.c: expands %p %h %q{VAR} %% into out; returns -1 when it does not fit. */
int nvtxcorr_prof_expand(const char *pattern, char *out, size_t size);
void nvtxcorr_prof_process_reset(void);

/* ---- summary.c (its writers: summary.h), trace.c, exit.c ---- */
void nvtxcorr_prof_summary_write(void);
int nvtxcorr_prof_trace_init(void);
void nvtxcorr_prof_trace_prefix(nvtxcorr_profile_site_t *s, const char *label,
                                const char *category);
void nvtxcorr_prof_trace_flush_own(prof_thread_t *t);
/* A launch's events, formatted into the calling thread's buffer with `fmt`'s caches (the
 * launching thread's own block, or the shadow the writer keeps for it). */
void nvtxcorr_prof_trace_launch(prof_thread_t *fmt, const nvtxcorr_profile_launch_t *pl,
                                const char *api, unsigned gx, unsigned gy, unsigned gz);
/* profile.c: fn on a detached thread that blocks every signal (0, or pthread_create's error). */
int nvtxcorr_prof_helper_thread(void *(*fn)(void *));
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
extern _Atomic int nvtxcorr_prof_tracing;
/* Trace mode: an instant event on the calling thread (graph instantiations and updates), the
 * core's graph event (registered by nvtxcorr_profile_init). */
int nvtxcorr_profile_tracing(void);
void nvtxcorr_profile_graph_event(const char *text);
void nvtxcorr_prof_exit_init(void);
/* sigaction.c: the real sigaction (never ours), and the signals whose SIG_DFL `handler`
 * stands in for (the program is told SIG_DFL wherever it is installed). */
struct sigaction;
int nvtxcorr_prof_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
void nvtxcorr_prof_stand_in(unsigned signals, void (*handler)(int));
/* A window signal's handler (window.c), reported as SIG_DFL to the program. */
void nvtxcorr_prof_stand_in_toggle(int sig, void (*handler)(int));
/* CUPTI has started (libcupti just loaded): its flush runs from an atexit handler. */
void nvtxcorr_prof_exit_gpu_started(void);
void nvtxcorr_prof_stats_after_fork(void);
void nvtxcorr_prof_stats_fork(nvtxcorr_fork_t phase);

/* ---- GPU time (cupti.c: CUPTI, loaded at run time; gpu.c: its records, aggregated;
 * summary.c: read for the summary's GPU fields and sections) ---- */
typedef struct prof_gpu_stat {
    uint64_t n, ns, min, max; /* operations (kernel executions), their total, extremes */
    /* Set for output only (nvtxcorr_prof_gpu_label_stat, _site_stat): the durations'
     * histogram (NULL when one of its sites could not get one) and its percentiles. */
    const uint64_t *hist;
    uint64_t p50, p99;
} prof_gpu_stat_t;
typedef struct prof_gpu_replays { /* one graph launch site: each replay's summed GPU time */
    prof_gpu_stat_t time;
    uint64_t ops;
    uint64_t hist[PROF_BUCKETS];
} prof_gpu_replays_t;
typedef struct prof_gpu {
    prof_gpu_stat_t *by_launch, *by_kernel; /* [PROF_MAX_SITES], by site id */
    prof_gpu_replays_t **replays;           /* [PROF_MAX_SITES], graph launch sites */
    uint64_t **launch_hist, **kernel_hist;  /* [PROF_MAX_SITES] of [PROF_BUCKETS] or NULL */
    uint64_t records, ops, ns, dropped, uncorrelated, uncorrelated_ns, incomplete;
    uint64_t not_hooked, not_hooked_ns; /* work of launches no hook saw ([not hooked]) */
} prof_gpu_t;
extern prof_gpu_t nvtxcorr_prof_gpu;
/* PROF_GPU_AT_NEXT_LAUNCH: CUPTI still to start (at the first launch), or off in a forked
 * child that has not yet said so (its first launch warns). Set to PROF_GPU_COLLECTING by the
 * thread that started CUPTI, after everything the push needs is in place. */
typedef enum { PROF_GPU_OFF, PROF_GPU_COLLECTING, PROF_GPU_AT_NEXT_LAUNCH } prof_gpu_state_t;
extern _Atomic prof_gpu_state_t nvtxcorr_prof_gpu_on;
/* Why there is no (or only partial) GPU time, NULL when nothing is to be said; cupti.c owns
 * it. set_partial: the first reason given stands (async-signal-safe). */
const char *nvtxcorr_prof_gpu_note(void);
void nvtxcorr_prof_gpu_set_partial(const char *why);
void nvtxcorr_prof_gpu_start(void);
/* cupti_load.c: dlopen of libcupti where it is looked for (the paths tried, appended to
 * `tried`). */
void *nvtxcorr_prof_cupti_open(char *tried, size_t size);
void nvtxcorr_prof_gpu_after_fork(void);
void nvtxcorr_prof_gpu_first_launch(void);
/* Around a launch's real call: its id made (site PROF_NO_LABEL: a launch whose work is not
 * counted, a captured one) and handed to CUPTI's launch callbacks, or pushed as an external
 * correlation id (NVTXCORR_GPU_CORRELATION=external); then taken back. */
void nvtxcorr_prof_gpu_push(nvtxcorr_profile_launch_t *pl, uint32_t site);
void nvtxcorr_prof_gpu_pop(nvtxcorr_profile_launch_t *pl);
/* How this process ties kernels to launches: "callbacks" or "external" (the summary's
 * gpu_correlation), NULL before CUPTI started. */
const char *nvtxcorr_prof_gpu_correlation_mode(void);
/* The site of "[not hooked]": the launch label of work whose launch only CUPTI saw (cupti.c
 * makes it before the callbacks start; gpu.c counts it in not_hooked). */
extern uint32_t nvtxcorr_prof_not_hooked_site;
/* Before the summary's GPU note is written: adds the launches whose push failed, if any. */
void nvtxcorr_prof_gpu_note_failures(void);
void nvtxcorr_prof_gpu_flush(int from_signal);
/* A CUPTI call did not return within its bound (the start or the exit flush): the records
 * CUPTI still holds are given up, and the summary is written without waiting for them. */
int nvtxcorr_prof_gpu_abandoned(void);
uint64_t nvtxcorr_prof_gpu_trace_ns(uint64_t cupti_ns);
int nvtxcorr_prof_gpu_init(void);
/* Fork steps (registered by stats.c, in the order of docs/design.md, Fork). */
void nvtxcorr_prof_gpu_fork(nvtxcorr_fork_t phase);   /* gpu.c: the record lock */
void nvtxcorr_prof_cupti_fork(nvtxcorr_fork_t phase); /* cupti.c: the spare buffers' lock */
/* gpu.c's input, from cupti.c's records: a buffer's correlations and operations, between
 * begin_buffer and end_buffer. */
typedef enum { PROF_GPU_KERNEL, PROF_GPU_MEMCPY, PROF_GPU_MEMSET } prof_gpu_op_kind_t;
/* What CUPTI's record says of an operation besides its time, kept for the trace's GPU events
 * (Kineto writes them: "grid", "block", "graph id", "graph node id"). In a graph replay
 * graph_node_id is the *executable* graph's node (CUPTI's graphNodeId). */
typedef struct prof_gpu_shape {
    uint32_t grid[3], block[3]; /* a kernel's; 0 for a memcpy or memset */
    uint32_t graph_id;          /* CUPTI's graphId: 0 outside a graph replay */
    uint64_t graph_node_id;
} prof_gpu_shape_t;
typedef struct prof_gpu_op {
    prof_gpu_op_kind_t kind;
    const char *name; /* a kernel's, as CUPTI gives it (NULL: unknown) */
    uint32_t corr, device, stream;
    uint64_t start, end;
    prof_gpu_shape_t shape; /* shape.graph_id != 0: a node of a graph replay */
} prof_gpu_op_t;
void nvtxcorr_prof_gpu_begin_buffer(size_t dropped);
/* CUPTI's correlation id corr is the launch whose id is ext. From CUPTI's launch callbacks,
 * on the launching thread, or from an external correlation record, in a buffer. */
void nvtxcorr_prof_gpu_correlation(uint32_t corr, uint64_t ext);
void nvtxcorr_prof_gpu_operation(const prof_gpu_op_t *op);
void nvtxcorr_prof_gpu_end_buffer(void);
int nvtxcorr_prof_gpu_finish(int from_signal); /* returns whether it holds the lock */
void nvtxcorr_prof_gpu_finished(int locked);
int nvtxcorr_prof_gpu_held_here(void); /* this thread holds the lock of gpu.c */
/* Windows (gpu.c): a window's GPU work settled and read (nvtxcorr_prof_gpu_out), then its
 * set emptied; cupti.c: CUPTI's completed records delivered, for a window (0: done). */
extern const prof_gpu_t *nvtxcorr_prof_gpu_out;
void nvtxcorr_prof_gpu_window_settle(unsigned index, int at_exit);
void nvtxcorr_prof_gpu_window_done(unsigned index);
const char *nvtxcorr_prof_gpu_window_note(void);
int nvtxcorr_prof_gpu_flush_window(void);
int nvtxcorr_prof_gpu_closing(void);
/* devices.c: the GPUs' names, asked once (at the first site); the summary's "gpus". */
void nvtxcorr_prof_devices_ask(void);
const char *nvtxcorr_prof_devices_json(void);
/* stats.c: the site of a kernel known by name, and of a graph memcpy/memset node. */
nvtxcorr_profile_site_t *nvtxcorr_prof_kernel_site(const char *mangled);
nvtxcorr_profile_site_t *nvtxcorr_prof_op_site(const char *what);
/* stats.c, for the front door (profile.c; the record update is record.h): the site of a
 * kernel (name, label) or of a graph label (label NULL: a "-" rule); the thread-exit key (0,
 * or -1), and sites 0 and 1 ([other], [other graphs]). */
nvtxcorr_profile_site_t *nvtxcorr_prof_site_intern(int graph, const char *name,
                                                   const char *function,
                                                   const nvtxcorr_label_t *label);
int nvtxcorr_prof_stats_prepare(void);
void nvtxcorr_prof_stats_init(void);
/* trace.c: one GPU operation on its device/stream track, with the arrow from its launch and
 * its program context (args "context", when not []). */
typedef struct prof_trace_op {
    const nvtxcorr_profile_site_t *site;   /* its own site (a kernel's, "[memcpy]", "[memset]") */
    const nvtxcorr_profile_site_t *launch; /* its launch's site, or NULL when unknown */
    uint32_t device, stream;
    uint64_t start_ns, dur_ns; /* on the trace's clock */
    uint64_t ext;              /* the launch's external correlation id, or 0 */
    const prof_gpu_shape_t *shape;
    uint32_t ctx; /* its program context (context_stats.c); 0: [] */
} prof_trace_op_t;
void nvtxcorr_prof_trace_gpu(const prof_trace_op_t *op);
/* histogram.c: a percentile of a histogram of n values within [min, max]. */
uint64_t nvtxcorr_prof_percentile(const uint64_t *hist, uint64_t n, uint64_t min, uint64_t max,
                                  uint64_t per_mille);
/* summary.c: GPU time as the summary reports it. */
int nvtxcorr_prof_gpu_reported(void); /* GPU time is in this summary */
void nvtxcorr_prof_gpu_label_stat(const prof_label_t *l, uint32_t nsites, int by_kernel,
                                  prof_gpu_stat_t *out);
/* A site's own GPU operations (the by-kernel view), percentiles included. */
void nvtxcorr_prof_gpu_site_stat(uint32_t id, prof_gpu_stat_t *out);
/* out.c: the text tables' cells. */
void nvtxcorr_prof_fmt_time(char *buf, uint64_t ns);
void nvtxcorr_prof_pad(prof_out_t *o, const char *s, size_t width, int right);
/* The text tables' layout (docs/profile.md, "CSV and text"; nvtxcorr_report.py the same): a
 * line is at most PROF_TEXT_WIDTH columns, the numbers take `numbers` of them at the right and
 * the one or two text columns share the rest. Feed every value shown (headings included) to
 * nvtxcorr_prof_cols_need, then nvtxcorr_prof_cols_fit gives the widths. */
#define PROF_TEXT_WIDTH 100
#define PROF_SECOND_MIN 22
typedef struct prof_cols {
    size_t need1, need2, first, second;
} prof_cols_t;
void nvtxcorr_prof_cols_need(prof_cols_t *c, const char *first, const char *second);
void nvtxcorr_prof_cols_fit(prof_cols_t *c, size_t numbers, int two);

/* ---- windows (window.c; NVTXCORR_WINDOW): one summary per window ----
 * A window's counts are the difference of two cuts of every site's records: the cut when it
 * closed minus the one before (summary.c reads through prof_snap_t while a window's summary is
 * written). Between windows launches are not recorded at all (NVTXCORR_MODE_PROFILE_IDLE). */
typedef struct prof_snap {
    uint64_t launches, errors, capture, total, min, max;
    uint64_t hist[PROF_BUCKETS];
} prof_snap_t;
typedef struct prof_window {
    unsigned index; /* 1-based */
    const char *reason;
    uint64_t start_ns, end_ns;
} prof_window_t;
/* While a window's summary is written: the window, and the cuts it is the difference of
 * (base NULL: the first window, from zero). NULL otherwise. */
extern const prof_window_t *nvtxcorr_prof_window_now;
extern const prof_snap_t *nvtxcorr_prof_snap_cur, *nvtxcorr_prof_snap_base;
extern uint64_t nvtxcorr_prof_window_own_base;
/* summary.c: site s's records now, summed over threads (spills included). */
void nvtxcorr_prof_site_read(const nvtxcorr_profile_site_t *s, prof_snap_t *out);
/* summary.c: the summary to `path` (nvtxcorr_prof_summary_write is this with the process's). */
void nvtxcorr_prof_summary_write_to(const char *path);
/* window.c */
int nvtxcorr_prof_windows(void); /* NVTXCORR_WINDOW is on */
/* profile.c: the label table's hash ("label_table"), 0 with default labels. */
extern uint64_t nvtxcorr_prof_label_hash;
int nvtxcorr_prof_window_mode(int tool);
void nvtxcorr_prof_window_start(void);
void nvtxcorr_prof_window_exit(int from_signal);
void nvtxcorr_prof_window_after_fork(void);

#endif
