/* GPU time: CUPTI's activity records, aggregated as each buffer completes (cupti_buffers.c), so
 * memory stays bounded whatever the run's length; no record is kept past its buffer except
 * kernels whose correlation has not arrived yet (a bounded list).
 *
 * Two views, both indexed by the sites of stats.c:
 *   by launch  the site of the launch that caused the work: the external correlation id that
 *              cupti_launch.c pushed around the launch carries its site id. A graph launch's site
 *              gets every kernel (and memcpy/memset node) of the replay;
 *   by kernel  the site of the kernel itself: its name as CUPTI reports it, labelled by the
 *              label table like a launched kernel; graph nodes included. Graph memcpy and
 *              memset nodes count under the sites "[memcpy]" and "[memset]".
 * Per graph site, also the GPU time of each replay (the sum over its operations), as a
 * histogram. Everything here runs under one lock, on whichever thread CUPTI gives a buffer
 * back on; the summary reads under the same lock, or from a signal handler after cupti_thread.c's
 * helper thread settled everything (trying the lock, reading without it if it is held). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/attributes.h"
#include "core/fork.h"
#include "core/slowstack.h"
#include "gpu.h"
#include "labels/names.h"
#include "profile/base/histogram.h"
#include "profile/base/intern.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "profile/counting/context_stats.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/counting/windows.h"
#include "session.h"
/* The trace's taker of GPU operations (gpu.h), set once as the trace starts. */
static void (*_Atomic trace_op_fn)(const prof_trace_op_t *op);

void nvtxcorr_prof_gpu_on_trace(void (*fn)(const prof_trace_op_t *op))
{
    atomic_store_explicit(&trace_op_fn, fn, memory_order_release);
}

static void trace_op(const prof_trace_op_t *op)
{
    void (*fn)(const prof_trace_op_t *) = atomic_load_explicit(&trace_op_fn, memory_order_acquire);
    if (fn) fn(op);
}
prof_gpu_t nvtxcorr_prof_gpu;
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread holds gpu_lock (it is processing a buffer): an exit on this thread must not
 * flush, whose records would wait for the lock (exit.c). */
static __thread volatile int gpu_held __attribute__((tls_model("initial-exec")));

int nvtxcorr_prof_gpu_held_here(void)
{
    return gpu_held;
}

/* CUPTI correlation id -> our launch id, direct-mapped: ids are issued in order, so an entry
 * is only overwritten 128K API calls later, long after its kernels are normally delivered.
 * Written by launching threads (CUPTI's launch callbacks) while the thread that processes a
 * buffer reads it: an entry's id is cleared, its launch stored, then its id again, and a
 * reader takes the launch only when it reads the same id before and after. */
/* PENDING_MAX: operations waiting for their correlation record. CUPTI may give back a buffer
 * of kernel records before the buffer that holds their launches' API and correlation records
 * (which fills more slowly): a graph of a thousand kernels replayed a few dozen times can wait
 * at once. 64K entries (4.5 MiB, mapped: pages are touched only as entries are used). */
enum { CORR_SLOTS = 1 << 17, PENDING_MAX = 1 << 16, OPEN_REPLAYS = 64, NAME_BUCKETS = 4096 };
typedef struct corr_slot {
    _Atomic uint32_t corr;
    _Atomic uint32_t has_op; /* an operation of it came in (windows: its window waits for that) */
    _Atomic uint64_t ext;
} corr_slot_t;
static corr_slot_t *corr_map;

typedef struct op {
    uint32_t corr, kernel_site, device, stream;
    uint64_t start, end;
    prof_gpu_shape_t shape; /* for the trace; graph_node_id for context */
} op_t;
static op_t *pending;
static size_t npending;

typedef struct open_replay {
    uint64_t ext, ns, ops, last_use;
    uint32_t site;
} open_replay_t;
static open_replay_t open_replays[OPEN_REPLAYS];
static uint64_t use_clock;

