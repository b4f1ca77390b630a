/* When profile mode writes its outputs: once, when the process ends.
 *
 *  - return from main or exit() from any thread: the library's ELF destructor, which runs
 *    after the program's atexit handlers and static destructors, so launches made there
 *    count too;
 *  - SIGTERM, SIGINT, SIGHUP while the program's disposition is SIG_DFL: our handler stands
 *    in for it (sigaction.c: the program is told SIG_DFL, and setting SIG_DFL installs ours),
 *    writes, restores SIG_DFL and re-raises, so the process ends with the same signal and
 *    status as without nvtxcorr. A handler the program installed (before or after us) is never
 *    replaced or wrapped: the program decides what its signals do. One that chains to the
 *    previous disposition sees SIG_DFL, as without nvtxcorr: if it re-raises with SIG_DFL,
 *    ours writes and ends the process; if it carries on, the outputs are written at exit.
 *    Called by a program's handler (which found ours through a path sigaction.c does not
 *    cover), ours writes and returns: the program's handler runs on and decides;
 *  - _exit and _Exit (Python's os._exit, multiprocessing's children, servers' workers): the
 *    outputs are written first, as at exit(), on the signal path where this thread is inside
 *    nvtxcorr (a program's handler may call _exit, which is async-signal-safe). Not in a
 *    vfork child, which shares the parent's memory and ran no fork handler (its pid is not the
 *    one nvtxcorr knows): it ends at once, as its exec failing requires;
 *  - SIGKILL and other fatal signals: nothing (the trace, streamed to disk, still holds every
 *    event flushed so far).
 *
 * exit() may be called from the program's own signal handler, on a thread the signal caught
 * inside nvtxcorr (its depth is nonzero: a launch, a hook, CUPTI's buffer callbacks, the fork
 * handlers), holding a lock that this thread will never release. The exit path then takes
 * the signal path below: no lock is waited for (the GPU lock is only tried, map writers skip,
 * handle_map.c), CUPTI is flushed by the helper thread with a bounded wait, and not at all when
 * this thread was inside GPU record processing (gpu.c), whose lock the flush needs.
 *
 * The signal path is async-signal-safe: the summary and the trace are formatted by out.c
 * (own integer and string formatting into static buffers, write(2)), the records are read
 * with relaxed atomic loads and no lock is taken, the paths were expanded beforehand, and the
 * system calls used (open, write, close, read of /proc/self/cmdline, fstat, lseek, fcntl,
 * ftruncate, rename, unlink, uname, sigaction, pthread_sigmask, sigpending, raise,
 * clock_gettime, nanosleep) are on POSIX's async-signal-safe list; sigtimedwait, after a write
 * refused at the file-size limit, is not, but is a bare system call in glibc. A second signal
 * arriving on the same thread while the first is being handled is blocked until the process
 * ends. A signal that arrives on another thread while the summary is being written (by the
 * first signal's handler, or the normal exit path) waits for it, a bounded 5 s, and then ends
 * the process without a second summary: the file is whole. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "core/attributes.h"
#include "core/config.h"
#include "core/resolve.h"
#include "core/state.h"
#include "exit.h"
#include "profile/base/process.h"
#include "profile/counting/windows.h"
#include "profile/gpu/cupti.h"
#include "profile/gpu/gpu.h"
#include "profile/gpu/session.h"
#include "profile/output/metrics.h"
#include "profile/output/summary.h"
#include "profile/output/trace.h"
#include "sigaction.h"
#include "window.h"
static _Atomic int started, finished, gpu_flushed;
static _Atomic int written; /* finish() is done */
static _Atomic long writer; /* the thread running finish() */
typedef void (*exit_fn)(int);
static _Atomic exit_fn real_exit, real_Exit; /* the next _exit and _Exit (a sanitizer's) */

/* At start-up and in a forked child: this process's own facts, and nothing written yet. */
void nvtxcorr_prof_process_reset(void)
{
    nvtxcorr_prof_facts_reset();
    nvtxcorr_prof_metrics_reset();
    atomic_store(&finished, 0);
    atomic_store(&gpu_flushed, 0);
    atomic_store(&written, 0);
    atomic_store(&writer, 0);
}

/* GPU time: CUPTI's buffers are flushed before anything is written, and held (the lock of
 * gpu.c) until the summary is out. On a normal exit the flush is made by an atexit handler,
 * while libcupti (dlopened after us, so finalised before our destructor) is still intact;
 * launches made after it (later atexit handlers, destructors) count on the CPU side only. */
