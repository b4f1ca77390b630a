/* Diagnostics that are safe inside someone else's process: one prefix, silent below the
 * configured level, formatted into a stack buffer and written with write(2) (no stdio
 * locks, no allocation), and capped so a misbehaving program cannot flood its stderr. */
#include <stdatomic.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "io.h"
#include "labels/labels.h"
#include "labels/names.h"
#include "log.h"
int nvtxcorr_log_level = NVTXCORR_LOG_ERROR;

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
    if (nvtxcorr_log_level == NVTXCORR_LOG_SILENT) return;
    va_list ap;
    va_start(ap, fmt);
    vlog("warn", fmt, ap);
    va_end(ap);
}

/* A label-table error (the loader's report callback). */
void nvtxcorr_log_label_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    char text[768];
    (void)ctx;
    nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s", nvtxcorr_label_error_text(error, text, sizeof text));
}