/* CUPTI's kernel names -> their site (NULL: [other], site 0), at most NAMES_KEPT. */
static prof_intern_entry_t *name_buckets[NAME_BUCKETS];
static prof_intern_t names = {name_buckets, NAME_BUCKETS, 0};
enum { NAMES_KEPT = 4 * PROF_MAX_SITES };
static uint32_t memcpy_site = PROF_NO_LABEL, memset_site = PROF_NO_LABEL;

/* Windows (NVTXCORR_WINDOW): each window's GPU work is counted in a set of its own, the odd
 * windows' in one and the even ones' in the other, found from the window its launch's id
 * carries (cupti_launch.c). A window's set is read for its summary once its work has come in
 * (nvtxcorr_prof_gpu_window_settle) and then emptied, before the window after next can open
 * (windows are cut in order, by one helper). Work of a window already written is late:
 * counted in none, and said in the next summary's gpu_time_note; work whose launch passed
 * through between windows is counted nowhere. nvtxcorr_prof_gpu keeps the whole run's
 * counts of records, drops and incomplete records. */
/* Set last by nvtxcorr_prof_gpu_init, once the window sets exist (release): the window helper
 * reads it without the record lock (settle, done) and then uses the sets. */
static _Atomic int windows_on;
uint32_t nvtxcorr_prof_not_hooked_site = PROF_NO_LABEL;
static _Atomic int exit_settled; /* the exit has settled the records (lock_unless_closing) */
static prof_gpu_t window_sets[2];
static _Atomic unsigned gpu_written; /* the last window whose GPU time was written */
static uint64_t late_ops, late_ns;   /* under the lock; late_said: what a note has said */
static uint64_t late_said, dropped_said, incomplete_said;
/* Per window set: its launches whose correlation came in, and those of them with an
 * operation in already: the window's helper waits until both are equal (settle). */
static _Atomic uint64_t corr_seen[2];
static uint64_t corr_with_op[2];
const prof_gpu_t *nvtxcorr_prof_gpu_out; /* the set a window's summary reads, or NULL */

/* On the record and launch paths, which run only once CUPTI is on (after init). */
static inline int windows(void)
{
    return atomic_load_explicit(&windows_on, memory_order_relaxed);
}

static int alloc_set(prof_gpu_t *g)
{
    g->by_launch = nvtxcorr_prof_zalloc(PROF_MAX_SITES * sizeof *g->by_launch);
    g->by_kernel = nvtxcorr_prof_zalloc(PROF_MAX_SITES * sizeof *g->by_kernel);
    g->replays = nvtxcorr_prof_zalloc(PROF_MAX_SITES * sizeof *g->replays);
    g->launch_hist = nvtxcorr_prof_zalloc(PROF_MAX_SITES * sizeof *g->launch_hist);
    g->kernel_hist = nvtxcorr_prof_zalloc(PROF_MAX_SITES * sizeof *g->kernel_hist);
    return g->by_launch && g->by_kernel && g->replays && g->launch_hist && g->kernel_hist ? 0 : -1;
}

int nvtxcorr_prof_gpu_init(void)
{
    int want = nvtxcorr_prof_windows();
    corr_map = nvtxcorr_prof_zalloc(CORR_SLOTS * sizeof *corr_map);
    pending = nvtxcorr_prof_zalloc(PENDING_MAX * sizeof *pending);
    if (alloc_set(&nvtxcorr_prof_gpu) != 0 || corr_map == NULL || pending == NULL) return -1;
    if (want && (alloc_set(&window_sets[0]) != 0 || alloc_set(&window_sets[1]) != 0)) return -1;
    atomic_store_explicit(&windows_on, want, memory_order_release);
    return 0;
}

/* The window of the launch whose id is ext, while its GPU work is still counted: the one
 * being written or the one after it; 0 for an earlier one (late). */
