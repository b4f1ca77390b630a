/* Profile mode's counters: what a launch is counted under, and the per-thread records.
 *
 * A *site* is what a launch is counted under: a kernel (its raw name, as the driver reports
 * it, with the label the table gave it) or a graph label. A site belongs to a *label* group
 * (label text and category), except a kernel whose rule said "-". Sites and labels are
 * interned on a slow path, once per distinct handle, and get small integer ids; each handle
 * caches its site in a lock-free map like the core's labels (nvtxcorr_profile_sites).
 *
 * Each launching thread owns a block of records indexed by site id, allocated in chunks on
 * first touch, with mmap (pages.c): a thread's first launch may be made in a signal handler. The
 * launch path takes no lock and writes only its own thread's records, so no cache line is shared
 * between threads; the summary at exit adds the blocks up. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "labels.h"

nvtxcorr_profile_site_t *_Atomic nvtxcorr_prof_sites[PROF_MAX_SITES];
prof_label_t *_Atomic nvtxcorr_prof_labels[PROF_MAX_SITES];
_Atomic uint32_t nvtxcorr_prof_site_count, nvtxcorr_prof_label_count;
prof_thread_t *_Atomic nvtxcorr_prof_threads;
_Atomic unsigned nvtxcorr_prof_generation;
__thread prof_thread_t *nvtxcorr_prof_self __attribute__((tls_model("initial-exec")));
__thread uint64_t nvtxcorr_prof_own_ticks __attribute__((tls_model("initial-exec"))) =
    PROF_OWN_IDLE;
_Atomic uint64_t nvtxcorr_prof_own_ns;

/* CUfunction/CUkernel, host stub and CUgraphExec -> site (nvtxcorr_profile_kind_t order). */
static nvtxcorr_map_t site_maps[3];

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;

/* ---- interning (under intern_lock) ---- */
enum { BUCKETS = 8192 };
static prof_intern_entry_t *site_buckets[BUCKETS], *label_buckets[BUCKETS];
static prof_intern_t sites = {site_buckets, BUCKETS, 0}, labels = {label_buckets, BUCKETS, 0};

static void *lookup(const prof_intern_t *t, const char *key)
{
    const prof_intern_entry_t *e = nvtxcorr_prof_intern_find(t, key);
    return e ? e->value : NULL;
}

/* "text\x1f" "category": two labels differ when either differs. */
static char *join(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0, lc = c ? strlen(c) : 0;
    char *s = malloc(la + lb + lc + 3);
    if (s == NULL) return NULL;
    memcpy(s, a, la);
    s[la] = '\x1f';
    if (lb) memcpy(s + la + 1, b, lb);
    s[la + 1 + lb] = '\x1f';
    if (lc) memcpy(s + la + 2 + lb, c, lc);
    s[la + 2 + lb + lc] = 0;
    return s;
}

static prof_label_t *label_intern(const char *text, const char *category)
{
    char *key = join(text, category, NULL);
    if (key == NULL) return NULL;
    prof_label_t *l = lookup(&labels, key);
    uint32_t n = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_relaxed);
    if (l == NULL && n < PROF_MAX_SITES && (l = calloc(1, sizeof *l)) != NULL) {
        l->id = n;
        l->text = strdup(text);
        l->category = category ? strdup(category) : NULL;
        if (l->text == NULL || (category && l->category == NULL) ||
            nvtxcorr_prof_intern_add(&labels, key, l) == NULL) {
            free(l);
            l = NULL;
        } else {
            atomic_store_explicit(&nvtxcorr_prof_labels[n], l, memory_order_release);
            atomic_store_explicit(&nvtxcorr_prof_label_count, n + 1, memory_order_release);
        }
    }
    free(key);
    return l;
}

/* Under intern_lock: graph sites made so far, [other graphs] included. */
static uint32_t graph_sites;

/* The site that counts what a full table has no room for, with one warning per kind; NULL
 * while there is room. */
