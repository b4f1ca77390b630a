/* Formatting for profile mode's outputs and messages, safe in a signal handler: text goes
 * into a caller-owned buffer and out with write(2); no malloc, no stdio, no locale. The
 * summary is written from the SIGTERM/SIGINT/SIGHUP handler with exactly this code. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/io.h"
#include "labels/utf8.h"
#include "out.h"
int nvtxcorr_prof_fd_is(int fd, uint64_t dev, uint64_t ino)
{
    struct stat st;
    PROF_FD_RACE_BEGIN();
    int is =
        fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
    PROF_FD_RACE_END();
    return is;
}

void nvtxcorr_out_open(prof_out_t *o, int fd, int owned)
{
    struct stat st;
    o->fd = fd;
    o->failed = o->err = 0;
    o->html = 0;
    o->len = 0;
    o->owned = owned && fstat(fd, &st) == 0;
    o->dev = o->owned ? (uint64_t)st.st_dev : 0;
    o->ino = o->owned ? (uint64_t)st.st_ino : 0;
}

void nvtxcorr_out_flush(prof_out_t *o)
{
    if (o->len && !o->failed) {
        if (o->owned && !nvtxcorr_prof_fd_is(o->fd, o->dev, o->ino)) {
            o->err = EBADF;
        } else {
            PROF_FD_RACE_BEGIN(); /* an owned one may be closed meanwhile (out.h) */
            o->err = nvtxcorr_write_full(o->fd, o->buf, o->len);
            PROF_FD_RACE_END();
        }
        o->failed = o->err != 0;
    }
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

/* One character of s, escaped for a JSON string, into e (at most 6 bytes); *used: the bytes
 * of s it took. Well-formed UTF-8 passes through; a byte that is not (a kernel name is
 * whatever bytes the program gave the driver) is written as \u00XX, its Latin-1 reading, so
 * the document stays valid JSON and distinct names stay distinct. */
static size_t json_char(const char *s, char *e, size_t *used)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char c = (unsigned char)*s;
    size_t k = nvtxcorr_utf8_len(s);
    *used = k ? k : 1;
    if (c == '"' || c == '\\') {
        e[0] = '\\', e[1] = (char)c;
        return 2;
    }
    if (c == '\n' || c == '\t') {
        e[0] = '\\', e[1] = c == '\n' ? 'n' : 't';
        return 2;
    }
    if (c < 0x20 || k == 0) {
        memcpy(e, "\\u00", 4);
        e[4] = hex[c >> 4], e[5] = hex[c & 15];
        return 6;
    }
    memcpy(e, s, k);
    return k;
}

/* The escaped body of a JSON string (no quotes), cut at a whole character to fit size. */
size_t nvtxcorr_prof_join(char *buf, size_t size, size_t len, const char *const *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (const char *c = parts[i]; c && *c && len + 1 < size; c++)
            buf[len++] = *c;
    buf[len] = 0;
    return len;
}

size_t nvtxcorr_fmt_json(char *buf, size_t size, const char *s)
{
    size_t n = 0, used;
    char e[6];
    while (*s) {
        size_t k = json_char(s, e, &used);
        if (n + k > size) break;
        memcpy(buf + n, e, k);
        n += k, s += used;
    }
    return n;
}

void nvtxcorr_out_json(prof_out_t *o, const char *s)
{
    if (s == NULL) {
        nvtxcorr_out_str(o, "null");
        return;
    }
    nvtxcorr_out_mem(o, "\"", 1);
    size_t used;
    char e[6];
    while (*s) {
        if (*s == '<' && o->html)
            nvtxcorr_out_mem(o, "\\u003c", 6), used = 1;
        else
            nvtxcorr_out_mem(o, e, json_char(s, e, &used));
        s += used;
    }
    nvtxcorr_out_mem(o, "\"", 1);
}

/* A CSV field, quoted when it holds a comma, a quote or a control character (a line break).
 * CSV has no escapes: a byte that is not well-formed UTF-8 becomes U+FFFD, so the file stays
 * UTF-8 text. */
void nvtxcorr_out_csv(prof_out_t *o, const char *s)
{
    if (s == NULL) return;
    int quote = strpbrk(s, ",\"") != NULL;
    for (const char *c = s; *c && !quote; c++)
        quote = (unsigned char)*c < 0x20;
    if (quote) nvtxcorr_out_mem(o, "\"", 1);
    while (*s) {
        size_t k = nvtxcorr_utf8_len(s);
        if (k == 0)
            nvtxcorr_out_mem(o, "\xEF\xBF\xBD", 3), k = 1;
        else if (*s == '"')
            nvtxcorr_out_mem(o, "\"\"", 2);
        else
            nvtxcorr_out_mem(o, s, k);
        s += k;
    }
    if (quote) nvtxcorr_out_mem(o, "\"", 1);
}