static unsigned window_of(uint64_t ext)
{
    unsigned tag = (unsigned)(ext >> 16) & 0xff;
    unsigned written = atomic_load_explicit(&gpu_written, memory_order_relaxed);
    if (tag == ((written + 1) & 0xff)) return written + 1;
    if (tag == ((written + 2) & 0xff)) return written + 2;
    return 0;
}

/* The fork step of the record lock, which is not taken at fork: the child turns GPU time off
 * and never reads the records it guards (cupti_buffers.c), and its holder, a CUPTI thread iterating
 * a buffer inside CUPTI, holds it for a whole buffer: taking it made a fork storm with GPU time 4.5
 * times slower (docs/design.md, Fork). The child re-initialises it. */
void nvtxcorr_prof_gpu_fork(nvtxcorr_fork_t phase)
{
    if (phase != NVTXCORR_FORK_CHILD) return;
    pthread_mutex_init(&gpu_lock, NULL);
    nvtxcorr_prof_gpu_out = NULL; /* a window the parent's helper was writing */
}

static void add(prof_gpu_stat_t *s, uint64_t ns)
{
    if (s->n == 0 || ns < s->min) s->min = ns;
    if (ns > s->max) s->max = ns;
    s->n++;
    s->ns += ns;
}

/* Per site and view, the histogram of the operations' durations (the gpu_p50_ns and
 * gpu_p99_ns of the summary), made when the site first gets GPU time: only sites that ran on
 * the GPU cost its 1.2 KiB. Without memory for one, that site's rows have no percentiles. */
static void add_hist(uint64_t **slot, uint64_t ns)
{
    if (*slot == NULL) *slot = nvtxcorr_prof_alloc(PROF_BUCKETS * sizeof **slot);
    if (*slot != NULL) (*slot)[prof_bucket(ns)]++;
}

/* CUPTI hands out the same name pointer for every execution of a kernel: a direct-mapped
 * cache by pointer (checked with strcmp, as an address may be reused for another name) saves
 * hashing the name each time. */
enum { NAME_CACHE = 256 };
static struct {
    const char *ptr, *copy; /* CUPTI's pointer; our copy of the name it had */
    uint32_t site;
} name_cache[NAME_CACHE];

typedef struct site_job {
    const char *name;
    nvtxcorr_profile_site_t *site;
} site_job_t;

static void kernel_site_here(void *arg)
{
    site_job_t *job = arg;
    job->site = nvtxcorr_prof_kernel_site(job->name);
}

static uint32_t site_of(const prof_intern_entry_t *e)
{
    const nvtxcorr_profile_site_t *s = e->value;
    return s ? s->id : 0;
}

static const prof_intern_entry_t *site_for_name_slow(const char *name);
static uint32_t site_for_name(const char *name)
{
    size_t i = ((uintptr_t)name >> 3) % NAME_CACHE;
    if (name_cache[i].ptr == name && !strcmp(name_cache[i].copy, name)) return name_cache[i].site;
    const prof_intern_entry_t *e = site_for_name_slow(name);
    if (e == NULL) return 0;
    name_cache[i].ptr = name, name_cache[i].copy = e->key, name_cache[i].site = site_of(e);
    return site_of(e);
}

static const prof_intern_entry_t *site_for_name_slow(const char *name)
{
    const prof_intern_entry_t *e = nvtxcorr_prof_intern_find(&names, name);
    if (e) return e;
    /* Bounded whatever the program does: past NAMES_KEPT distinct names (the site table holds
     * fewer), a new name counts under [other] (site 0) without being kept. */
    if (names.count >= NAMES_KEPT) return NULL;
    /* Demangling and matching are deep, and CUPTI may give a buffer back on a program thread
     * with a small stack: on the slow-path stack, as a launch's first sight of a kernel. */
    site_job_t job = {name, NULL};
    nvtxcorr_on_slow_stack(kernel_site_here, &job);
    /* Out of memory: counted under [other] (site 0). */
    return nvtxcorr_prof_intern_add(&names, name, job.site);
}

