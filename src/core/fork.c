/* The fork registry (fork.h): one pthread_atfork prepare handler takes every lock of the
 * library in one order, the parent releases them and the child re-initialises them. */
#include <stdatomic.h>
#include <pthread.h>
#include "fork.h"
#include "routes.h"
#include "state.h"
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

/* The whole order (fork.h): profile mode's steps, then the core's. Written on the
 * initialising thread before pthread_atfork registers the handlers that read it; the count is
 * published with release, so a fork on any thread sees the steps it counts. */
static nvtxcorr_fork_fn fork_steps[NVTXCORR_FORK_STEPS + 4]; /* profile mode's, the core's */
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

void nvtxcorr_fork_start(const nvtxcorr_fork_fn *steps, unsigned n)
{
    fork_append(steps, n < 4 ? n : 4);
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}
