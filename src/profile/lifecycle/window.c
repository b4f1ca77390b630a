/* Profile mode's windows (NVTXCORR_WINDOW): a server that never exits gets one summary per
 * window instead of one at exit. A window opens and closes at cuProfilerStart/Stop
 * (cudaProfilerApi), at each NVTXCORR_WINDOW_SIGNAL (signal: a toggle), every N seconds
 * (every:N), or around an application NVTX range (nvtx:<glob>[@domain], through program
 * context's range listener: nvtxcorr must be the NVTX tool); delay:S ignores triggers (and starts
 * every:) S seconds into the run, count:N stops after N windows.
 *
 * Outside a window the core is in NVTXCORR_MODE_PROFILE_IDLE (or ACTIVE when an NVTX tool is
 * attached): a launch costs what it costs with profile mode off, and is recorded nowhere.
 * Opening a window stores the mode and rewrites the entry stubs' routes (nvtxcorr_set_mode:
 * atomics and pthread_sigmask, async-signal-safe, so the signal handler does it itself);
 * closing it stores the idle mode and leaves the rest to a helper thread: it cuts
 * (reads every site's records, summary.c), then writes the window's summary from the
 * difference between this cut and the previous one. A window cannot reopen before its
 * predecessor is cut (an open waits for the helper, bounded, 5 s; a close never waits), so no
 * launch is counted in two windows or in none; a launch in flight when its window closes
 * counts in the next one. Nothing is written by a hook or a signal handler.
 *
 * A window's program-context rows are its own too: each cut also sums every thread's
 * (context, site) cells (context_stats.c), and the window's rows are the difference. With a
 * trace, each window is a ProfilerStep#N span in it (trace.c). GPU time too: a launch's GPU
 * work counts in its launch's window, even when it ends after the window closed; the helper
 * waits for it (a bounded time) before the window's summary is written (gpu.c). */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "context/context.h"
#include "core/config.h"
#include "core/routes.h"
#include "core/state.h"
#include "core/window_spec.h"
#include "labels/hash.h"
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "profile/base/process.h"
#include "profile/counting/context_stats.h"
#include "profile/counting/stats.h"
#include "profile/counting/windows.h"
#include "profile/gpu/gpu.h"
#include "profile/output/metrics.h"
#include "profile/output/otlp.h"
#include "profile/output/summary.h"
#include "profile/output/trace.h"
#include "sigaction.h"
#include "window.h"
/* OPENING and STOPPING: an opener or a closer is storing its timestamp and reason, between
 * taking the state and publishing it. Nobody closes a window before it is OPEN, and the helper
 * cuts only a CLOSING one, so a window's start is never written after its end nor its cut
 * made before its end is known (under TSan, a signal handler preempted between the state
 * change and the timestamp made both happen). The transient states last a few stores; they
 * are waited for a bounded time (settle). */
enum { CLOSED, OPENING, OPEN, STOPPING, CLOSING, FINISHED };
static _Atomic int state = CLOSED;
static _Atomic int want_open;    /* a reason to open as soon as the pending cut is made */
static _Atomic unsigned cut;     /* windows cut */
static _Atomic int open_reason;  /* what opened the window now open */
static _Atomic int close_reason; /* what closed it (or "exit") */
static _Atomic uint64_t start_ns, end_ns;
static _Atomic uint64_t start_ticks, end_ticks; /* the same in prof_now ticks, for the trace */
static int idle_mode = NVTXCORR_MODE_PROFILE_IDLE;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* the helper's cut and write */
static _Atomic unsigned wakes; /* bumped to wake the helper (a futex word) */
static _Atomic int exiting;    /* the exit path wants the helper's lock: the helper stops */
static prof_snap_t *snaps[2];  /* the last cut and the one before, by parity of `cut` */
static uint64_t own_at_cut[2];
static int signal_ours;

static const char *const reasons[] = {"", "cudaProfilerApi", "signal", "every", "nvtx", "exit"};
enum { REASON_EXIT = 5 };