static nvtxcorr_profile_site_t *over_limit(int graph)
{
    uint32_t n = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_relaxed);
    if (graph && graph_sites >= PROF_MAX_GRAPH_SITES) {
        static int warned;
        if (!warned++)
            nvtxcorr_prof_say("warn",
                              "profile: more than 8191 distinct graph labels; the others are "
                              "counted under [other graphs]",
                              (char *)NULL);
    } else if (n >= PROF_MAX_SITES) {
        static int warned[2];
        if (!warned[graph]++)
            nvtxcorr_prof_say("warn",
                              graph ? "profile: more than 32766 distinct kernels and graph "
                                      "labels; the other graphs are counted under [other graphs]"
                                    : "profile: more than 32766 distinct kernels and graph "
                                      "labels; the other kernels are counted under [other]",
                              (char *)NULL);
    } else {
        return NULL;
    }
    return atomic_load_explicit(
        &nvtxcorr_prof_sites[graph ? PROF_OTHER_GRAPHS_SITE : PROF_OTHER_SITE],
        memory_order_relaxed);
}

static nvtxcorr_profile_site_t *site_new(int graph, const char *name, const char *function,
                                         const nvtxcorr_range_t *label, prof_label_t *group)
{
    uint32_t n = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_relaxed);
    if (n >= PROF_MAX_SITES) return over_limit(graph);
    nvtxcorr_profile_site_t *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->id = n;
    s->graph = graph;
    s->label = label;
    s->name = strdup(name);
    s->function = strdup(function);
    if (s->name == NULL || s->function == NULL) return NULL; /* leaked: out of memory anyway */
    s->label_id = group ? group->id : PROF_NO_LABEL;
    atomic_store_explicit(&s->spill_gen,
                          atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed),
                          memory_order_relaxed);
    if (atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed))
        nvtxcorr_prof_trace_prefix(s, group ? group->text : NULL, group ? group->category : NULL);
    if (group) {
        s->next_in_label = atomic_load_explicit(&group->first, memory_order_relaxed);
        atomic_store_explicit(&group->first, s, memory_order_release);
    }
    if (graph) graph_sites++;
    atomic_store_explicit(&nvtxcorr_prof_sites[n], s, memory_order_release);
    atomic_store_explicit(&nvtxcorr_prof_site_count, n + 1, memory_order_release);
    return s;
}

/* The site of a kernel (name, label) or of a graph label; label NULL: a "-" rule. A full
 * table is checked first, so that what it has no room for takes no label either. */
static nvtxcorr_profile_site_t *site_intern(int graph, const char *name, const char *function,
                                            const nvtxcorr_range_t *label)
{
    const char *text = label ? label->text : NULL;
    const char *category = label ? nvtxcorr_category_name(label->attr.category) : NULL;
    char *key = join(graph ? "g" : name, text ? text : "\x1e-", category);
    if (key == NULL) return NULL;
    pthread_mutex_lock(&intern_lock);
    nvtxcorr_profile_site_t *s = lookup(&sites, key);
    if (s == NULL && (s = over_limit(graph)) == NULL) {
        prof_label_t *group = text ? label_intern(text, category) : NULL;
        s = site_new(graph, name, function, graph ? NULL : label, group);
        if (s && s->id > PROF_OTHER_GRAPHS_SITE && nvtxcorr_prof_intern_add(&sites, key, s) == NULL)
            s = NULL;
    }
    pthread_mutex_unlock(&intern_lock);
    free(key);
    return s;
}

/* GPU records (gpu.c): a kernel known only by its raw name gets the site a launch of it
 * would get, so both views and the CPU counts of one kernel meet in one entry. */
nvtxcorr_profile_site_t *nvtxcorr_prof_kernel_site(const char *mangled)
{
    char storage[3 * 1024];
    nvtxcorr_kernel_names_t names;
    nvtxcorr_names_from_mangled(mangled, &names, storage, sizeof storage);
    const nvtxcorr_range_t *l = nvtxcorr_label_for_name(mangled);
    return site_intern(0, mangled, names.function, l && !l->skip ? l : NULL);
}

/* A graph memcpy or memset node: its own label, outside the label table. */
nvtxcorr_profile_site_t *nvtxcorr_prof_op_site(const char *what)
{
    return site_intern(0, what, what, nvtxcorr_range_make(what, 0, 0, NULL, 0));
}

