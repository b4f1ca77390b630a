/* The CUPTI thread (cupti_thread.h). Every CUPTI call that can block, outside the two per
 * launch, runs there: the start (callbacks, cuptiActivityEnable) and every flush. A CUPTI that
 * never returns then holds up that thread only: the program waits for it a bounded time
 * (START_WAIT_MS at the first launch, FLUSH_WAIT_MS at exit) and goes on without the GPU time,
 * the summary saying why. The push and pop of the external id around each launch stay on the
 * launching thread: a thread hop per launch would cost more than the launch, and CUPTI keeps
 * that stack per thread.
 *
 * The signal path cannot flush itself either: CUPTI and the record processing allocate and
 * lock, which a signal handler must not. It wakes the thread (sem_post is async-signal-safe),
 * which flushes and settles the records, and waits for it a bounded time. If the thread the
 * signal interrupted holds a lock the flush needs (it was inside CUPTI, or delivering a
 * buffer), the flush cannot finish, and the summary says the GPU time is partial instead of
 * the process hanging. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cupti.h"
#include "cupti_buffers.h"
#include "cupti_launch.h"
#include "cupti_load.h"
#include "cupti_note.h"
#include "cupti_thread.h"
#include "gpu.h"
#include "profile/base/clock.h"
#include "session.h"
#ifdef NVTXCORR_HAVE_CUPTI
enum { START_WAIT_MS = 5000, FLUSH_WAIT_MS = 3000 };
enum { STARTING, STARTED, START_FAILED, START_ABANDONED };
static _Atomic int start_state;
static sem_t flush_request;
static _Atomic int flush_done, flush_settles, abandoned;
static _Atomic int want_exit_flush, want_window_flush, window_flush_done;

/* Why CUPTI did not start, as the CUPTI thread found it (copied into the note by the thread
 * that waited for it, unless that one gave up waiting and wrote its own reason). */
static char start_note[PROF_CUPTI_NOTE_SIZE];

/* Activity timestamps on the trace's clock, so GPU events line up with launches. */
static uint64_t CUPTIAPI timestamp_now(void)
{
    return prof_ticks_ns(prof_now() - nvtxcorr_prof_clock.origin) + 1;
}

/* Graph memcpy and memset nodes: their kinds are taken where CUPTI gives them. */
static const CUpti_ActivityKind optional[] = {CUPTI_ACTIVITY_KIND_MEMCPY,
                                              CUPTI_ACTIVITY_KIND_MEMSET};

/* Activity kinds: the operations, and with external correlation its records and the API
 * records they are made for. */
enum { MAX_KINDS = 8 };
static CUpti_ActivityKind kinds_on[MAX_KINDS];
static size_t nkinds_on;

/* Enables one kind; on failure writes why to start_note and disables every kind enabled. */
static int enable_kind(CUpti_ActivityKind kind, const char *name)
{
    CUptiResult r = nvtxcorr_prof_cupti_api.cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
        if (nkinds_on < MAX_KINDS) kinds_on[nkinds_on++] = kind;
        return 0;
    }
    while (nkinds_on > 0)
        nvtxcorr_prof_cupti_api.cuptiActivityDisable(kinds_on[--nkinds_on]);
    if (nvtxcorr_prof_cupti_api.cuptiGetLastError)
        nvtxcorr_prof_cupti_api.cuptiGetLastError(); /* clear CUPTI's sticky error */
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        nvtxcorr_prof_cupti_note_in(
            start_note,
            "another CUPTI client is active (Nsight Systems, Nsight Compute, "
            "torch.profiler?): ",
            nvtxcorr_prof_cupti_result_name(r), NULL);
    else {
        nvtxcorr_prof_cupti_note_in(start_note, "cuptiActivityEnable(", name, ") failed: ");
        size_t n = strlen(start_note);
        snprintf(start_note + n, sizeof start_note - n, "%s", nvtxcorr_prof_cupti_result_name(r));
    }
    return -1;
}

/* External correlation's API records: the launch entry points' alone where CUPTI can
 * (cupti_launch.c), else every call's. */