/* The mode to start in: between windows. */
int nvtxcorr_prof_window_mode(int tool)
{
    idle_mode = tool ? NVTXCORR_MODE_ACTIVE : NVTXCORR_MODE_PROFILE_IDLE;
    return nvtxcorr_prof_windows() ? idle_mode : NVTXCORR_MODE_PROFILE;
}

static uint64_t since_start_ns(void)
{
    return nvtxcorr_prof_realtime_ns() - nvtxcorr_prof_process.start_ns;
}

/* Futexes rather than a mutex and a condition: the program's side of a window (a close, an
 * open waiting for a cut) may run in a signal handler (a toggle, a handler's NVTX range), which
 * may not take a lock the thread it interrupted holds; a futex call is a plain system call. */
static void futex_wait_ns(_Atomic unsigned *word, unsigned seen, uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    syscall(SYS_futex, (void *)word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

static void futex_wake_all(_Atomic unsigned *word)
{
    syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void wake_helper(void)
{
    atomic_fetch_add(&wakes, 1);
    futex_wake_all(&wakes);
}

/* Until window n is cut (or the helper has stopped), a bounded 5 s. Async-signal-safe. */
static void wait_for_cut(unsigned n)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        unsigned c = atomic_load(&cut);
        if (c >= n || atomic_load(&state) == FINISHED || atomic_load(&exiting)) return;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t spent =
            (uint64_t)(now.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(now.tv_nsec - t0.tv_nsec);
        if (spent >= 5000000000u) return;
        futex_wait_ns(&cut, c, 5000000000u - spent);
    }
}

/* Whether another window may open: count: not reached, and delay: passed (every: starts its
 * first window after the delay itself). */
static int may_open(void)
{
    unsigned n = atomic_load(&nvtxcorr_prof_windows_opened);
    if (nvtxcorr_config.window_count && n >= nvtxcorr_config.window_count) return 0;
    return nvtxcorr_config.window_kind == NVTXCORR_WINDOW_EVERY ||
           since_start_ns() >= nvtxcorr_config.window_delay_ns;
}

/* Async-signal-safe: atomics, and nvtxcorr_set_mode's pthread_sigmask. */
static void open_window(int reason)
{
    if (!may_open()) return;
    unsigned n = atomic_load(&nvtxcorr_prof_windows_opened);
    int expected = CLOSED;
    if (atomic_compare_exchange_strong(&state, &expected, OPENING)) {
        atomic_store(&nvtxcorr_prof_windows_opened, n + 1);
        atomic_store(&open_reason, reason);
        atomic_store(&start_ns, nvtxcorr_prof_realtime_ns());
        atomic_store(&start_ticks, prof_now());
        nvtxcorr_set_mode(NVTXCORR_MODE_PROFILE);
        atomic_store(&state, OPEN);
    } else if (expected == STOPPING || expected == CLOSING) {
        atomic_store(&want_open, reason);
    }
}

/* Async-signal-safe: the state once no opener or closer is between its two steps, waiting a
 * bounded time (such a one is another thread a few stores from done, or one this thread's
 * signal handler interrupted, which the bound lets go of: about half a second). */
static int settle(void)
{
    int s = atomic_load(&state);
    for (int spins = 0; (s == OPENING || s == STOPPING) && spins < 10000; spins++) {
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
        s = atomic_load(&state);
    }
    return s;
}

/* Async-signal-safe. A window still OPENING is waited for (settle); past the bound the close
 * is dropped, never made before the start. */
static int close_window(int reason)
{
    int expected = OPEN;
    while (!atomic_compare_exchange_strong(&state, &expected, STOPPING)) {
        if (expected == OPENING && settle() == OPEN) {
            expected = OPEN;
            continue;
        }
        if (expected == STOPPING || expected == CLOSING)
            atomic_store(&want_open, 0); /* a toggle took its reopen back */
        return 0;
    }
    nvtxcorr_set_mode(idle_mode);
    atomic_store(&end_ns, nvtxcorr_prof_realtime_ns());
    atomic_store(&end_ticks, prof_now());
    atomic_store(&close_reason, reason);
    atomic_store(&state, CLOSING);
    wake_helper(); /* the cut is made at once, not at the helper's next poll */
    return 1;
}

/* Opens a window for the program (cuProfilerStart, an NVTX range). The close before it did not
 * wait for its cut; if that cut is still to be made, this waits for it (bounded), so that the
 * program's launches from now on are in the new window and none in the closed one or in
 * none. So only windows opened back to back wait, each for the cut before it, which costs what
 * the program's sites and (context, site) pairs are. */
static void open_after_cut(int reason)
{
    int now = settle();
    if (now == STOPPING || now == CLOSING) wait_for_cut(atomic_load(&nvtxcorr_prof_windows_opened));
    open_window(reason);
}

/* cuProfilerStart (1) / cuProfilerStop (0), from the driver hook (profile.h). */
void nvtxcorr_profile_profiler_api(int start)
{
    if (!nvtxcorr_prof_windows() || nvtxcorr_config.window_kind != NVTXCORR_WINDOW_API) return;
    if (start)
        open_after_cut(NVTXCORR_WINDOW_API);
    else
        close_window(NVTXCORR_WINDOW_API);
}

/* nvtx:<range>[@domain], from program context's range listener (context.h), on the program's
 * thread inside its NVTX call: the window is open while any matching range is (the outermost
 * push opens it, the pop that closes the last one closes it). A pop names its range only in
 * domains program context records, so each thread keeps, per domain, one bit per open range:
 * whether it matched (64 deep; deeper ranges never match). */
static _Atomic int nvtx_open;
typedef struct nvtx_stack {
    uint64_t domain; /* hash of the name, 0: free */
    unsigned depth;
    uint64_t matched;
} nvtx_stack_t;
static __thread nvtx_stack_t nvtx_stacks[8];

/* The thread's stack for domain; a free slot is taken for it on a push (create), and given
 * back when the domain's last open range is popped, so that a thread may use any number of
 * domains one after another (at most 8 with ranges open at once are followed). */
static nvtx_stack_t *stack_of(const char *domain, int create)
{
    uint64_t h = nvtxcorr_hash_str(domain ? domain : "") | 1;
    nvtx_stack_t *free_slot = NULL;
    for (int i = 0; i < 8; i++) {
        if (nvtx_stacks[i].domain == h) return &nvtx_stacks[i];
        if (nvtx_stacks[i].domain == 0 && free_slot == NULL) free_slot = &nvtx_stacks[i];
    }
    if (!create || free_slot == NULL) return NULL;
    free_slot->domain = h;
    free_slot->depth = 0;
    free_slot->matched = 0;
    return free_slot;
}

static void on_range(int push, const char *domain, const char *message)
{
    const char *want = nvtxcorr_config.window_domain;
    if (want && strcmp(domain ? domain : "", want) != 0) return;
    nvtx_stack_t *st = stack_of(domain, push);
    if (st == NULL) return; /* a pop in a domain with nothing open here, or no room */
    if (push) {
        int match =
            st->depth < 64 && message && fnmatch(nvtxcorr_config.window_range, message, 0) == 0;
        if (st->depth < 64)
            st->matched = (st->matched & ~(1ull << st->depth)) | ((uint64_t)match << st->depth);
        st->depth++;
        if (match && atomic_fetch_add(&nvtx_open, 1) == 0) open_after_cut(NVTXCORR_WINDOW_NVTX);
        return;
    }
    st->depth--;
    int matched = st->depth < 64 && ((st->matched >> st->depth) & 1);
    if (st->depth == 0) st->domain = 0; /* the slot is free again */
    if (!matched) return;
    if (atomic_fetch_sub(&nvtx_open, 1) == 1) close_window(NVTXCORR_WINDOW_NVTX);
}

/* Signal windows: each signal toggles the state wanted, kept as a count of toggles (odd:
 * open). The handler makes the window so at once where it can (CLOSED or OPEN); while a closed
 * window waits for its cut (STOPPING, CLOSING) a toggle only flips what is wanted, and the
 * helper makes it so once the cut is made. So an odd number of toggles during a cut reopens
 * the window and an even number leaves it closed; toggles handled in any order, on any thread,
 * never leave the window the other way round from their count. A toggle that would open while
 * no window may (delay:, count:) is not counted, as other triggers are ignored then. */
static _Atomic unsigned toggles;

/* Async-signal-safe: the window made open or closed as the toggles want, where the state is
 * settled; a pending cut leaves it to the helper. */
static void follow_toggles(void)
{
    for (int round = 0; round < 4; round++) { /* again if a nested handler toggled meanwhile */
        int want = atomic_load(&toggles) & 1, now = settle();
        if (want && now == CLOSED)
            open_window(NVTXCORR_WINDOW_SIGNAL);
        else if (!want && now == OPEN)
            close_window(NVTXCORR_WINDOW_SIGNAL);
        else
            return;
    }
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    unsigned t = atomic_load(&toggles);
    do {
        if (!(t & 1) && !may_open()) {
            errno = saved;
            return;
        }
    } while (!atomic_compare_exchange_weak(&toggles, &t, t + 1));
    follow_toggles();
    errno = saved;
}

static prof_snap_t *snap_for(unsigned n)
{
    prof_snap_t **s = &snaps[n & 1];
    if (*s == NULL) *s = nvtxcorr_prof_zalloc(sizeof(prof_snap_t) * PROF_MAX_SITES);
    return *s;
}

/* Under `lock`: window `index`'s cut, written from the difference with the previous one. The
 * reopen (want_open) happens between the cut and the write. The trace gets the window as a
 * span, unless this is a signal handler at exit, which may have interrupted this thread
 * writing its own trace buffer (trace.c). */
static void cut_and_write(int reason, int at_exit, int from_signal, int back_to_back)
{
    unsigned index = atomic_load(&cut) + 1;
    prof_snap_t *cur = snap_for(index), *base = index > 1 ? snaps[(index - 1) & 1] : NULL;
    uint32_t nsites = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_acquire);
    if (cur)
        for (uint32_t i = 0; i < nsites; i++)
            nvtxcorr_prof_site_read(
                atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire), &cur[i]);
    own_at_cut[index & 1] = atomic_load_explicit(&nvtxcorr_prof_own_ns, memory_order_relaxed);
    if (nvtxcorr_context_injected()) nvtxcorr_prof_ctx_cut(); /* its rows, as of this cut */
    prof_window_t w = {index, reasons[reason], atomic_load(&start_ns), atomic_load(&end_ns)};
    uint64_t from = atomic_load(&start_ticks), to = atomic_load(&end_ticks);
    atomic_store(&cut, index);
    if (atomic_load(&state) == CLOSING) atomic_store(&state, at_exit ? FINISHED : CLOSED);
    futex_wake_all(&cut); /* an opener waiting for this cut */
    if (!at_exit) {
        if (nvtxcorr_config.window_kind == NVTXCORR_WINDOW_SIGNAL) {
            follow_toggles();
        } else {
            int again = atomic_exchange(&want_open, 0);
            if (again) open_window(again);
        }
    }
    if (back_to_back) { /* every: the next window starts where this one ends, now */
        atomic_store(&start_ns, w.end_ns);
        atomic_store(&start_ticks, to);
        atomic_store(&nvtxcorr_prof_windows_opened, index + 1);
    }
    if (!from_signal) nvtxcorr_prof_trace_window(index, w.reason, from, to);
    /* Its GPU work in, before its write: launches go on meanwhile, in the next window. */
    nvtxcorr_prof_gpu_window_settle(index, at_exit);
    if (cur == NULL) { /* out of memory: the window is lost, the program is not */
        nvtxcorr_prof_gpu_window_done(index);
        return;
    }
    nvtxcorr_prof_snap_cur = cur;
    nvtxcorr_prof_snap_base = base;
    nvtxcorr_prof_window_own_base = index > 1 ? own_at_cut[(index - 1) & 1] : 0;
    nvtxcorr_prof_window_now = &w;
    nvtxcorr_prof_ctx_use_cut(nvtxcorr_context_injected(), index);
    nvtxcorr_prof_summary_write_to(nvtxcorr_prof_process.profile_path);
    /* The run's counters as of this cut: the textfile; the push only from the helper. */
    if (nvtxcorr_prof_metrics_window(at_exit) && !at_exit) nvtxcorr_prof_otlp_push();
    nvtxcorr_prof_ctx_use_cut(0, 0);
    nvtxcorr_prof_window_now = NULL;
    nvtxcorr_prof_snap_cur = nvtxcorr_prof_snap_base = NULL; /* a later summary: the whole run */
    nvtxcorr_prof_window_own_base = 0;
    if (!at_exit) nvtxcorr_prof_gpu_window_done(index);
}