/* The core's label for a handle, found (and cached by the core) on first sight. */
static const void *label_value(nvtxcorr_profile_kind_t kind, nvtxcorr_map_t *map, const void *key)
{
    const void *v = nvtxcorr_map_get(map, key);
    if (v) return v;
    switch (kind) {
    case NVTXCORR_PROFILE_FUNCTION:
        return nvtxcorr_function_label_slow(key);
    case NVTXCORR_PROFILE_HOST:
        return nvtxcorr_host_label_slow(key);
    default:
        return nvtxcorr_graph_label_slow(key);
    }
}

typedef struct site_job {
    nvtxcorr_profile_kind_t kind;
    nvtxcorr_map_t *map;
    const void *key;
    nvtxcorr_profile_site_t *site;
} site_job_t;

static void site_slow_here(void *arg)
{
    site_job_t *job = arg;
    nvtxcorr_profile_kind_t kind = job->kind;
    const void *key = job->key;
    const void *v = label_value(kind, job->map, key);
    const nvtxcorr_range_t *l = nvtxcorr_range_of(v);
    int skip = ((uintptr_t)v & 1) != 0;
    nvtxcorr_profile_site_t *s;
    if (kind == NVTXCORR_PROFILE_GRAPH) {
        const char *text = l ? l->text : "graph#?";
        s = site_intern(1, skip ? "-" : text, skip ? "-" : text, skip ? NULL : l);
    } else {
        char raw[1024], storage[3 * 1024];
        nvtxcorr_kernel_names_t names;
        int named = key && (kind == NVTXCORR_PROFILE_HOST
                                ? nvtxcorr_host_name(key, raw, sizeof raw)
                                : nvtxcorr_function_name(key, raw, sizeof raw)) == 0;
        if (!named) snprintf(raw, sizeof raw, "%s", NVTXCORR_UNKNOWN_KERNEL);
        nvtxcorr_names_from_mangled(raw, &names, storage, sizeof storage);
        /* A label that could not be made (out of memory) still counts under the kernel's
         * default label text. */
        s = site_intern(0, raw, names.function, skip ? NULL : l);
    }
    /* Cached only when the core cached the label too: an exec never seen instantiated is
     * looked up again, so its later instantiation wins (as in graphs.c). */
    if (s && key && nvtxcorr_map_get(job->map, key) != NULL)
        nvtxcorr_map_put(&site_maps[kind], key, s);
    job->site = s;
}

/* First launch of a handle in profile mode: naming and demangling are deep, so this runs on
 * the slow-path stack, as the core's own first-launch work does. */
static nvtxcorr_profile_site_t *site_slow(nvtxcorr_profile_kind_t kind, nvtxcorr_map_t *map,
                                          const void *key)
{
    site_job_t job = {kind, map, key, NULL};
    nvtxcorr_on_slow_stack(site_slow_here, &job);
    return job.site;
}

/* The core's forgotten-handles event (registered by nvtxcorr_profile_init): a handle's label
 * changed or the handle went away (key NULL: every handle of the kind), so its site is found
 * again at its next launch. */
static void forget(nvtxcorr_handle_kind_t kind, const void *key)
{
    if (atomic_load_explicit(&nvtxcorr_mode, memory_order_relaxed) != NVTXCORR_MODE_PROFILE) return;
    if (key == NULL)
        nvtxcorr_map_clear_values(&site_maps[kind]);
    else if (nvtxcorr_map_get(&site_maps[kind], key) != NULL)
        nvtxcorr_map_put(&site_maps[kind], key, NULL);
}

/* ---- per-thread blocks ---- */
static void thread_exit(void *arg)
{
    prof_thread_t *t = arg;
    nvtxcorr_prof_trace_flush_own(t);
    pthread_mutex_lock(&threads_lock);
    t->retired = 1;
    pthread_mutex_unlock(&threads_lock);
    nvtxcorr_prof_self = NULL;
}

