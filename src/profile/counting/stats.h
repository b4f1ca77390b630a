/* Counting (stats.c): sites, labels, each thread's records, and nvtxcorr's own time. */
#ifndef NVTXCORR_PROF_STATS_H
#define NVTXCORR_PROF_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "core/emit.h"
#include "core/fork.h"
#include "launch.h"
#include "profile/base/clock.h"
#include "profile/base/histogram.h"
/* Records: one per (thread, site), written only by the owning thread. Owner-only writes, each a
 * relaxed load and store (a plain mov on x86-64), so the thread that writes the summary at exit
 * reads them race-free without any lock. A program may run thousands of kernels on dozens of
 * threads, so a record is kept small: 360 bytes, where 64-bit buckets made it 1,296 (170 MB for 32
 * threads x 4,096 kernels). Its buckets count to 65,535; the launch that would take one past that
 * adds 65,536 to the site's shared `spill` bucket instead (one atomic add per 65,536 launches of
 * that thread, kernel and bucket), and the bucket restarts from 0. */
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

/* Per-thread blocks: one per launching thread, linked into a list and never freed: a thread that
 * exits leaves its counts behind (its block is retired, then reused by a later thread, which keeps
 * adding to the same counters). A block holds records of this process only while its `gen` is
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
/* nvtxcorr's own work inside a launch call. CUPTI calls back into nvtxcorr on the launching thread,
 * from inside the real call: a buffer request, a completed buffer (whose records nvtxcorr
 * aggregates, naming and labelling kernels it has not seen). That time is nvtxcorr's, not the
 * launch's: each callback adds what it took to the thread's count, which the launch subtracts from
 * its CPU time; the summary reports the sum on its own line (totals.cpu_own_ns). PROF_OWN_IDLE: not
 * inside a profiled launch (a callback on CUPTI's own thread, or during the exit flush), nothing
 * counted. */
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
void nvtxcorr_prof_stats_after_fork(void);
void nvtxcorr_prof_stats_fork(nvtxcorr_fork_t phase);
/* Trace mode: set while the trace records (output/trace.c sets it). */
extern _Atomic int nvtxcorr_prof_tracing;
/* What the trace does when a site is made (its events' constant part) and when a thread's
 * block is retired (its buffer written out): registered by the trace as it starts, so that
 * counting never calls up into output (trace.c). */
typedef void (*prof_site_made_fn)(nvtxcorr_profile_site_t *s, const char *label,
                                  const char *category);
typedef void (*prof_thread_done_fn)(prof_thread_t *t);
void nvtxcorr_prof_stats_on_trace(prof_site_made_fn site_made, prof_thread_done_fn thread_done);

#endif
