/* Diagnostics that are safe inside someone else's process: one prefix, silent below the
 * configured level, formatted into a stack buffer and written with write(2) (no stdio
 * locks, no allocation), and capped so a misbehaving program cannot flood its stderr. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "labels.h"
#include "names.h"
#include "nvtxcorr.h"

enum { MESSAGE_CAP = 200 };
static _Atomic unsigned messages;

static void vlog(const char *level, const char *fmt, va_list ap)
{
    unsigned n = atomic_fetch_add_explicit(&messages, 1, memory_order_relaxed);
    if (n > MESSAGE_CAP) return;
    int saved = errno;
    char buf[1024];
    int len;
    if (n == MESSAGE_CAP) {
        len = snprintf(buf, sizeof buf, "nvtxcorr: warn: further messages suppressed\n");
    } else {
        /* Kernel names, paths and table text in a message may hold control bytes: they are
         * shown as \xNN, so one message stays one line and drives no terminal. */
        char raw[sizeof buf];
        vsnprintf(raw, sizeof raw, fmt, ap);
        len = snprintf(buf, sizeof buf, "nvtxcorr: %s: ", level);
        len += (int)nvtxcorr_escape_controls(buf + len, sizeof buf - (size_t)len - 1, raw);
        buf[len++] = '\n';
    }
    nvtxcorr_write_full(STDERR_FILENO, buf, (size_t)len);
    errno = saved;
}

void nvtxcorr_log(int level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (!NVTXCORR_LOG_ON(level)) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(names[level], fmt, ap);
    va_end(ap);
}

void nvtxcorr_warn(const char *fmt, ...)
{
    if (nvtxcorr_config.log_level == NVTXCORR_LOG_SILENT) return;
    va_list ap;
    va_start(ap, fmt);
    vlog("warn", fmt, ap);
    va_end(ap);
}

int nvtxcorr_write_full(int fd, const void *buf, size_t len)
{
    sigset_t xfsz, old, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    /* One already pending (the program's own) is left for the program. */
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    const char *p = buf;
    int err = 0;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            err = w < 0 ? errno : EIO;
            break;
        }
        p += w, len -= (size_t)w;
    }
    if (err == EFBIG && !was_pending) {
        /* The kernel sends it to this thread (send_sig: thread-directed), where it is blocked:
         * take it back before the mask is restored. sigtimedwait is not on POSIX's list of
         * async-signal-safe functions, but glibc's is the bare rt_sigtimedwait system call. */
        struct timespec zero = {0, 0};
        sigtimedwait(&xfsz, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

/* A label-table error (the loader's report callback). */
void nvtxcorr_log_label_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    char text[768];
    (void)ctx;
    nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s", nvtxcorr_label_error_text(error, text, sizeof text));
}
