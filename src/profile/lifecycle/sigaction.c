/* Profile mode's signal handler stands in for SIG_DFL, and the program never sees it.
 *
 * For SIGTERM, SIGINT and SIGHUP, when the program's disposition is SIG_DFL, exit.c installs
 * its own handler (write the outputs, then the default action). A program that installs a
 * handler and keeps the previous one to chain to (call it if it is a function; re-raise with
 * SIG_DFL if it was the default) must get SIG_DFL back, as without nvtxcorr: given our handler
 * it would call it, and our default action would kill it in the middle of the shutdown it was
 * doing. So sigaction() and signal() are interposed: wherever the real disposition is our
 * handler, the program is told SIG_DFL; a program that sets SIG_DFL gets our handler
 * installed instead, so that a signal it re-raises still writes the outputs before the
 * default action. Everything else, and every other signal, and every call before profile mode
 * starts (or when it never does), is forwarded unchanged.
 *
 * Not interposed: sigset, sysv_signal, bsd_signal (rare; they report our handler as it is,
 * and exit.c's handler, called by a program's handler that chains to it, writes the outputs
 * and returns without the default action). A program that calls rt_sigaction by system call
 * sees our handler too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "core/attributes.h"
#include "core/resolve.h"
#include "sigaction.h"
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn _Atomic real_fn;
static _Atomic unsigned managed; /* bit per signal that exit.c stands in for */
static void (*_Atomic standin)(int);
/* Window signals (window.c): the program is told SIG_DFL where ours is installed, but a
 * program that sets SIG_DFL gets SIG_DFL: the signal is its own again. */
static void (*_Atomic toggles[32])(int);

/* The next definition after this library: glibc's, or another interposer's. A sanitizer
 * runtime preloaded before us resolves its own sigaction to ours, and may call it before it
 * is initialised: nothing here is instrumented. */
NVTXCORR_NO_SANITIZE int nvtxcorr_prof_real_sigaction(int sig, const struct sigaction *act,
                                                      struct sigaction *old)
{
    sigaction_fn f = atomic_load_explicit(&real_fn, memory_order_acquire);
    if (NVTXCORR_UNLIKELY(f == NULL)) {
        f = (sigaction_fn)nvtxcorr_real_dlsym(RTLD_NEXT, "sigaction");
        if (f == NULL) {
            errno = ENOSYS;
            return -1;
        }
        atomic_store_explicit(&real_fn, f, memory_order_release);
    }
    return f(sig, act, old);
}

void nvtxcorr_prof_stand_in(unsigned signals, void (*handler)(int))
{
    atomic_store(&standin, handler);
    atomic_fetch_or(&managed, signals);
}

/* handler NULL: the signal is the program's alone again (a forked child has no windows). */
void nvtxcorr_prof_stand_in_toggle(int sig, void (*handler)(int))
{
    if (sig <= 0 || sig >= 32) return;
    atomic_store(&toggles[sig], handler);
    if (handler)
        atomic_fetch_or(&managed, 1u << sig);
    else
        atomic_fetch_and(&managed, ~(1u << sig));
}

NVTXCORR_NO_SANITIZE static void report_default(struct sigaction *old)
{
    memset(old, 0, sizeof *old);
    old->sa_handler = SIG_DFL;
    sigemptyset(&old->sa_mask);
}

NVTXCORR_NO_SANITIZE static int is_default(const struct sigaction *act)
{
    return !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
}

NVTXCORR_EXPORT NVTXCORR_NO_SANITIZE int sigaction(int sig, const struct sigaction *act,
                                                   struct sigaction *old)
{
    void (*ours)(int) = atomic_load_explicit(&standin, memory_order_relaxed);
    if (NVTXCORR_LIKELY(sig <= 0 || sig >= 32 ||
                        !(atomic_load_explicit(&managed, memory_order_acquire) & (1u << sig))))
        return nvtxcorr_prof_real_sigaction(sig, act, old);
    struct sigaction prev, mine;
    void (*toggle)(int) = atomic_load_explicit(&toggles[sig], memory_order_relaxed);
    if (toggle) ours = toggle;
    if (act && is_default(act) && !toggle) { /* SIG_DFL: ours, which ends in the default action */
        memset(&mine, 0, sizeof mine);
        mine.sa_handler = ours;
        sigemptyset(&mine.sa_mask);
        sigaddset(&mine.sa_mask, SIGTERM);
        sigaddset(&mine.sa_mask, SIGINT);
        sigaddset(&mine.sa_mask, SIGHUP);
        mine.sa_flags = SA_RESTART;
        act = &mine;
    }
    int r = nvtxcorr_prof_real_sigaction(sig, act, &prev);
    if (r == 0 && old) {
        if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == ours)
            report_default(old);
        else
            *old = prev;
    }
    return r;
}

/* signal() keeps glibc's own semantics (BSD: the handler stays, system calls restart unless
 * siginterrupt said otherwise): forwarded, with our handler reported as SIG_DFL; only setting
 * SIG_DFL on a managed signal goes through sigaction above, which installs ours. */
typedef __sighandler_t (*signal_fn)(int, __sighandler_t);
static signal_fn _Atomic real_signal_fn;

NVTXCORR_NO_SANITIZE static __sighandler_t real_signal(int sig, __sighandler_t handler)
{
    signal_fn f = atomic_load_explicit(&real_signal_fn, memory_order_acquire);
    if (NVTXCORR_UNLIKELY(f == NULL)) {
        f = (signal_fn)nvtxcorr_real_dlsym(RTLD_NEXT, "signal");
        if (f == NULL) {
            errno = ENOSYS;
            return SIG_ERR;
        }
        atomic_store_explicit(&real_signal_fn, f, memory_order_release);
    }
    return f(sig, handler);
}

NVTXCORR_EXPORT NVTXCORR_NO_SANITIZE __sighandler_t signal(int sig, __sighandler_t handler)
{
    if (NVTXCORR_LIKELY(sig <= 0 || sig >= 32 ||
                        !(atomic_load_explicit(&managed, memory_order_acquire) & (1u << sig))))
        return real_signal(sig, handler);
    if (handler == SIG_DFL && !atomic_load_explicit(&toggles[sig], memory_order_relaxed)) {
        struct sigaction act, old;
        memset(&act, 0, sizeof act);
        act.sa_handler = SIG_DFL;
        if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
        return old.sa_handler;
    }
    __sighandler_t old = real_signal(sig, handler);
    return old == atomic_load_explicit(&standin, memory_order_relaxed) ||
                   old == atomic_load_explicit(&toggles[sig], memory_order_relaxed)
               ? SIG_DFL
               : old;
}