static void replay_done(const open_replay_t *r)
{
    prof_gpu_t *g = &nvtxcorr_prof_gpu;
    if (windows()) {
        unsigned w = window_of(r->ext);
        if (w == 0) return; /* its operations were counted late already */
        g = &window_sets[w & 1];
    }
    prof_gpu_replays_t **slot = &g->replays[r->site];
    if (*slot == NULL && (*slot = nvtxcorr_prof_alloc(sizeof **slot)) == NULL) return;
    prof_gpu_replays_t *p = *slot;
    add(&p->time, r->ns);
    p->ops += r->ops;
    p->hist[prof_bucket(r->ns)]++;
}

/* One operation of a graph replay: summed into the replay it belongs to. Open replays are
 * kept 4-way set-associative by external id: a replay is complete once four newer ones of
 * its set have started (replays overlap only as far as streams run them concurrently). */
enum { REPLAY_WAYS = 4 };
static open_replay_t *last_replay; /* the operations of one replay mostly come in a row */

static void replay_add(uint64_t ext, uint32_t site, uint64_t ns)
{
    if (last_replay != NULL && last_replay->ext == ext) {
        last_replay->ns += ns, last_replay->ops++, last_replay->last_use = ++use_clock;
        return;
    }
    size_t set = (size_t)((ext * 0x9E3779B97F4A7C15ull) >> 60) % (OPEN_REPLAYS / REPLAY_WAYS);
    open_replay_t *ways = &open_replays[set * REPLAY_WAYS], *victim = ways;
    use_clock++;
    for (int i = 0; i < REPLAY_WAYS; i++) {
        open_replay_t *r = &ways[i];
        if (r->ext == ext) {
            r->ns += ns, r->ops++, r->last_use = use_clock;
            last_replay = r;
            return;
        }
        if (r->ext == 0 || (victim->ext != 0 && r->last_use < victim->last_use)) victim = r;
    }
    if (victim->ext) replay_done(victim); /* the oldest replay is complete by now */
    *victim = (open_replay_t){ext, ns, 1, use_clock, site};
    last_replay = victim;
}

/* An operation in the by-kernel view. */
static inline __attribute__((always_inline)) void count_kernel(prof_gpu_t *g, const op_t *op)
{
    g->ops++;
    g->ns += op->end - op->start;
    add(&g->by_kernel[op->kernel_site], op->end - op->start);
    add_hist(&g->kernel_hist[op->kernel_site], op->end - op->start);
}

