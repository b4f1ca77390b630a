/* GPU time in profile mode: loads CUPTI at run time and drives its activity API. This file
 * decides whether and when CUPTI starts and loads it; the rest is the adapter's other files':
 * cupti_launch.c ties kernels to launches, cupti_thread.c enables CUPTI and flushes it on a
 * thread of its own, cupti_buffers.c lends CUPTI its buffers and reads their records,
 * cupti_note.c keeps why GPU time is missing or partial, cupti_load.c finds libcupti.
 *
 * Only with NVTXCORR_PROFILE (not trace-only), only without an NVTX tool (a tool is Nsight,
 * which owns CUPTI), and never in the range path. libcupti is dlopened, never linked: the
 * library keeps no NEEDED entry on it. Where it is looked for, first found wins:
 * NVTXCORR_CUPTI_LIBRARY (only that, when set); $CUDA_HOME then /usr/local/cuda (lib64, then
 * extras/CUPTI/lib64); the nvidia-cuda-cupti wheel next to a loaded libcudart; the plain
 * soname (cupti_load.c). NVTXCORR_GPU=0 turns it off.
 *
 * When CUPTI is missing or refuses (another subscriber, a driver it cannot attach to, any
 * error), the run goes on with the CPU-side summary: one warning per process, and the reason
 * in the summary's gpu_time_note. A forked child does not inherit CUPTI's threads or state:
 * it reports no GPU time, and says so at its first launch. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "core/config.h"
#include "core/emit.h"
#include "core/slowstack.h"
#include "core/state.h"
#include "cupti.h"
#include "cupti_buffers.h"
#include "cupti_launch.h"
#include "cupti_load.h"
#include "cupti_note.h"
#include "cupti_thread.h"
#include "gpu.h"
#include "profile/base/out.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "session.h"
static int gpu_tried, warn_at_launch;
/* CUPTI starts at the first launch, not at initialisation: initialisation can run inside
 * cudart's own start-up (its cuGetProcAddress calls) or a library constructor, where enabling
 * CUPTI (threads, driver calls, callbacks into the runtime) could deadlock. `start_pending`
 * is set at initialisation; the first launching thread to claim `start_claimed` starts it,
 * and launches on other threads meanwhile wait for it, a bounded time. */
static _Atomic int start_pending;
static _Atomic int start_claimed;

#ifdef NVTXCORR_HAVE_CUPTI
/* The loading part of CUPTI's start, on the launching thread: dlopen runs libcupti's ELF
 * constructors only, and stays on the thread that may hold the loader lock (a first launch
 * from a library constructor), where another thread's dlopen would wait for it. */
static int load_cupti(void)
{
    char tried[2048] = "";
    void *h = nvtxcorr_prof_cupti_open(tried, sizeof tried);
    if (h == NULL) {
        nvtxcorr_prof_cupti_note("libcupti not found or not loadable (tried ",
                                 tried[0] ? tried : "nothing", ")");
        return -1;
    }
    const char *missing = nvtxcorr_prof_cupti_resolve(h);
    if (missing != NULL) {
        nvtxcorr_prof_cupti_note("libcupti lacks ", missing, "");
        return -1;
    }
    nvtxcorr_prof_cupti_buffers_start();
    const nvtxcorr_profile_site_t *not_hooked = nvtxcorr_prof_op_site("[not hooked]");
    if (not_hooked != NULL) nvtxcorr_prof_not_hooked_site = not_hooked->id;
    if (nvtxcorr_prof_gpu_init() != 0) {
        nvtxcorr_prof_cupti_note("out of memory", NULL, NULL);
        return -1;
    }
    return 0;
}

/* CUPTI's start: libcupti loaded here, its calls made on the CUPTI thread (cupti_thread.c),
 * waited for a bounded time. */
static int start_cupti(void)
{
    nvtxcorr_prof_cupti_ids_start();
    if (load_cupti() != 0) return -1;
    const char *why = NULL;
    if (nvtxcorr_prof_cupti_thread_start(&why) == 0) return 0;
    nvtxcorr_prof_cupti_note(why, NULL, NULL);
    return -1;
}
#else
static int start_cupti(void)
{
    nvtxcorr_prof_cupti_note("built without CUPTI headers", NULL, NULL);
    return -1;
}
#endif

/* The exit's step once CUPTI has started (cupti.h), set at profile mode's start. */
static void (*_Atomic on_start)(void);

void nvtxcorr_prof_cupti_on_start(void (*fn)(void))
{
    atomic_store_explicit(&on_start, fn, memory_order_release);
}

static void warn_unavailable(void)
{
    nvtxcorr_prof_say("warn", "GPU time unavailable: ", nvtxcorr_prof_cupti_note_shown(),
                      (char *)NULL);
}