prof_thread_t *nvtxcorr_prof_thread_attach(void)
{
    prof_thread_t *t;
    pthread_mutex_lock(&threads_lock);
    for (t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_relaxed); t; t = t->next)
        if (t->retired) break;
    if (t) {
        t->retired = 0;
    } else if ((t = nvtxcorr_prof_zalloc(sizeof *t)) != NULL) {
        t->next = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_relaxed);
        atomic_store_explicit(&nvtxcorr_prof_threads, t, memory_order_release);
    }
    pthread_mutex_unlock(&threads_lock);
    if (t == NULL) return NULL;
    unsigned gen = atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed);
    if (atomic_load_explicit(&t->gen, memory_order_relaxed) != gen) {
        /* A block the parent process left (this is a forked child): its records are the
         * parent's. They are dropped, not freed or cleared: both would write to (and so copy)
         * memory the child shares with the parent; the summary reads no block of an older
         * generation. */
        for (size_t i = 0; i < PROF_MAX_SITES / PROF_CHUNK; i++)
            atomic_store_explicit(&t->chunks[i], NULL, memory_order_relaxed);
        atomic_store_explicit(&t->gen, gen, memory_order_release);
    }
    t->tid = (unsigned)syscall(SYS_gettid);
    t->where_pid = 0; /* the trace's per-thread prefix names the new owner */
    if (t->trace_buf == NULL && atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed))
        t->trace_buf = nvtxcorr_prof_zalloc(PROF_TRACE_BUF);
    pthread_setspecific(thread_key, t);
    nvtxcorr_prof_self = t;
    return t;
}

static prof_record_t *chunk_new(prof_thread_t *t, uint32_t id)
{
    prof_record_t *c = nvtxcorr_prof_zalloc(PROF_CHUNK * sizeof *c);
    if (c) atomic_store_explicit(&t->chunks[id / PROF_CHUNK], c, memory_order_release);
    return c;
}

/* A record's 16-bit bucket b (at `bucket`) is full: 65,536 more go to the site's shared bucket
 * and it restarts from 0. In a forked child, the first carry into a site clears what the
 * parent had carried; a thread that finds another one clearing waits for it (a 1.2 KB
 * memset). Out of line, so the launch path keeps nothing live across it. */
__attribute__((noinline, cold)) static void spill(nvtxcorr_profile_site_t *s,
                                                  _Atomic uint16_t *bucket, unsigned b)
{
    enum { CLEARING = 0xffffffffu };
    unsigned gen = atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed);
    for (;;) {
        uint32_t seen = atomic_load_explicit(&s->spill_gen, memory_order_acquire);
        if (seen == gen) break;
        if (seen != CLEARING &&
            atomic_compare_exchange_strong_explicit(&s->spill_gen, &seen, CLEARING,
                                                    memory_order_acquire, memory_order_relaxed)) {
            for (unsigned i = 0; i < PROF_BUCKETS; i++)
                atomic_store_explicit(&s->spill[i], 0, memory_order_relaxed);
            atomic_store_explicit(&s->spill_gen, gen, memory_order_release);
            break;
        }
        sched_yield();
    }
    atomic_fetch_add_explicit(&s->spill[b], PROF_SPILL, memory_order_relaxed);
    atomic_store_explicit(bucket, 0, memory_order_relaxed);
}

#define BUMP(field, by)                                                                            \
    atomic_store_explicit(&(field), atomic_load_explicit(&(field), memory_order_relaxed) + (by),   \
                          memory_order_relaxed)

