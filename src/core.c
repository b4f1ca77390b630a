/* Enable state and lazy initialisation. Nothing runs in a constructor: the first hooked call
 * initialises, race-free (pthread_once), and decides once whether this process is ACTIVE
 * (NVTXCORR set and an NVTX tool attached) or PASSTHROUGH, in which every hook is a plain
 * forward. A hook re-entered on the initialising thread (an NVTX tool that calls CUDA while
 * it loads) passes through instead of waiting for itself. */
#include <pthread.h>

#include "labels.h"
#include "nvtxcorr.h"

_Atomic int nvtxcorr_mode;
__thread nvtxcorr_thread_t nvtxcorr_thread __attribute__((tls_model("initial-exec")));
nvtxcorr_labels_t *nvtxcorr_table;

static __thread int initialising;
static pthread_once_t once = PTHREAD_ONCE_INIT;

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

static void fork_all(nvtxcorr_fork_t phase)
{
    /* Acquired in this order, released in reverse. */
    static void (*const each[])(nvtxcorr_fork_t) = {nvtxcorr_match_fork, nvtxcorr_graphs_fork,
                                                    nvtxcorr_emit_fork, nvtxcorr_map_fork};
    enum { N = sizeof each / sizeof each[0] };
    for (int i = 0; i < N; i++)
        each[phase == NVTXCORR_FORK_PREPARE ? i : N - 1 - i](phase);
}

static void before_fork(void)
{
    fork_locked = nvtxcorr_thread.depth == 0;
    if (fork_locked) fork_all(NVTXCORR_FORK_PREPARE);
}

static void after_fork_in_parent(void)
{
    if (fork_locked) fork_all(NVTXCORR_FORK_PARENT);
    fork_locked = 0;
}

static void after_fork_in_child(void)
{
    fork_all(NVTXCORR_FORK_CHILD);
    fork_locked = 0;
}

static void initialise_here(void *unused)
{
    (void)unused;
    int mode = NVTXCORR_MODE_PASSTHROUGH;
    if (!nvtxcorr_config.enabled) { /* inert: no NVTX, no output */
        atomic_store_explicit(&nvtxcorr_mode, mode, memory_order_release);
        return;
    }
    const char *why;
    if (nvtxcorr_emit_init()) {
        mode = NVTXCORR_MODE_ACTIVE;
        why = "enabled, NVTX tool attached";
        if (nvtxcorr_config.labels || nvtxcorr_config.labels_inline) {
            nvtxcorr_table = nvtxcorr_labels_load(nvtxcorr_config.labels_inline,
                                                  nvtxcorr_config.labels, nvtxcorr_log_line, NULL);
            if (nvtxcorr_table == NULL)
                nvtxcorr_log(NVTXCORR_LOG_ERROR, "label table rejected; using default labels");
        }
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
        nvtxcorr_log(NVTXCORR_LOG_INFO, "%s; labels: %zu rules; capture: %s; %s", why,
                     nvtxcorr_table ? nvtxcorr_labels_rule_count(nvtxcorr_table) : (size_t)0,
                     (const char *[]){"mark", "skip", "plain"}[nvtxcorr_config.capture], paths);
    }
    if (mode == NVTXCORR_MODE_ACTIVE)
        pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    atomic_store_explicit(&nvtxcorr_mode, mode, memory_order_release);
}

/* Loading the NVTX tool (dlopen) and the label table is deep: done on the slow-path stack,
 * except when disabled, where nothing is loaded and no stack is mapped. */
static void initialise(void)
{
    initialising = 1;
    nvtxcorr_config_read();
    if (nvtxcorr_config.enabled)
        nvtxcorr_on_slow_stack(initialise_here, NULL);
    else
        initialise_here(NULL);
    initialising = 0;
}

int nvtxcorr_init_slow(void)
{
    if (initialising) return 0;
    pthread_once(&once, initialise);
    return atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire) == NVTXCORR_MODE_ACTIVE;
}