/* An operation whose launch is known (ext), or will not be (0). */
static void attribute(const op_t *op, uint64_t ext)
{
    prof_gpu_t *g = &nvtxcorr_prof_gpu;
    uint64_t ns = op->end - op->start;
    uint32_t site = ext ? (uint32_t)(ext >> 49) : PROF_NO_LABEL; /* cupti_launch.c's layout */
    uint32_t live = (uint32_t)(ext >> 32) & 0x1ffff;
    uint32_t nsites = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_acquire);
    const nvtxcorr_profile_site_t *launch =
        site < nsites ? atomic_load_explicit(&nvtxcorr_prof_sites[site], memory_order_acquire)
                      : NULL;
    int table = 0; /* context_stats.c's GPU table: the run's, or the window's */
    if (NVTXCORR_UNLIKELY(windows())) {
        unsigned window = launch != NULL ? window_of(ext) : 0;
        if (window == 0) { /* late, or launched between windows: in no window */
            if (launch != NULL) late_ops++, late_ns += ns;
            g = NULL;
        } else {
            g = &window_sets[window & 1];
            table = 1 + (int)(window & 1);
            count_kernel(g, op);
        }
    }
    if (g == NULL) {
        /* counted in no window */
    } else if (launch == NULL) {
        g->uncorrelated++;
        g->uncorrelated_ns += ns;
    } else {
        if (site == nvtxcorr_prof_not_hooked_site) g->not_hooked++, g->not_hooked_ns += ns;
        add(&g->by_launch[site], ns);
        add_hist(&g->launch_hist[site], ns);
        if (launch->graph) replay_add(ext, site, ns);
    }
    /* By program context: the launch's, or for a replayed node its capture path under the
     * launch's path and the graph's label (context_stats.c). */
    uint32_t ctx = launch == NULL ? 0
                   : launch->graph
                       ? nvtxcorr_prof_ctx_replayed(live, launch, op->shape.graph_node_id,
                                                    op->shape.graph_id != 0, ns)
                       : live;
    if (g != NULL) nvtxcorr_prof_ctx_gpu(table, ctx, op->kernel_site, ns);
    /* With windows, an operation whose launch nvtxcorr did not see ran between windows (the
     * launch passed straight through): the trace holds only the windows' launches. */
    if (atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed) &&
        (launch != NULL || !nvtxcorr_prof_windows())) {
        if (site == nvtxcorr_prof_not_hooked_site) launch = NULL; /* no launch event to point at */
        prof_trace_op_t t = {
            atomic_load_explicit(&nvtxcorr_prof_sites[op->kernel_site], memory_order_acquire),
            launch,
            op->device,
            op->stream,
            nvtxcorr_prof_gpu_trace_ns(op->start),
            ns,
            launch ? ext : 0,
            &op->shape,
            ctx};
        trace_op(&t);
    }
}

static inline __attribute__((always_inline)) int lookup(uint32_t corr, uint64_t *ext)
{
    corr_slot_t *c = &corr_map[corr % CORR_SLOTS];
    if (atomic_load_explicit(&c->corr, memory_order_acquire) != corr) return 0;
    /* Acquire: a launch stored after the id was cleared brings the clearing with it. */
    uint64_t e = atomic_load_explicit(&c->ext, memory_order_acquire);
    if (e == 0 || atomic_load_explicit(&c->corr, memory_order_relaxed) != corr) return 0;
    *ext = e;
    if (NVTXCORR_UNLIKELY(windows()) &&
        !atomic_exchange_explicit(&c->has_op, 1, memory_order_relaxed)) {
        unsigned w = window_of(e);
        if (w) corr_with_op[w & 1]++;
    }
    return 1;
}

static void operation(const op_t *op)
{
    prof_gpu_t *g = &nvtxcorr_prof_gpu;
    if (op->end < op->start || op->start == 0) { /* cut short by a forced flush */
        g->incomplete++;
        return;
    }
    if (!windows()) count_kernel(g, op); /* with windows: once its window is known */
    uint64_t ext;
    if (lookup(op->corr, &ext))
        attribute(op, ext);
    else if (npending < PENDING_MAX)
        pending[npending++] = *op;
    else
        attribute(op, 0);
}

void nvtxcorr_prof_gpu_begin_buffer(size_t dropped)
{
    gpu_held = 1; /* before the lock, cleared after it, as in handle_map.c */
    pthread_mutex_lock(&gpu_lock);
    nvtxcorr_prof_gpu.dropped += dropped;
}

void nvtxcorr_prof_gpu_correlation(uint32_t corr, uint64_t ext)
{
    if (ext == 0 || corr == 0) return;
    corr_slot_t *c = &corr_map[corr % CORR_SLOTS];
    atomic_store_explicit(&c->corr, 0, memory_order_relaxed);
    atomic_store_explicit(&c->ext, ext, memory_order_release); /* after the clearing */
    atomic_store_explicit(&c->has_op, 0, memory_order_relaxed);
    atomic_store_explicit(&c->corr, corr, memory_order_release);
    if (NVTXCORR_UNLIKELY(windows())) {
        unsigned w = window_of(ext);
        if (w) atomic_fetch_add_explicit(&corr_seen[w & 1], 1, memory_order_relaxed);
    }
}