static void record(const nvtxcorr_profile_launch_t *pl, int failed)
{
    prof_thread_t *t = nvtxcorr_prof_self;
    if (NVTXCORR_UNLIKELY(t == NULL) && (t = nvtxcorr_prof_thread_attach()) == NULL) return;
    uint32_t id = pl->site->id;
    prof_record_t *c = atomic_load_explicit(&t->chunks[id / PROF_CHUNK], memory_order_relaxed);
    if (NVTXCORR_UNLIKELY(c == NULL) && (c = chunk_new(t, id)) == NULL) return;
    prof_record_t *r = &c[id % PROF_CHUNK];
    if (failed) BUMP(r->errors, 1); /* a launch that failed while capturing too */
    if (pl->capturing) {            /* recorded into a graph, not run: counted apart, not timed */
        BUMP(r->capture, 1);
        return;
    }
    uint64_t ns = pl->ns, n = atomic_load_explicit(&r->launches, memory_order_relaxed);
    atomic_store_explicit(&r->launches, n + 1, memory_order_relaxed);
    BUMP(r->total_ns, ns);
    if (n == 0 || ns < atomic_load_explicit(&r->min_ns, memory_order_relaxed))
        atomic_store_explicit(&r->min_ns, ns, memory_order_relaxed);
    if (ns > atomic_load_explicit(&r->max_ns, memory_order_relaxed))
        atomic_store_explicit(&r->max_ns, ns, memory_order_relaxed);
    unsigned b = prof_bucket(ns);
    unsigned v = atomic_load_explicit(&r->hist[b], memory_order_relaxed) + 1u;
    if (NVTXCORR_LIKELY(v != PROF_SPILL))
        atomic_store_explicit(&r->hist[b], (uint16_t)v, memory_order_relaxed);
    else
        spill(pl->site, &r->hist[b], b);
}

/* ---- the launch path ---- */
void nvtxcorr_profile_begin(nvtxcorr_profile_launch_t *pl, nvtxcorr_profile_kind_t kind,
                            nvtxcorr_map_t *map, const void *key, const void *stream, int ptsz)
{
    /* The body entered the depth (nvtxcorr_launch_outermost). */
    nvtxcorr_profile_site_t *s = nvtxcorr_map_get(&site_maps[kind], key);
    if (NVTXCORR_UNLIKELY(s == NULL)) s = site_slow(kind, map, key);
    pl->site = s;
    pl->stream = stream;
    pl->pushed = 0;
    pl->capturing = 0;
    if (NVTXCORR_UNLIKELY(atomic_load_explicit(&nvtxcorr_captures_open, memory_order_relaxed)))
        pl->capturing = nvtxcorr_capture_active(stream, ptsz);
    if (nvtxcorr_domain) { /* a tool is attached: it gets the range it would without us */
        const nvtxcorr_range_t *l;
        if (kind == NVTXCORR_PROFILE_GRAPH) { /* graph labels are owned per exec: ask the core */
            const void *v = nvtxcorr_map_get(map, key);
            l = v ? ((uintptr_t)v & 1 ? NULL : nvtxcorr_range_of(v))
                  : nvtxcorr_range_of(nvtxcorr_graph_label_slow(key));
        } else {
            l = s ? s->label : NULL;
        }
        if (l && pl->capturing) l = nvtxcorr_capture_adjust(l, stream, ptsz);
        if (l) {
            nvtxDomainRangePushEx(nvtxcorr_domain, &l->attr);
            pl->pushed = 1;
        }
    }
    pl->ext = 0;
    prof_gpu_state_t gpu = nvtxcorr_prof_gpu_on; /* CUPTI: the launch's external correlation id */
    if (NVTXCORR_UNLIKELY(gpu == PROF_GPU_AT_NEXT_LAUNCH)) { /* this launch is measured too */
        nvtxcorr_prof_gpu_first_launch();
        gpu = nvtxcorr_prof_gpu_on;
    }
    if (gpu == PROF_GPU_COLLECTING && s != NULL && !pl->capturing)
        nvtxcorr_prof_gpu_push(pl, s->id);
    /* The launch call alone: everything above (CUPTI's start at the first launch, the
     * correlation push, the range push) is before the clock starts, and what nvtxcorr does
     * inside the call (CUPTI's callbacks) is taken out at the end. */
    nvtxcorr_prof_own_ticks = 0;
    pl->start = prof_now();
}