size_t nvtxcorr_text_safe(char *buf, size_t size, const char *s)
{
    size_t n = 0;
    while (*s && n + 4 < size) {
        size_t k = nvtxcorr_utf8_len(s);
        unsigned char c = (unsigned char)*s;
        int control = c < 0x20 || c == 0x7f || (c == 0xC2 && (unsigned char)s[1] < 0xA0);
        if (k == 0 || control) { /* C0, DEL, C1 (U+0080..U+009F): a terminal acts on those */
            buf[n++] = '?';
            s += k ? k : 1;
            continue;
        }
        memcpy(buf + n, s, k);
        n += k, s += k;
    }
    buf[n] = 0;
    return n;
}

/* ---- the text tables' layout (out.h) ---- */
/* Columns are UTF-8 code points. */
static size_t text_cols(const char *s)
{
    size_t cols = 0;
    for (; *s; s++)
        cols += ((unsigned char)*s & 0xC0) != 0x80;
    return cols;
}

/* The byte offset of code point `col` of s. */
static size_t col_offset(const char *s, size_t col)
{
    size_t i = 0;
    for (size_t seen = 0; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && seen++ == col) break;
    return i;
}

void nvtxcorr_prof_pad(prof_out_t *o, const char *text, size_t width, int right)
{
    char s[1024]; /* control bytes and bytes that are not UTF-8 shown as '?' */
    size_t bytes = nvtxcorr_text_safe(s, sizeof s, text), cols = text_cols(s);
    if (cols > width) { /* cut in the middle: names that differ at the end stay apart */
        size_t head = width >= 2 ? (width - 2) / 2 : 0, tail = width >= 3 ? (width - 3) / 2 : 0;
        nvtxcorr_out_mem(o, s, col_offset(s, head));
        nvtxcorr_out_str(o, "...");
        size_t from = col_offset(s, cols - tail);
        nvtxcorr_out_mem(o, s + from, bytes - from);
        return;
    }
    for (size_t i = cols; right && i < width; i++)
        nvtxcorr_out_str(o, " ");
    nvtxcorr_out_mem(o, s, bytes);
    for (size_t i = cols; !right && i < width; i++)
        nvtxcorr_out_str(o, " ");
}

void nvtxcorr_prof_cols_need(prof_cols_t *c, const char *first, const char *second)
{
    size_t a = text_cols(first), b = text_cols(second ? second : "-");
    if (a > c->need1) c->need1 = a;
    if (b > c->need2) c->need2 = b;
}

/* The second column gets what its longest value needs, but no more than leaves the first what
 * its longest needs unless that would leave the second under PROF_SECOND_MIN; the first takes
 * everything left. */
void nvtxcorr_prof_cols_fit(prof_cols_t *c, size_t numbers, int two)
{
    size_t room = PROF_TEXT_WIDTH - numbers;
    if (!two) {
        c->first = room, c->second = 0;
        return;
    }
    size_t left = room - 1 > c->need1 ? room - 1 - c->need1 : 0;
    size_t w2 = left > PROF_SECOND_MIN ? left : PROF_SECOND_MIN;
    if (c->need2 < w2) w2 = c->need2;
    c->second = w2;
    c->first = room - 1 - w2;
}

/* 3 significant digits: "812 ns", "4.07 us", "12.3 ms", "1.50 s". */
void nvtxcorr_prof_fmt_time(char *buf, uint64_t ns)
{
    static const char *const units[] = {" ns", " us", " ms", " s"};
    uint64_t scale = 1;
    int u = 0;
    while (u < 3 && ns >= scale * 1000)
        scale *= 1000, u++;
    size_t n;
    if (u == 0) {
        n = nvtxcorr_fmt_u64(buf, ns);
    } else {
        uint64_t hundredths = (ns * 100 + scale / 2) / scale; /* x.yz */
        if (hundredths >= 100000 && u < 3) {
            scale *= 1000, u++;
            hundredths = (ns * 100 + scale / 2) / scale;
        }
        int decimals = hundredths < 1000 ? 2 : hundredths < 10000 ? 1 : 0;
        uint64_t v = decimals == 2   ? hundredths
                     : decimals == 1 ? (hundredths + 5) / 10
                                     : (hundredths + 50) / 100;
        uint64_t div = decimals == 2 ? 100 : decimals == 1 ? 10 : 1;
        n = nvtxcorr_fmt_u64(buf, v / div);
        if (decimals) {
            buf[n++] = '.';
            uint64_t frac = v % div;
            if (decimals == 2 && frac < 10) buf[n++] = '0';
            n += nvtxcorr_fmt_u64(buf + n, frac);
        }
    }
    strcpy(buf + n, units[u]);
}

void nvtxcorr_prof_say(const char *level, ...)
{
    char line[1024];
    size_t n = 0;
    int saved = errno;
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
    nvtxcorr_write_full(STDERR_FILENO, line, n);
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
    case EFBIG:
        return "file size limit reached (EFBIG)";
    case EIO:
        return "I/O error";
    case EBADF:
        return "its descriptor was closed or reused by the program";
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
