/* Diagnostics that are safe inside someone else's process: one prefix, silent below the
 * configured level, formatted into a stack buffer and written with write(2) (no stdio
 * locks, no allocation), and capped so a misbehaving program cannot flood its stderr. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "labels.h"
#include "names.h"
#include "nvtxcorr.h"

enum { MESSAGE_CAP = 200 };
static _Atomic unsigned messages;

void nvtxcorr_log(int level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (!NVTXCORR_LOG_ON(level)) return;
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
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        len = snprintf(buf, sizeof buf, "nvtxcorr: %s: ", names[level]);
        len += (int)nvtxcorr_escape_controls(buf + len, sizeof buf - (size_t)len - 1, raw);
        buf[len++] = '\n';
    }
    for (ssize_t off = 0; off < len;) {
        ssize_t w = write(STDERR_FILENO, buf + off, (size_t)(len - off));
        if (w <= 0 && errno != EINTR) break;
        if (w > 0) off += w;
    }
    errno = saved;
}

/* A label-table error (the loader's report callback). */
void nvtxcorr_log_label_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    char text[768];
    (void)ctx;
    nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s", nvtxcorr_label_error_text(error, text, sizeof text));
}