static int enable_api_records(void)
{
    if (nvtxcorr_prof_cupti_launch_api_records()) return 0;
    return enable_kind(CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER") ||
           enable_kind(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME");
}

/* The CUPTI calls of the start, on the CUPTI thread; a failure's reason goes to start_note.
 * The timestamp callback is registered here, once per process: windows never register it
 * again (PyTorch found that registering it again corrupts the next session's first records). */
static int enable_cupti(void)
{
    CUptiResult r = nvtxcorr_prof_cupti_register_buffers();
    if (r != CUPTI_SUCCESS) {
        nvtxcorr_prof_cupti_note_in(start_note, "cuptiActivityRegisterCallbacks: ",
                                    nvtxcorr_prof_cupti_result_name(r), NULL);
        return -1;
    }
    if (nvtxcorr_prof_cupti_api.cuptiActivityRegisterTimestampCallback == NULL ||
        nvtxcorr_prof_cupti_api.cuptiActivityRegisterTimestampCallback(timestamp_now) !=
            CUPTI_SUCCESS) {
        uint64_t ours = prof_ticks_ns(prof_now() - nvtxcorr_prof_clock.origin);
        uint64_t theirs = 0;
        if (nvtxcorr_prof_cupti_api.cuptiGetTimestamp &&
            nvtxcorr_prof_cupti_api.cuptiGetTimestamp(&theirs) == CUPTI_SUCCESS)
            nvtxcorr_prof_gpu_set_clock_offset(theirs - ours);
    } else {
        nvtxcorr_prof_gpu_set_clock_offset(1);
    }
    if (enable_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL") != 0) return -1;
    if (!nvtxcorr_prof_cupti_correlate() &&
        (enable_kind(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION") != 0 ||
         enable_api_records() != 0))
        return -1;
    for (size_t i = 0; i < sizeof optional / sizeof *optional; i++)
        if (nvtxcorr_prof_cupti_api.cuptiActivityEnable(optional[i]) == CUPTI_SUCCESS) {
            if (nkinds_on < MAX_KINDS) kinds_on[nkinds_on++] = optional[i];
        } else if (nvtxcorr_prof_cupti_api.cuptiGetLastError) {
            nvtxcorr_prof_cupti_api.cuptiGetLastError();
        }
    return 0;
}

/* Every record CUPTI holds, delivered before the summary is written. The buffers may be
 * given back on CUPTI's own thread after the flush returns: wait for them, a bounded time. */
static void flush_and_wait(void)
{
    nvtxcorr_prof_gpu_close();
    /* wait for what was lent before now, not after */
    unsigned g = nvtxcorr_prof_cupti_next_generation();
    nvtxcorr_prof_cupti_api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (int i = 0; i < 400 && nvtxcorr_prof_cupti_lent_before(g); i++) {
        struct timespec ts = {0, 5 * 1000 * 1000}; /* 2 s in all */
        nanosleep(&ts, NULL);
        if (i % 20 == 19)
            nvtxcorr_prof_cupti_api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    if (nvtxcorr_prof_cupti_lent_before(g))
        nvtxcorr_prof_gpu_set_partial("CUPTI did not give back every buffer within 2 s");
}

/* A window's flush (NVTXCORR_WINDOW): what CUPTI has completed, delivered, not closing
 * anything; a record of work still running comes with a later flush. */
static void flush_window(void)
{
    unsigned g = nvtxcorr_prof_cupti_next_generation();
    nvtxcorr_prof_cupti_api.cuptiActivityFlushAll(0);
    for (int i = 0; i < 200 && nvtxcorr_prof_cupti_lent_before(g); i++) {
        struct timespec ts = {0, 5 * 1000 * 1000}; /* 1 s in all */
        nanosleep(&ts, NULL);
    }
}

static void *cupti_thread(void *arg)
{
    (void)arg;
    int r = enable_cupti(), expected = STARTING;
    if (!atomic_compare_exchange_strong(&start_state, &expected, r == 0 ? STARTED : START_FAILED)) {
        /* Too late: the program went on without GPU time. No record is wanted any more. */
        while (r == 0 && nkinds_on > 0)
            nvtxcorr_prof_cupti_api.cuptiActivityDisable(kinds_on[--nkinds_on]);
        return NULL;
    }
    if (r != 0) return NULL;
    for (;;) {
        while (sem_wait(&flush_request) != 0)
            ;
        if (atomic_exchange(&want_window_flush, 0)) {
            flush_window();
            atomic_store(&window_flush_done, 1);
        }
        if (!atomic_exchange(&want_exit_flush, 0)) continue;
        flush_and_wait();
        if (atomic_load(&flush_settles)) nvtxcorr_prof_gpu_finished(nvtxcorr_prof_gpu_finish(0));
        atomic_store(&flush_done, 1);
    }
    return NULL;
}

/* Waits, at most ms milliseconds of CLOCK_MONOTONIC, until *flag != value; returns whether it
 * changed. Async-signal-safe (clock_gettime, nanosleep). */
static int wait_while(_Atomic int *flag, int value, int ms)
{
    struct timespec now, step = {0, 500 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t end = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 + ms;
    while (atomic_load(flag) == value) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >= end) return 0;
        nanosleep(&step, NULL);
    }
    return 1;
}

/* On the window helper: CUPTI's completed records delivered (by its thread), waited for at
 * most 2 s; 0 when they were. */
static int flush_for_window(void)
{
    if (nvtxcorr_prof_gpu_on != PROF_GPU_COLLECTING || atomic_load(&start_state) != STARTED ||
        nvtxcorr_prof_gpu_closing() || atomic_load(&abandoned))
        return -1;
    atomic_store(&window_flush_done, 0);
    atomic_store(&want_window_flush, 1);
    sem_post(&flush_request);
    return wait_while(&window_flush_done, 0, 2000) ? 0 : -1;
}

/* CUPTI's start, libcupti loaded (cupti.c): its calls made on the CUPTI thread (8 MiB of stack
 * reserved: CUPTI's first enable is deep; only the pages touched cost memory), waited for a
 * bounded time. */
enum { START_STACK = 8 << 20 };
int nvtxcorr_prof_cupti_thread_start(const char **why)
{
    pthread_t t;
    pthread_attr_t attr;
    sigset_t all, old;
    if (sem_init(&flush_request, 0, 0) != 0) {
        *why = "no semaphore for CUPTI's thread";
        return -1;
    }
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, START_STACK);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals never land there */
    int created = pthread_create(&t, &attr, cupti_thread, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (!created) {
        *why = "no thread for CUPTI could be started";
        return -1;
    }
    wait_while(&start_state, STARTING, START_WAIT_MS);
    int expected = STARTING;
    if (atomic_compare_exchange_strong(&start_state, &expected, START_ABANDONED)) {
        atomic_store(&abandoned, 1);
        *why = "CUPTI did not start within 5 s (cuptiActivityRegisterCallbacks or "
               "cuptiActivityEnable did not return); GPU time abandoned";
        return -1;
    }
    if (expected == START_FAILED) {
        *why = start_note;
        return -1;
    }
    nvtxcorr_prof_gpu_on_flush_window(flush_for_window);
    return 0;
}

void nvtxcorr_prof_gpu_flush(int from_signal)
{
    if (nvtxcorr_prof_gpu_on != PROF_GPU_COLLECTING) return;
    nvtxcorr_prof_gpu_close(); /* later launches push nothing */
    if (atomic_load(&start_state) != STARTED) {
        nvtxcorr_prof_gpu_set_partial("CUPTI not flushed: its thread is gone");
        return;
    }
    atomic_store(&flush_settles, from_signal);
    atomic_store(&flush_done, 0);
    atomic_store(&want_exit_flush, 1);
    sem_post(&flush_request);
    if (wait_while(&flush_done, 0, FLUSH_WAIT_MS)) return;
    atomic_store(&abandoned, 1);
    nvtxcorr_prof_gpu_set_partial(
        from_signal ? "terminated by a signal: CUPTI could not be flushed within 3 s; records "
                      "still in its buffers are not counted"
                    : "cuptiActivityFlushAll did not return within 3 s at exit: GPU time "
                      "abandoned there; records still in CUPTI's buffers are not counted");
}

int nvtxcorr_prof_gpu_abandoned(void)
{
    return atomic_load(&abandoned);
}
#else
void nvtxcorr_prof_gpu_flush(int from_signal)
{
    (void)from_signal;
}
int nvtxcorr_prof_gpu_abandoned(void)
{
    return 0;
}
#endif