static void flush_gpu(int from_signal)
{
    if (nvtxcorr_prof_gpu_on != PROF_GPU_COLLECTING || atomic_exchange(&gpu_flushed, 1)) return;
    if (nvtxcorr_prof_gpu_held_here())
        nvtxcorr_prof_gpu_set_partial("the process ended while this thread was processing GPU "
                                      "records: CUPTI not flushed");
    else
        nvtxcorr_prof_gpu_flush(from_signal);
}

/* Whether this thread is inside nvtxcorr: exit() was called from a signal handler that
 * interrupted it there (or from inside a hooked call), so it may hold one of our locks. */
static int inside_nvtxcorr(void)
{
    return nvtxcorr_thread.depth != 0;
}

static void gpu_at_exit(void)
{
    if (!atomic_load(&finished)) flush_gpu(inside_nvtxcorr());
}

static void finish(int from_signal)
{
    if (!atomic_load(&started) || atomic_exchange(&finished, 1)) return;
    int saved = errno;
    atomic_store(&writer, syscall(SYS_gettid));
    flush_gpu(from_signal);
    /* After an abandoned flush CUPTI's thread may be stuck delivering a buffer, under the
     * lock: only tried then, as from a signal handler. */
    int locked = nvtxcorr_prof_gpu_on == PROF_GPU_COLLECTING
                     ? nvtxcorr_prof_gpu_finish(from_signal || nvtxcorr_prof_gpu_abandoned())
                     : 0;
    /* The window still open, if any, before the trace ends: its span goes in the trace. */
    if (nvtxcorr_config.profile && nvtxcorr_prof_windows()) nvtxcorr_prof_window_exit(from_signal);
    nvtxcorr_prof_trace_finish(from_signal);
    if (nvtxcorr_config.profile && !nvtxcorr_prof_windows()) nvtxcorr_prof_summary_write();
    if (nvtxcorr_config.profile) nvtxcorr_prof_metrics_exit();
    nvtxcorr_prof_gpu_finished(locked);
    atomic_store(&written, 1);
    errno = saved;
}

__attribute__((destructor)) static void at_process_exit(void)
{
    finish(inside_nvtxcorr());
}

static void on_signal(int sig)
{
    struct sigaction now;
    if (nvtxcorr_prof_real_sigaction(sig, NULL, &now) == 0 && now.sa_handler != on_signal) {
        finish(1); /* chained to by the program's handler, which decides what happens next */
        return;
    }
    finish(1);
    /* Another thread is writing the summary: let it finish (unless it is this thread, which
     * this handler interrupted), a bounded time. */
    int saved = errno;
    for (int i = 0; i < 1000 && atomic_load(&started) && !atomic_load(&written) &&
                    atomic_load(&writer) != syscall(SYS_gettid);
         i++) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    errno = saved;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    nvtxcorr_prof_real_sigaction(sig, &dfl, NULL);
    raise(sig); /* pending until this handler returns, then the default action */
}

/* _exit and _Exit: the outputs, then the next definition (glibc's, or a sanitizer's, found
 * at start-up: dlsym is not async-signal-safe), else the system call itself. */
__attribute__((noreturn)) static void end_now(int status, exit_fn next)
{
    if (atomic_load(&started) && syscall(SYS_getpid) == nvtxcorr_prof_process.pid)
        finish(inside_nvtxcorr());
    if (next) next(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

NVTXCORR_EXPORT void _exit(int status)
{
    end_now(status, atomic_load(&real_exit));
}

NVTXCORR_EXPORT void _Exit(int status)
{
    end_now(status, atomic_load(&real_Exit));
}

static void gpu_started(void);

void nvtxcorr_prof_exit_init(void)
{
    nvtxcorr_prof_cupti_on_start(gpu_started);
    atomic_store(&real_exit, (exit_fn)nvtxcorr_real_dlsym(RTLD_NEXT, "_exit"));
    atomic_store(&real_Exit, (exit_fn)nvtxcorr_real_dlsym(RTLD_NEXT, "_Exit"));
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    struct sigaction ours, old;
    memset(&ours, 0, sizeof ours);
    ours.sa_handler = on_signal;
    sigemptyset(&ours.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&ours.sa_mask, sigs[i]);
    ours.sa_flags = SA_RESTART;
    unsigned mask = 0;
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        mask |= 1u << sigs[i];
        if (nvtxcorr_prof_real_sigaction(sigs[i], NULL, &old) == 0 &&
            !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
            nvtxcorr_prof_real_sigaction(sigs[i], &ours, NULL);
    }
    nvtxcorr_prof_stand_in(mask, on_signal);
    atomic_store(&started, 1);
}

static void gpu_started(void)
{
    atexit(gpu_at_exit); /* after libcupti's load, so it runs before libcupti is finalised */
}