int nvtxcorr_profile_end(nvtxcorr_profile_launch_t *pl, int failed)
{
    uint64_t end = prof_now(), own = nvtxcorr_prof_own_ticks, ticks = end - pl->start;
    nvtxcorr_prof_own_ticks = PROF_OWN_IDLE;
    if (NVTXCORR_UNLIKELY(own != 0)) { /* never more than the call itself */
        uint64_t o = own < ticks ? own : ticks;
        ticks -= o;
        atomic_fetch_add_explicit(&nvtxcorr_prof_own_ns, prof_ticks_ns(o), memory_order_relaxed);
    }
    if (pl->ext) nvtxcorr_prof_gpu_pop();
    if (pl->pushed) nvtxDomainRangePop(nvtxcorr_domain);
    pl->ns = prof_ticks_ns(ticks);
    if (NVTXCORR_LIKELY(pl->site != NULL)) record(pl, failed);
    nvtxcorr_thread.depth--;
    return pl->site && atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed);
}

/* ---- start-up and fork ---- */
/* The fork step of the sites' and labels' lock and of the thread-block list's. */
static void stats_fork(nvtxcorr_fork_t phase)
{
    nvtxcorr_fork_mutex(phase == NVTXCORR_FORK_PREPARE ? &intern_lock : &threads_lock, phase);
    nvtxcorr_fork_mutex(phase == NVTXCORR_FORK_PREPARE ? &threads_lock : &intern_lock, phase);
}

/* The child's own state, once every lock is fresh (this step is first of the prepare order,
 * so last in the child's). */
static void child_state(nvtxcorr_fork_t phase)
{
    if (phase != NVTXCORR_FORK_CHILD) return;
    nvtxcorr_prof_stats_after_fork();
    nvtxcorr_prof_trace_after_fork();
    nvtxcorr_prof_gpu_after_fork();
    nvtxcorr_prof_process_reset();
}

/* The child keeps the sites (names) but none of the parent's counts: a new generation makes
 * every block's records the parent's (left out of the summary, dropped when the block is
 * reused), and every block is retired, the forking thread's too, whose next launch attaches
 * afresh. Only each block's header is written here, never a record. */
void nvtxcorr_prof_stats_after_fork(void)
{
    atomic_store_explicit(&nvtxcorr_prof_own_ns, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&nvtxcorr_prof_generation, 1, memory_order_relaxed);
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_relaxed); t;
         t = t->next) {
        t->retired = 1;
        atomic_store_explicit(&t->committed, 0, memory_order_relaxed);
        atomic_store_explicit(&t->busy, 0, memory_order_relaxed);
    }
    nvtxcorr_prof_self = NULL;
}

int nvtxcorr_profile_prepare(void)
{
    if (pthread_key_create(&thread_key, thread_exit) != 0) return -1;
    nvtxcorr_prof_process_reset();
    nvtxcorr_prof_exit_init(); /* from here a SIGTERM writes what there is */
    nvtxcorr_prof_clock_init();
    if (nvtxcorr_config.trace && nvtxcorr_prof_trace_init() != 0 && !nvtxcorr_config.profile)
        return -1;
    return 0;
}

int nvtxcorr_profile_init(void)
{
    /* Sites 0 and 1: where kernel and graph launches go once their bound is reached. */
    pthread_mutex_lock(&intern_lock);
    site_new(0, "[other]", "[other]", NULL, label_intern("[other]", NULL));
    site_new(1, "[other graphs]", "[other graphs]", NULL, label_intern("[other graphs]", NULL));
    pthread_mutex_unlock(&intern_lock);
    /* Profile mode's part of the core's one fork order (docs/design.md, Fork): CUPTI's record
     * lock first (its holder takes the others; re-initialised in the child only), then the
     * sites and the thread blocks, and CUPTI's spare buffers. The trace's file lock is the
     * trace's state, reset in the child with the rest of it (nvtxcorr_prof_trace_after_fork). */
    static const nvtxcorr_fork_fn steps[] = {child_state, nvtxcorr_prof_gpu_fork, stats_fork,
                                             nvtxcorr_prof_cupti_fork};
    nvtxcorr_on_fork(steps, sizeof steps / sizeof steps[0]);
    nvtxcorr_on_handles_forgotten(forget);
    /* Whenever trace mode is asked for: a forked child traces again even where the parent's
     * trace stopped (the event itself checks that the trace is on). */
    if (nvtxcorr_config.trace) nvtxcorr_on_graph_event(nvtxcorr_profile_graph_event);
    nvtxcorr_prof_gpu_start();
    return 0;
}
