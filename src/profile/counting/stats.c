/* Profile mode's statistics: what a launch is counted under, and the per-thread records.
 *
 * A *site* is what a launch is counted under: a kernel (its raw name, as the driver reports
 * it, with the label the table gave it) or a graph label. A site belongs to a *label* group
 * (label text and category), except a kernel whose rule said "-". Sites and labels are
 * interned on a slow path, once per distinct handle, and get small integer ids; each handle
 * caches its site in a lock-free map like the core's labels (profile.c, the front door).
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
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "core/emit.h"
#include "core/fork.h"
#include "core/kernels.h"
#include "labels/names.h"
#include "launch.h"
#include "profile/base/devices.h"
#include "profile/base/histogram.h"
#include "profile/base/intern.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "record.h"
#include "stats.h"
_Atomic int nvtxcorr_prof_tracing;
/* The trace's own steps (stats.h): set once, as the trace starts. */
static _Atomic(prof_site_made_fn) site_made;
static _Atomic(prof_thread_done_fn) thread_done;

void nvtxcorr_prof_stats_on_trace(prof_site_made_fn made, prof_thread_done_fn done)
{
    atomic_store_explicit(&site_made, made, memory_order_release);
    atomic_store_explicit(&thread_done, done, memory_order_release);
}
nvtxcorr_profile_site_t *_Atomic nvtxcorr_prof_sites[PROF_MAX_SITES];
prof_label_t *_Atomic nvtxcorr_prof_labels[PROF_MAX_SITES];
_Atomic uint32_t nvtxcorr_prof_site_count, nvtxcorr_prof_label_count;
prof_thread_t *_Atomic nvtxcorr_prof_threads;
_Atomic unsigned nvtxcorr_prof_generation;
__thread prof_thread_t *nvtxcorr_prof_self __attribute__((tls_model("initial-exec")));
__thread uint64_t nvtxcorr_prof_own_ticks __attribute__((tls_model("initial-exec"))) =
    PROF_OWN_IDLE;
_Atomic uint64_t nvtxcorr_prof_own_ns;

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

/* "text\x1f" "category": two labels differ when either differs. Written into *buf (a mapping
 * of *cap bytes, replaced by a larger one as needed; under intern_lock): no malloc, which a
 * signal handler calling exit() may have interrupted on this thread (pages.c). */
static char *join(char **buf, size_t *cap, const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = b ? strlen(b) : 0, lc = c ? strlen(c) : 0;
    if (la + lb + lc + 3 > *cap) {
        size_t want = (la + lb + lc + 3 + 4095) & ~(size_t)4095;
        char *bigger = nvtxcorr_prof_zalloc(want);
        if (bigger == NULL) return NULL;
        if (*buf) munmap(*buf, *cap);
        *buf = bigger, *cap = want;
    }
    char *s = *buf;
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
    static char *buf;
    static size_t cap;
    char *key = join(&buf, &cap, text, category, NULL);
    if (key == NULL) return NULL;
    prof_label_t *l = lookup(&labels, key);
    uint32_t n = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_relaxed);
    if (l == NULL && n < PROF_MAX_SITES && (l = nvtxcorr_prof_alloc(sizeof *l)) != NULL) {
        l->id = n;
        l->text = nvtxcorr_prof_strdup(text);
        l->category = category ? nvtxcorr_prof_strdup(category) : NULL;
        if (l->text == NULL || (category && l->category == NULL) ||
            nvtxcorr_prof_intern_add(&labels, key, l) == NULL) {
            l = NULL; /* out of memory: what was taken stays taken */
        } else {
            atomic_store_explicit(&nvtxcorr_prof_labels[n], l, memory_order_release);
            atomic_store_explicit(&nvtxcorr_prof_label_count, n + 1, memory_order_release);
        }
    }
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
                                         prof_label_t *group)
{
    uint32_t n = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_relaxed);
    if (n >= PROF_MAX_SITES) return over_limit(graph);
    nvtxcorr_profile_site_t *s = nvtxcorr_prof_alloc(sizeof *s);
    if (s == NULL) return NULL;
    s->id = n;
    s->graph = graph;
    s->name = nvtxcorr_prof_strdup(name);
    s->function = nvtxcorr_prof_strdup(function);
    if (s->name == NULL || s->function == NULL) return NULL; /* leaked: out of memory anyway */
    s->label_id = group ? group->id : PROF_NO_LABEL;
    atomic_store_explicit(&s->spill_gen,
                          atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed),
                          memory_order_relaxed);
    prof_site_made_fn made = atomic_load_explicit(&site_made, memory_order_acquire);
    if (made && atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed))
        made(s, group ? group->text : NULL, group ? group->category : NULL);
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
nvtxcorr_profile_site_t *nvtxcorr_prof_site_intern(int graph, const char *name,
                                                   const char *function,
                                                   const nvtxcorr_label_t *label)
{
    const char *text = label ? label->text : NULL;
    const char *category = label ? nvtxcorr_category_name(label->attr.category) : NULL;
    static char *buf;
    static size_t cap;
    pthread_mutex_lock(&intern_lock);
    char *key = join(&buf, &cap, graph ? "g" : name, text ? text : "\x1e-", category);
    nvtxcorr_profile_site_t *s = key ? lookup(&sites, key) : NULL;
    if (key && s == NULL && (s = over_limit(graph)) == NULL) {
        prof_label_t *group = text ? label_intern(text, category) : NULL;
        s = site_new(graph, name, function, group);
        if (s && s->id > PROF_OTHER_GRAPHS_SITE && nvtxcorr_prof_intern_add(&sites, key, s) == NULL)
            s = NULL;
    }
    pthread_mutex_unlock(&intern_lock);
    nvtxcorr_prof_devices_ask(); /* once, at the first launch */
    return s;
}