/* A graph node that is not a kernel: one site per kind ("[memcpy]", "[memset]"), found once. */
static uint32_t node_site(uint32_t *site, const char *kind)
{
    if (*site == PROF_NO_LABEL) {
        const nvtxcorr_profile_site_t *s = nvtxcorr_prof_op_site(kind);
        *site = s ? s->id : 0;
    }
    return *site;
}

void nvtxcorr_prof_gpu_operation(const prof_gpu_op_t *o)
{
    uint32_t site;
    if (o->kind == PROF_GPU_KERNEL)
        site = site_for_name(o->name ? o->name : NVTXCORR_UNKNOWN_KERNEL);
    else if (!o->shape.graph_id) /* copies and sets count only as graph nodes: else not launches */
        return;
    else if (o->kind == PROF_GPU_MEMCPY)
        site = node_site(&memcpy_site, "[memcpy]");
    else
        site = node_site(&memset_site, "[memset]");
    op_t op = {o->corr, site, o->device, o->stream, o->start, o->end, o->shape};
    nvtxcorr_prof_gpu.records++;
    operation(&op);
}

/* Kernels that arrived before their correlation: matched now if it has come. */
static void retry_pending(int final)
{
    size_t keep = 0;
    for (size_t i = 0; i < npending; i++) {
        uint64_t ext;
        if (lookup(pending[i].corr, &ext))
            attribute(&pending[i], ext);
        else if (final)
            attribute(&pending[i], 0);
        else
            pending[keep++] = pending[i];
    }
    npending = keep;
}

void nvtxcorr_prof_gpu_end_buffer(void)
{
    retry_pending(0);
    pthread_mutex_unlock(&gpu_lock);
    gpu_held = 0;
}

/* Before the summary: what is still open counts now. From a signal handler the lock is only
 * tried (the thread interrupted may hold it); without it the numbers are read as they are. */
int nvtxcorr_prof_gpu_finish(int from_signal)
{
    int locked =
        from_signal ? pthread_mutex_trylock(&gpu_lock) == 0 : pthread_mutex_lock(&gpu_lock) == 0;
    if (!locked || from_signal) return locked; /* the flush helper settled them (cupti_thread.c) */
    retry_pending(1);
    for (int i = 0; i < OPEN_REPLAYS; i++)
        if (open_replays[i].ext) {
            replay_done(&open_replays[i]);
            open_replays[i].ext = 0;
        }
    atomic_store(&exit_settled, 1); /* a window helper waiting for it goes on */
    return 1;
}

void nvtxcorr_prof_gpu_finished(int locked)
{
    if (locked) pthread_mutex_unlock(&gpu_lock);
}

/* ---- windows ---- */
static char window_note[160]; /* what the window being written says of late work */

/* The lock, on the window helper: unless the exit has begun, whose path takes it before the
 * helper's own lock (exit.c: CUPTI flushed and the records settled, then the window still
 * open). Then the helper waits (at most 3 s, within the 5 s the exit waits for it) until the
 * exit has settled the records, the window's among them, and goes on without (0): the exit
 * holds the lock and waits for the helper. */