static void *helper(void *unused)
{
    (void)unused;
    uint64_t every = nvtxcorr_config.window_every_ns, next = 0;
    if (nvtxcorr_config.window_kind == NVTXCORR_WINDOW_EVERY)
        next = atomic_load(&state) == OPEN
                   ? atomic_load(&start_ns) + every
                   : nvtxcorr_prof_process.start_ns + nvtxcorr_config.window_delay_ns;
    while (!atomic_load(&exiting)) {
        /* A close wakes this thread (futex); it also looks every 20 ms, and at every: times. */
        uint64_t wait_ns = 20 * 1000 * 1000, now = nvtxcorr_prof_realtime_ns();
        if (next && next > now && next - now < wait_ns) wait_ns = next - now;
        unsigned seen = atomic_load(&wakes); /* a wake after this load ends the wait */
        if (atomic_load(&state) != CLOSING && (!next || next > now) && !atomic_load(&exiting))
            futex_wait_ns(&wakes, seen, wait_ns);
        pthread_mutex_lock(&lock);
        if (atomic_load(&state) == FINISHED || atomic_load(&exiting)) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        now = nvtxcorr_prof_realtime_ns();
        if (next && now >= next) {
            /* every: back to back, so the mode stays: the cut itself is the boundary, and the
             * next window starts where this one ends. The last one (count:) closes. */
            unsigned n = atomic_load(&nvtxcorr_prof_windows_opened);
            if (atomic_load(&state) != OPEN) {
                open_window(NVTXCORR_WINDOW_EVERY);
            } else if (nvtxcorr_config.window_count && n >= nvtxcorr_config.window_count) {
                close_window(NVTXCORR_WINDOW_EVERY);
            } else {
                uint64_t ticks = prof_now();
                atomic_store(&end_ns, now);
                atomic_store(&end_ticks, ticks);
                atomic_store(&close_reason, NVTXCORR_WINDOW_EVERY);
                cut_and_write(NVTXCORR_WINDOW_EVERY, 0, 0, 1);
            }
            while (next <= now)
                next += every;
        }
        if (atomic_load(&state) == CLOSING) cut_and_write(atomic_load(&close_reason), 0, 0, 0);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

/* Called once profile mode is on (nvtxcorr_profile_init). */
void nvtxcorr_prof_window_start(void)
{
    if (!nvtxcorr_prof_windows()) return;
    if (nvtxcorr_config.window_kind == NVTXCORR_WINDOW_NVTX &&
        nvtxcorr_context_on_range(on_range) != 0) {
        nvtxcorr_prof_say("error",
                          "NVTXCORR_WINDOW=nvtx: no room for another range listener; "
                          "one summary at exit",
                          (char *)NULL);
        nvtxcorr_config.window_kind = NVTXCORR_WINDOW_NONE;
        nvtxcorr_set_mode(NVTXCORR_MODE_PROFILE);
        return;
    }
    if (nvtxcorr_config.window_kind == NVTXCORR_WINDOW_SIGNAL) {
        int sig = nvtxcorr_config.window_signal;
        struct sigaction old, ours;
        if (nvtxcorr_prof_real_sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL) {
            memset(&ours, 0, sizeof ours);
            ours.sa_handler = on_signal;
            sigemptyset(&ours.sa_mask);
            ours.sa_flags = SA_RESTART;
            if (nvtxcorr_prof_real_sigaction(sig, &ours, NULL) == 0) {
                nvtxcorr_prof_stand_in_toggle(sig, on_signal);
                signal_ours = 1;
            }
        }
        if (!signal_ours) {
            char num[24];
            num[nvtxcorr_fmt_u64(num, (uint64_t)sig)] = 0;
            nvtxcorr_prof_say("warn", "NVTXCORR_WINDOW=signal: the program already handles signal ",
                              num, "; no windows (one summary at exit)", (char *)NULL);
            nvtxcorr_config.window_kind = NVTXCORR_WINDOW_NONE;
            nvtxcorr_set_mode(NVTXCORR_MODE_PROFILE);
            return;
        }
    }
    /* every: the first window opens now (or after delay:, by the helper), so no launch
     * before the helper's first turn is missed. */
    if (nvtxcorr_config.window_kind == NVTXCORR_WINDOW_EVERY && !nvtxcorr_config.window_delay_ns)
        open_window(NVTXCORR_WINDOW_EVERY);
    int err = nvtxcorr_prof_helper_thread(helper);
    if (err != 0) {
        nvtxcorr_prof_say("error", "NVTXCORR_WINDOW: no helper thread (",
                          nvtxcorr_prof_strerror(err), "); one summary at exit", (char *)NULL);
        nvtxcorr_config.window_kind = NVTXCORR_WINDOW_NONE;
        nvtxcorr_set_mode(NVTXCORR_MODE_PROFILE);
    }
}

/* A forked child has no helper thread: it has no windows, and writes one summary for its
 * whole run at exit, as without NVTXCORR_WINDOW (profile.c's child step). The fork may have
 * come while the parent's helper was writing a window: what that write was reading (its cut,
 * the window) is not the child's. */
void nvtxcorr_prof_window_after_fork(void)
{
    nvtxcorr_prof_window_now = NULL;
    nvtxcorr_prof_snap_cur = nvtxcorr_prof_snap_base = NULL;
    nvtxcorr_prof_window_own_base = 0;
    if (!nvtxcorr_prof_windows()) return;
    if (signal_ours) { /* the window signal is the program's again: its default, unless the
                        * program has set a handler of its own since */
        int sig = nvtxcorr_config.window_signal;
        struct sigaction now, dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        if (nvtxcorr_prof_real_sigaction(sig, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
            now.sa_handler == on_signal)
            nvtxcorr_prof_real_sigaction(sig, &dfl, NULL);
        nvtxcorr_prof_stand_in_toggle(sig, NULL);
        signal_ours = 0;
    }
    nvtxcorr_config.window_kind = NVTXCORR_WINDOW_NONE;
    atomic_store(&state, FINISHED);
    nvtxcorr_set_mode(NVTXCORR_MODE_PROFILE);
}

/* At exit (exit.c, in place of the whole-run summary): the window still open, or closed and
 * not yet cut, is written now, by this thread; the helper stops. The helper is told first
 * (exiting): it takes its lock again at once after each cut, so a lock that is only tried
 * would rarely find it free while windows are cut back to back. Tried until a deadline, not a
 * count of sleeps: signals (a storm of window toggles) cut each sleep short. Async-signal-safe:
 * the exit may be a signal handler's. */
void nvtxcorr_prof_window_exit(int from_signal)
{
    int locked = 0;
    atomic_store(&exiting, 1);
    nvtxcorr_prof_otlp_abort(); /* a push to a slow collector gives up */
    wake_helper();
    struct timespec now, until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 5;
    while (!(locked = pthread_mutex_trylock(&lock) == 0)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > until.tv_sec ||
            (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec))
            break;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!locked) {
        nvtxcorr_prof_say("warn", "profile: the window helper is stuck; last window not written",
                          (char *)NULL);
        return;
    }
    int reason = REASON_EXIT;
    if (settle() == CLOSING)
        reason = atomic_load(&close_reason);
    else if (!close_window(REASON_EXIT))
        reason = 0;
    if (reason) cut_and_write(reason, 1, from_signal, 0);
    if (atomic_load(&nvtxcorr_prof_windows_opened) == 0)
        nvtxcorr_prof_say("warn", "profile: no window opened (NVTXCORR_WINDOW); no summary written",
                          (char *)NULL);
    atomic_store(&state, FINISHED);
    pthread_mutex_unlock(&lock);
}
