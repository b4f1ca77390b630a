/* Enable state and lazy initialisation. Nothing runs in a constructor: the first hooked call
 * initialises, and decides once whether this process is ACTIVE (NVTXCORR set and an NVTX tool
 * attached), PROFILE (NVTXCORR set and NVTXCORR_PROFILE or NVTXCORR_TRACE given, tool or not:
 * src/profile/) or PASSTHROUGH, in which every hook is a plain forward.
 *
 * Exactly one thread initialises (a compare-and-swap to INITIALISING), and no thread ever
 * waits for it. Initialisation loads the NVTX tool with dlopen, which takes the loader lock;
 * a thread that holds that lock (running a library constructor that calls CUDA or dlsym) and
 * waited for initialisation would deadlock with it. So while it runs, hooked calls on other
 * threads pass through (their launches get no range), the resolvers hand out our hooks
 * (correct whatever initialisation decides), and a hook re-entered on the initialising thread
 * itself (an NVTX tool that calls CUDA while it loads) passes through too. */
#include <nvtxcorr/version.h>
#include <pthread.h>

#include "labels.h"
#include "nvtxcorr.h"
#include "profile/profile.h"

/* The version, readable in the file without loading it (`nvtxcorr doctor` looks for it; so
 * does `strings libnvtxcorr.so | grep '@(#)'`), after the SCCS what(1) convention. */
__attribute__((used)) static const char version_tag[] = "@(#)nvtxcorr " NVTXCORR_VERSION_STRING;

_Atomic int nvtxcorr_mode;
int nvtxcorr_profiling;
__thread nvtxcorr_thread_t nvtxcorr_thread __attribute__((tls_model("initial-exec")));
static nvtxcorr_label_table_t *table; /* set once, before the mode says ACTIVE */

const nvtxcorr_label_table_t *nvtxcorr_label_table(void)
{
    return table;
}

static __thread int initialising;
_Atomic unsigned long long nvtxcorr_launches_while_starting;

void nvtxcorr_passed_while_starting(void)
{
    atomic_fetch_add_explicit(&nvtxcorr_launches_while_starting, 1, memory_order_relaxed);
}

/* The listener of the core's graph event (nvtxcorr.h): set once, by profile mode's
 * initialisation, before the mode says PROFILE; read with acquire, so the listener's own state
 * is seen set up. */
static _Atomic(nvtxcorr_graph_event_fn) graph_listener;

void nvtxcorr_on_graph_event(nvtxcorr_graph_event_fn fn)
{
    atomic_store_explicit(&graph_listener, fn, memory_order_release);
}

int nvtxcorr_graph_event_wanted(void)
{
    return atomic_load_explicit(&graph_listener, memory_order_acquire) != NULL;
}

void nvtxcorr_graph_event(const char *text)
{
    nvtxcorr_graph_event_fn fn = atomic_load_explicit(&graph_listener, memory_order_acquire);
    if (fn) fn(text);
}

/* Fork: the prepare handler takes every lock of the library, so no other thread is inside a
 * critical section (or inside an NVTX tool or driver call made under one) when the process is
 * copied; the parent releases them and the child starts with fresh ones. A fork made from
 * inside one of our hooks (a tool or driver that forks while we hold a lock) takes none: the
 * lock may be this thread's own, and the child then only re-initialises them, as before. */
static __thread int fork_locked __attribute__((tls_model("initial-exec")));

void nvtxcorr_fork_mutex(void *mutex, nvtxcorr_fork_t phase)
{
    pthread_mutex_t *m = mutex;
    if (phase == NVTXCORR_FORK_PREPARE)
        pthread_mutex_lock(m);
    else if (phase == NVTXCORR_FORK_PARENT)
        pthread_mutex_unlock(m);
    else
        pthread_mutex_init(m, NULL);
}

/* The whole order (nvtxcorr.h): profile mode's steps, then the core's. Written on the
 * initialising thread before pthread_atfork registers the handlers that read it; the count is
 * published with release, so a fork on any thread sees the steps it counts. */
static nvtxcorr_fork_fn fork_steps[NVTXCORR_FORK_STEPS + 4];
static _Atomic unsigned fork_nsteps;

static void fork_append(const nvtxcorr_fork_fn *steps, unsigned n)
{
    unsigned at = atomic_load_explicit(&fork_nsteps, memory_order_relaxed);
    for (unsigned i = 0; i < n; i++)
        fork_steps[at++] = steps[i];
    atomic_store_explicit(&fork_nsteps, at, memory_order_release);
}

void nvtxcorr_on_fork(const nvtxcorr_fork_fn *steps, unsigned n)
{
    fork_append(steps, n < NVTXCORR_FORK_STEPS ? n : NVTXCORR_FORK_STEPS);
}