static int lock_unless_closing(void)
{
    for (;;) {
        if (nvtxcorr_prof_gpu_closing()) {
            for (int j = 0; j < 3000 && !atomic_load(&exit_settled); j++) {
                struct timespec ts = {0, 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            return 0;
        }
        if (pthread_mutex_trylock(&gpu_lock) == 0) return 1;
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* window.c, once window `index` is cut, on its helper; at exit on the exiting thread, after
 * the exit path flushed CUPTI and settled the records (it holds the lock, unless a signal
 * handler could not take it). Not at exit: CUPTI is flushed, then again every 20 ms while
 * more of the window's work comes in (a kernel still running when the window closed), at most
 * about a second. Then the window's open replays are closed and its later work is late; its
 * set is what the summary reads (nvtxcorr_prof_gpu_out) until nvtxcorr_prof_gpu_window_done.
 * Called for every window, in order, whether or not its summary can be written. */
void nvtxcorr_prof_gpu_window_settle(unsigned index, int at_exit)
{
    if (!atomic_load_explicit(&windows_on, memory_order_acquire) ||
        nvtxcorr_prof_gpu_on != PROF_GPU_COLLECTING)
        return;
    prof_gpu_t *set = &window_sets[index & 1];
    int locked = 0;
    if (!at_exit) {
        /* Until every launch of the window whose correlation came in has work in, and once
         * more after that (a graph's last nodes may come in a later buffer than its first). */
        int after = 0;
        for (int round = 0; round < 50 && nvtxcorr_prof_gpu_flush_window() == 0; round++) {
            if (!lock_unless_closing()) break;
            retry_pending(0);
            int in = corr_with_op[index & 1] >=
                     atomic_load_explicit(&corr_seen[index & 1], memory_order_relaxed);
            pthread_mutex_unlock(&gpu_lock);
            if (in && after++) break;
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        locked = lock_unless_closing();
    }
    for (int i = 0; i < OPEN_REPLAYS; i++)
        if (open_replays[i].ext && window_of(open_replays[i].ext) == index) {
            replay_done(&open_replays[i]);
            open_replays[i].ext = 0;
        }
    last_replay = NULL;
    atomic_store_explicit(&gpu_written, index, memory_order_relaxed);
    /* Drops and cut-short records are reported per buffer, not per launch: each window's
     * summary has those reported while it was being counted. */
    const prof_gpu_t *run = &nvtxcorr_prof_gpu;
    set->dropped = run->dropped - dropped_said, dropped_said = run->dropped;
    set->incomplete = run->incomplete - incomplete_said, incomplete_said = run->incomplete;
    window_note[0] = 0;
    if (late_ops > late_said) {
        char n[24];
        n[nvtxcorr_fmt_u64(n, late_ops - late_said)] = 0;
        const char *parts[] = {n, " GPU operations of earlier windows came in after their "
                                  "window's summary was written: in no window"};
        nvtxcorr_prof_join(window_note, sizeof window_note, 0, parts, 2);
    }
    late_said = late_ops;
    if (locked) pthread_mutex_unlock(&gpu_lock);
    nvtxcorr_prof_gpu_out = set;
}

/* The note of the window being written: late work of earlier windows, or NULL. */
const char *nvtxcorr_prof_gpu_window_note(void)
{
    return window_note[0] ? window_note : NULL;
}

/* After window `index`'s summary: its set emptied for the window after next (which cannot open
 * before the next window is cut, by the same helper). */
void nvtxcorr_prof_gpu_window_done(unsigned index)
{
    nvtxcorr_prof_gpu_out = NULL;
    if (!atomic_load_explicit(&windows_on, memory_order_acquire)) return;
    prof_gpu_t *g = &window_sets[index & 1];
    memset(g->by_launch, 0, PROF_MAX_SITES * sizeof *g->by_launch);
    memset(g->by_kernel, 0, PROF_MAX_SITES * sizeof *g->by_kernel);
    for (size_t i = 0; i < PROF_MAX_SITES; i++) {
        if (g->replays[i]) memset(g->replays[i], 0, sizeof *g->replays[i]);
        if (g->launch_hist[i]) memset(g->launch_hist[i], 0, PROF_BUCKETS * sizeof(uint64_t));
        if (g->kernel_hist[i]) memset(g->kernel_hist[i], 0, PROF_BUCKETS * sizeof(uint64_t));
    }
    g->records = g->ops = g->ns = g->dropped = g->uncorrelated = g->uncorrelated_ns = 0;
    g->incomplete = g->not_hooked = g->not_hooked_ns = 0;
    atomic_store_explicit(&corr_seen[index & 1], 0, memory_order_relaxed);
    corr_with_op[index & 1] = 0;
    nvtxcorr_prof_ctx_gpu_clear(index);
}
