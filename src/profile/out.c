/* Formatting for profile mode's outputs and messages, safe in a signal handler: text goes
 * into a caller-owned buffer and out with write(2); no malloc, no stdio, no locale. The
 * summary is written from the SIGTERM/SIGINT/SIGHUP handler with exactly this code. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static void write_all(int fd, const char *p, size_t n, int *failed)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            *failed = 1;
            return;
        }
        p += w, n -= (size_t)w;
    }
}

void nvtxcorr_out_flush(prof_out_t *o)
{
    if (o->len && !o->failed) write_all(o->fd, o->buf, o->len, &o->failed);
    o->len = 0;
}

void nvtxcorr_out_mem(prof_out_t *o, const char *s, size_t n)
{
    while (n > 0) {
        if (o->len == sizeof o->buf) nvtxcorr_out_flush(o);
        size_t k = sizeof o->buf - o->len;
        if (k > n) k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k, s += k, n -= k;
    }
}

void nvtxcorr_out_str(prof_out_t *o, const char *s)
{
    nvtxcorr_out_mem(o, s, strlen(s));
}

/* Two digits at a time: the trace formats several numbers per launch. */
size_t nvtxcorr_fmt_u64(char *buf, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                "31323334353637383940414243444546474849505152535455565758596061"
                                "62636465666768697071727374757677787980818283848586878889909192"
                                "93949596979899";
    char tmp[20], *p = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, pairs + 2 * r, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - p);
    memcpy(buf, p, n);
    return n;
}

void nvtxcorr_out_u64(prof_out_t *o, uint64_t v)
{
    char buf[20];
    nvtxcorr_out_mem(o, buf, nvtxcorr_fmt_u64(buf, v));
}

/* The escaped body of a JSON string (no quotes): ", \ and control characters. Bytes >= 0x80
 * pass through: names and labels are UTF-8. */
size_t nvtxcorr_fmt_json(char *buf, size_t size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[6];
        size_t k = 0;
        if (c == '"' || c == '\\')
            e[k++] = '\\', e[k++] = (char)c;
        else if (c == '\n')
            e[k++] = '\\', e[k++] = 'n';
        else if (c == '\t')
            e[k++] = '\\', e[k++] = 't';
        else if (c < 0x20)
            e[0] = '\\', e[1] = 'u', e[2] = '0', e[3] = '0', e[4] = hex[c >> 4], e[5] = hex[c & 15],
            k = 6;
        else
            e[k++] = (char)c;
        if (n + k > size) break;
        memcpy(buf + n, e, k);
        n += k;
    }
    return n;
}

void nvtxcorr_out_json(prof_out_t *o, const char *s)
{
    if (s == NULL) {
        nvtxcorr_out_str(o, "null");
        return;
    }
    char buf[512];
    nvtxcorr_out_mem(o, "\"", 1);
    while (*s) { /* in pieces that cannot split an escape */
        size_t take = 0;
        while (s[take] && take < 80)
            take++;
        char piece[81];
        memcpy(piece, s, take);
        piece[take] = 0;
        nvtxcorr_out_mem(o, buf, nvtxcorr_fmt_json(buf, sizeof buf, piece));
        s += take;
    }
    nvtxcorr_out_mem(o, "\"", 1);
}

void nvtxcorr_out_csv(prof_out_t *o, const char *s)
{
    if (s == NULL) return;
    if (strpbrk(s, ",\"\n\r") == NULL) {
        nvtxcorr_out_str(o, s);
        return;
    }
    nvtxcorr_out_mem(o, "\"", 1);
    for (; *s; s++) {
        if (*s == '"') nvtxcorr_out_mem(o, "\"", 1);
        nvtxcorr_out_mem(o, s, 1);
    }
    nvtxcorr_out_mem(o, "\"", 1);
}

void nvtxcorr_prof_say(const char *level, ...)
{
    char line[1024];
    size_t n = 0;
    int saved = errno, failed = 0;
    va_list ap;
    va_start(ap, level);
    const char *parts[3] = {"nvtxcorr: ", level, ": "};
    for (int i = 0;; i++) {
        const char *s = i < 3 ? parts[i] : va_arg(ap, const char *);
        if (s == NULL) break;
        size_t k = strlen(s);
        if (k > sizeof line - 1 - n) k = sizeof line - 1 - n;
        memcpy(line + n, s, k);
        n += k;
    }
    va_end(ap);
    line[n++] = '\n';
    write_all(STDERR_FILENO, line, n, &failed);
    errno = saved;
}

/* strerror is not async-signal-safe (locale): the reasons a file cannot be created. */
const char *nvtxcorr_prof_strerror(int err)
{
    switch (err) {
    case EEXIST:
        return "exists";
    case ENOENT:
        return "no such directory (it is not created)";
    case ENOTDIR:
        return "a component of the path is not a directory";
    case EACCES:
    case EPERM:
        return "permission denied";
    case EROFS:
        return "read-only file system";
    case ENOSPC:
        return "no space left on device";
    case EDQUOT:
        return "disk quota exceeded";
    case ELOOP:
        return "is a symbolic link (not followed)";
    case EISDIR:
        return "is a directory";
    case ENAMETOOLONG:
        return "name too long";
    case EMFILE:
    case ENFILE:
        return "too many open files";
    default:
        return "cannot be created";
    }
}

/* Heapsort: qsort may allocate, and the summary is also written from a signal handler. */
static void sift(uint32_t *v, size_t i, size_t n, int (*before)(uint32_t, uint32_t))
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && before(v[c], v[c + 1])) c++;
        if (!before(v[i], v[c])) return;
        uint32_t t = v[i];
        v[i] = v[c], v[c] = t, i = c;
    }
}

void nvtxcorr_prof_sort(uint32_t *v, size_t n, int (*before)(uint32_t a, uint32_t b))
{
    for (size_t i = n / 2; i-- > 0;)
        sift(v, i, n, before);
    for (size_t end = n; end-- > 1;) {
        uint32_t t = v[0];
        v[0] = v[end], v[end] = t;
        sift(v, 0, end, before);
    }
}