/* At profile mode's start (the core's initialisation, on the slow-path stack). */
void nvtxcorr_prof_gpu_start(void)
{
    gpu_tried = 1;
    const char *off = nvtxcorr_config.gpu_off;
    if (!nvtxcorr_config.profile) {
        nvtxcorr_prof_cupti_note("trace-only mode", NULL, NULL);
    } else if (off) {
        nvtxcorr_prof_cupti_note("NVTXCORR_GPU=", off, NULL);
    } else if (nvtxcorr_domain != NULL) {
        nvtxcorr_prof_cupti_note("an NVTX tool is attached (Nsight owns CUPTI)", NULL, NULL);
    } else {
        nvtxcorr_prof_cupti_note("no kernel or graph launch: CUPTI was not started", NULL, NULL);
        start_pending = 1;
        nvtxcorr_prof_gpu_on = PROF_GPU_AT_NEXT_LAUNCH; /* the first launch starts it */
    }
}

/* CUPTI's load (dlopen of a 4 MB library and its constructors) is deeper than a program
 * thread's stack may be: it runs on a stack of its own, 1 MiB reserved (only the pages touched
 * cost memory); the enable runs on the CUPTI thread's own stack. */
enum { LOAD_STACK = 1 << 20 };
static void start_cupti_here(void *result)
{
    *(int *)result = start_cupti();
}

/* At the first launch: CUPTI's start, by one thread. Never while a stream capture is open
 * (anywhere: in the global capture mode a call CUPTI makes on this thread would invalidate
 * another thread's capture); a later launch tries again. */
static void start_at_launch(void)
{
    if (atomic_load_explicit(&nvtxcorr_captures_open, memory_order_relaxed)) return;
    if (atomic_exchange(&start_claimed, 1)) {
        /* Another thread is starting it: wait for it, a bounded time (2 s; libcupti is large
         * to load), so that launches made meanwhile are measured too. Bounded, so a starter
         * that needs something this thread holds delays it once instead of deadlocking. */
        for (int i = 0; i < 20000 && atomic_load(&start_pending); i++) {
            struct timespec ts = {0, 100 * 1000};
            nanosleep(&ts, NULL);
        }
        return;
    }
    int r = -1;
    nvtxcorr_prof_cupti_note_begin_start(); /* the outcome: none when CUPTI starts */
    nvtxcorr_on_fresh_stack(LOAD_STACK, start_cupti_here, &r);
    nvtxcorr_prof_cupti_note_show_start();
    if (r == 0) {
        void (*started)(void) = atomic_load_explicit(&on_start, memory_order_acquire);
        if (started) started();
        nvtxcorr_prof_gpu_on = PROF_GPU_COLLECTING;
    } else {
        nvtxcorr_prof_gpu_on = PROF_GPU_OFF;
        warn_unavailable();
    }
    start_pending = 0;
}

/* A forked child: CUPTI's worker threads and buffers stayed in the parent. Its locks are
 * re-initialised by the fork steps, before this runs. */
void nvtxcorr_prof_gpu_after_fork(void)
{
    if (!gpu_tried) return;
    if (start_pending && !atomic_load(&start_claimed)) return; /* the child's launch starts it */
    if (start_pending) /* the parent's start was under way: not in this process */
        nvtxcorr_prof_cupti_note("forked child: CUPTI was starting in the parent", NULL, NULL);
    start_pending = 0;
    int was_on = nvtxcorr_prof_gpu_on == PROF_GPU_COLLECTING;
    nvtxcorr_prof_gpu_on = PROF_GPU_OFF;
    if (was_on)
        nvtxcorr_prof_cupti_note("forked child: CUPTI's state does not follow fork", NULL, NULL);
    /* Said again by a child that profiles (launches), not by one that only execs. */
    const char *shown = nvtxcorr_prof_cupti_note_shown();
    warn_at_launch = nvtxcorr_config.profile && shown[0] && strncmp(shown, "NVTXCORR_GPU=", 13) &&
                     strncmp(shown, "an NVTX tool", 12);
    nvtxcorr_prof_gpu_on = warn_at_launch ? PROF_GPU_AT_NEXT_LAUNCH : PROF_GPU_OFF;
}

/* A launch while nvtxcorr_prof_gpu_on is PROF_GPU_AT_NEXT_LAUNCH: CUPTI still to start, or a forked
 * child that has not yet said it has no GPU time. */
void nvtxcorr_prof_gpu_first_launch(void)
{
    if (start_pending) {
        start_at_launch();
        return;
    }
    nvtxcorr_prof_gpu_on = PROF_GPU_OFF;
    if (warn_at_launch) {
        warn_at_launch = 0;
        warn_unavailable();
    }
}