/* GPU records (gpu.c): a kernel known only by its raw name gets the site a launch of it
 * would get, so both views and the CPU counts of one kernel meet in one entry. */
nvtxcorr_profile_site_t *nvtxcorr_prof_kernel_site(const char *mangled)
{
    char storage[3 * 1024];
    nvtxcorr_kernel_names_t names;
    nvtxcorr_names_from_mangled(mangled, &names, storage, sizeof storage);
    const nvtxcorr_label_t *l = nvtxcorr_label_for_name(mangled);
    return nvtxcorr_prof_site_intern(0, mangled, names.function, l && !l->skip ? l : NULL);
}

/* A graph memcpy or memset node: its own label, outside the label table. */
nvtxcorr_profile_site_t *nvtxcorr_prof_op_site(const char *what)
{
    return nvtxcorr_prof_site_intern(0, what, what, nvtxcorr_label_make(what, 0, 0, NULL, 0));
}

/* ---- per-thread blocks ---- */
static void thread_exit(void *arg)
{
    prof_thread_t *t = arg;
    prof_thread_done_fn done = atomic_load_explicit(&thread_done, memory_order_acquire);
    if (done) done(t);
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
        atomic_store_explicit(&t->ctx_cells, NULL, memory_order_relaxed);
        t->ctx_used = 0;
        atomic_store_explicit(&t->ctx_shift, 0, memory_order_relaxed);
        t->ctx_last = NULL;
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

prof_record_t *nvtxcorr_prof_chunk_new(prof_thread_t *t, uint32_t id)
{
    prof_record_t *c = nvtxcorr_prof_zalloc(PROF_CHUNK * sizeof *c);
    if (c) atomic_store_explicit(&t->chunks[id / PROF_CHUNK], c, memory_order_release);
    return c;
}

/* A record's 16-bit bucket b (at `bucket`) is full: 65,536 more go to the site's shared bucket
 * and it restarts from 0. In a forked child, the first carry into a site clears what the
 * parent had carried; a thread that finds another one clearing waits for it (a 1.2 KB
 * memset). Out of line, so the launch path keeps nothing live across it. */
__attribute__((noinline, cold)) void nvtxcorr_prof_spill(nvtxcorr_profile_site_t *s,
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

/* Profile mode's step in the core's fork order: the sites' and labels' lock, then the
 * thread-block list's (docs/design.md, Fork). */
void nvtxcorr_prof_stats_fork(nvtxcorr_fork_t phase)
{
    nvtxcorr_fork_mutex(phase == NVTXCORR_FORK_PREPARE ? &intern_lock : &threads_lock, phase);
    nvtxcorr_fork_mutex(phase == NVTXCORR_FORK_PREPARE ? &threads_lock : &intern_lock, phase);
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

int nvtxcorr_prof_stats_prepare(void)
{
    return pthread_key_create(&thread_key, thread_exit) != 0 ? -1 : 0;
}

void nvtxcorr_prof_stats_init(void)
{
    /* Sites 0 and 1: where kernel and graph launches go once their bound is reached. */
    pthread_mutex_lock(&intern_lock);
    site_new(0, "[other]", "[other]", label_intern("[other]", NULL));
    site_new(1, "[other graphs]", "[other graphs]", label_intern("[other graphs]", NULL));
    pthread_mutex_unlock(&intern_lock);
}
