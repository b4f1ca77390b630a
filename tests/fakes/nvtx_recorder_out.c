/*
 * Recording NVTX tool, output side.  Lines go into one process-wide in-memory buffer under a
 * mutex (which keeps the global order of events across threads) and reach the NVTXREC_OUT file,
 * opened for appending, only when the buffer fills and at exit: no file I/O per event.  After the
 * exit flush, late events (other libraries' destructors) are written straight through.  A forked
 * child drops what it inherited, so the parent's events are not written twice.
 */
#define _GNU_SOURCE
#include "nvtx_recorder.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#define REC_BUF_SIZE (1u << 20)

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static int rec_fd = -1;
static int rec_closed; /* the exit flush has run: write through */
static char *rec_buf;
static size_t rec_used;

static void rec_write_all(const char *p, size_t n)
{
    while (n > 0 && rec_fd >= 0) {
        ssize_t w = write(rec_fd, p, n);
        if (w <= 0) return; /* a test will notice missing lines; nothing better to do here */
        p += w;
        n -= (size_t)w;
    }
}

static void rec_flush_locked(void)
{
    rec_write_all(rec_buf, rec_used);
    rec_used = 0;
}

static void rec_atfork_child(void)
{
    rec_used = 0;
    pthread_mutex_init(&rec_lock, NULL);
}

static void rec_open_once(void)
{
    const char *path = getenv("NVTXREC_OUT");
    if (path == NULL || *path == '\0') return;
    rec_buf = malloc(REC_BUF_SIZE);
    if (rec_buf == NULL) return;
    rec_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (rec_fd >= 0) pthread_atfork(NULL, NULL, rec_atfork_child);
}

int rec_out_open(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, rec_open_once);
    return rec_fd >= 0;
}

__attribute__((destructor)) static void rec_exit_flush(void)
{
    pthread_mutex_lock(&rec_lock);
    if (rec_fd >= 0) rec_flush_locked();
    rec_closed = 1;
    pthread_mutex_unlock(&rec_lock);
}

/* ---- lines ----------------------------------------------------------------------------------- */

void rec_line_init(struct rec_line *l)
{
    l->p = l->inline_buf;
    l->len = 0;
    l->cap = sizeof(l->inline_buf);
}

static int rec_line_reserve(struct rec_line *l, size_t extra)
{
    if (l->len + extra + 1 <= l->cap) return 1;
    size_t cap = 2 * l->cap;
    while (cap < l->len + extra + 1)
        cap *= 2;
    char *p = l->p == l->inline_buf ? malloc(cap) : realloc(l->p, cap);
    if (p == NULL) return 0;
    if (l->p == l->inline_buf) memcpy(p, l->inline_buf, l->len);
    l->p = p;
    l->cap = cap;
    return 1;
}

void rec_line_str(struct rec_line *l, const char *s)
{
    size_t n = strlen(s);
    if (rec_line_reserve(l, n)) {
        memcpy(l->p + l->len, s, n);
        l->len += n;
    }
}

/* Escapes what would break the tab-separated, line-oriented format. */
void rec_line_text(struct rec_line *l, const char *s)
{
    for (; *s; s++) {
        const char *esc = *s == '\t' ? "\\t" : *s == '\n' ? "\\n" : *s == '\r' ? "\\r" : NULL;
        if (esc != NULL) {
            rec_line_str(l, esc);
        } else if (rec_line_reserve(l, 1)) {
            l->p[l->len++] = *s;
        }
    }
}

void rec_line_wtext(struct rec_line *l, const void *ws)
{
    char c[2] = {0, 0};
    for (const wchar_t *w = ws; *w; w++) {
        c[0] = *w > 0 && *w < 0x80 ? (char)*w : '?';
        rec_line_text(l, c);
    }
}

void rec_line_fmt(struct rec_line *l, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof(tmp)) rec_line_str(l, tmp);
}

void rec_line_emit(struct rec_line *l)
{
    rec_line_str(l, "\n");
    pthread_mutex_lock(&rec_lock);
    if (rec_fd >= 0) {
        if (rec_closed || l->len > REC_BUF_SIZE) {
            rec_flush_locked();
            rec_write_all(l->p, l->len);
        } else {
            if (rec_used + l->len > REC_BUF_SIZE) rec_flush_locked();
            memcpy(rec_buf + rec_used, l->p, l->len);
            rec_used += l->len;
        }
    }
    pthread_mutex_unlock(&rec_lock);
    if (l->p != l->inline_buf) free(l->p);
    rec_line_init(l);
}