static void fork_all(nvtxcorr_fork_t phase)
{
    /* Acquired in this order, released and re-initialised in reverse. */
    unsigned n = atomic_load_explicit(&fork_nsteps, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        fork_steps[phase == NVTXCORR_FORK_PREPARE ? i : n - 1 - i](phase);
}

/* The depth is held while the locks are, as in every hook that takes them: a signal handler
 * that calls exit() meanwhile must not wait for them (profile/exit.c). */
static void before_fork(void)
{
    fork_locked = nvtxcorr_thread.depth == 0;
    if (fork_locked) {
        nvtxcorr_thread.depth++;
        fork_all(NVTXCORR_FORK_PREPARE);
    }
}

static void after_fork_in_parent(void)
{
    if (fork_locked) {
        fork_all(NVTXCORR_FORK_PARENT);
        nvtxcorr_thread.depth--;
    }
    fork_locked = 0;
}

static void after_fork_in_child(void)
{
    fork_all(NVTXCORR_FORK_CHILD);
    nvtxcorr_routes_refresh(); /* a refresh on another thread stopped halfway by the fork */
    if (fork_locked) nvtxcorr_thread.depth--;
    fork_locked = 0;
}

static void initialise_here(void *unused)
{
    (void)unused;
    int mode = NVTXCORR_MODE_PASSTHROUGH;
    if (!nvtxcorr_config.enabled) { /* inert: no NVTX, no output */
        nvtxcorr_set_mode(mode);
        return;
    }
    const char *why;
    int prepared =
        (nvtxcorr_config.profile || nvtxcorr_config.trace) && nvtxcorr_profile_prepare() == 0;
    int tool = nvtxcorr_emit_init();
    int profile = prepared && nvtxcorr_profile_init() == 0;
    if (tool || profile) {
        mode = profile ? nvtxcorr_profile_mode(tool) : NVTXCORR_MODE_ACTIVE;
        nvtxcorr_profiling = profile;
        why = !profile ? "enabled, NVTX tool attached"
              : tool   ? "enabled, profile mode, NVTX tool attached"
                       : "enabled, profile mode, no NVTX tool";
        if (nvtxcorr_config.labels || nvtxcorr_config.labels_inline) {
            table = nvtxcorr_labels_load(nvtxcorr_config.labels_inline, nvtxcorr_config.labels,
                                         nvtxcorr_log_label_error, NULL);
            if (table == NULL)
                nvtxcorr_log(NVTXCORR_LOG_ERROR, "label table rejected; using default labels");
        }
    } else if (atomic_load_explicit(&nvtxcorr_nvtx_refused_self, memory_order_relaxed)) {
        why = "enabled, pass-through: NVTX_INJECTION64_PATH names nvtxcorr itself";
        nvtxcorr_log(NVTXCORR_LOG_WARN,
                     "NVTX_INJECTION64_PATH names nvtxcorr itself: it takes the program's NVTX "
                     "ranges as context for profile mode, which is off here, and is no tool for "
                     "its own ranges; pass-through (for Nsight, name its tool instead)");
    } else if (nvtxcorr_config.injection) {
        why = "enabled, pass-through: the NVTX tool could not be loaded";
        nvtxcorr_log(NVTXCORR_LOG_WARN,
                     "NVTX_INJECTION64_PATH=%s could not be loaded; pass-through",
                     nvtxcorr_config.injection);
    } else {
        why = "enabled, pass-through: no NVTX tool attached (NVTX_INJECTION64_PATH unset)";
    }
    if (NVTXCORR_LOG_ON(NVTXCORR_LOG_INFO)) {
        char paths[768];
        nvtxcorr_describe_paths(paths, sizeof paths);
        nvtxcorr_log(NVTXCORR_LOG_INFO, "%s; labels: %zu rules; capture: %s; %s; version %s", why,
                     table ? nvtxcorr_labels_rule_count(table) : (size_t)0,
                     (const char *[]){"mark", "skip", "plain"}[nvtxcorr_config.capture], paths,
                     NVTXCORR_VERSION_STRING);
    }
    if (mode >= NVTXCORR_MODE_ACTIVE) {
        static const nvtxcorr_fork_fn core[] = {nvtxcorr_match_fork, nvtxcorr_graphs_fork,
                                                nvtxcorr_emit_fork, nvtxcorr_map_fork};
        fork_append(core, sizeof core / sizeof core[0]);
        pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    }
    nvtxcorr_set_mode(mode);
    if (profile) nvtxcorr_profile_started();
}

/* Loading the NVTX tool (dlopen) and the label table is deep: done on the slow-path stack,
 * except when disabled, where nothing is loaded and no stack is mapped. */
static void initialise(void)
{
    initialising = 1;
    const char *first;
    if (!nvtxcorr_config_disabled() && (first = nvtxcorr_first_copy()) != NULL) {
        /* Another copy of the library came first (resolve.c): this one reads no setting and
         * writes nothing but this line, and every hook forwards, so each launch gets the first
         * copy's one range and the process one summary. */
        nvtxcorr_warn("another copy of nvtxcorr at %s is active; this one (%s) stands aside", first,
                      nvtxcorr_this_copy());
        nvtxcorr_set_mode(NVTXCORR_MODE_PASSTHROUGH);
        initialising = 0;
        return;
    }
    nvtxcorr_config_read();
    if (nvtxcorr_config.enabled)
        nvtxcorr_on_slow_stack(initialise_here, NULL);
    else
        initialise_here(NULL);
    initialising = 0;
}

int nvtxcorr_init_slow(void)
{
    int expected = NVTXCORR_MODE_UNINIT;
    if (!initialising && atomic_compare_exchange_strong_explicit(
                             &nvtxcorr_mode, &expected, NVTXCORR_MODE_INITIALISING,
                             memory_order_acq_rel, memory_order_acquire))
        initialise();
    return atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire) >= NVTXCORR_MODE_ACTIVE;
}

int nvtxcorr_initialising_here(void)
{
    return initialising;
}
