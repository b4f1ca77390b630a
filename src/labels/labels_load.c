/* Label table loading: reads NVTXCORR_LABELS_INLINE and the NVTXCORR_LABELS file, splits
 * them into rules, validates each line (length, NUL bytes, UTF-8) and hands it to the rule
 * parser (labels_parse.c); reports every error as one line through the caller's callback.
 *
 * This code runs inside someone else's process, on a file someone else wrote: it must not
 * crash, block or allocate without bound on any input, and it prints nothing itself. Any
 * error rejects the whole table so that a half-loaded table never mislabels a profile; the
 * preload library then falls back to default labels. The format is specified in
 * docs/labels.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "labels_impl.h"
#include "utf8.h"

enum {
    BINARY_PROBE = 4096,       /* a NUL in this prefix means "not a text file" */
    FILE_MAX_BYTES = 16 << 20, /* bounds what one bad path can make us read and keep */
};

static const char inline_source[] = "NVTXCORR_LABELS_INLINE";

static void finish_source(labels_parser_t *p)
{
    char reason[64];

    if (p->hidden && p->report) {
        snprintf(reason, sizeof(reason), "too many errors, %u more not shown", p->hidden);
        nvtxcorr_labels_report(p, 0, reason);
    }
}

static void report_too_large(labels_parser_t *p)
{
    nvtxcorr_labels_error(p, 0, "file larger than %d MiB", FILE_MAX_BYTES >> 20);
}

/* Index of the first byte of the n at s (NUL-terminated there, no NUL before) that is not part
 * of well-formed UTF-8, or n. */
static size_t utf8_invalid_at(const char *s, size_t n)
{
    size_t i = 0, k;

    while (i < n && (k = nvtxcorr_utf8_len(s + i)) != 0)
        i += k;
    return i;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Validates one physical line or inline rule of n bytes, then parses it. */
static void parse_line(labels_parser_t *p, unsigned line, const char *s, size_t n, char *tok)
{
    char buf[NVTXCORR_LABELS_LINE_MAX + 1];
    size_t bad;

    if (n > NVTXCORR_LABELS_LINE_MAX) {
        nvtxcorr_labels_error(p, line, "%s longer than %d bytes", p->is_inline ? "rule" : "line",
                              NVTXCORR_LABELS_LINE_MAX);
        return;
    }
    if (memchr(s, '\0', n)) {
        nvtxcorr_labels_error(p, line, "NUL byte in line");
        return;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    bad = utf8_invalid_at(buf, n);
    if (bad < n) {
        nvtxcorr_labels_error(p, line, "invalid UTF-8 at byte %zu", bad + 1);
        return;
    }
    nvtxcorr_labels_parse_rule(p, line, buf, tok);
}

static void parse_buffer(labels_parser_t *p, const char *data, size_t len)
{
    char *tok = malloc(NVTXCORR_LABELS_LINE_MAX + 1);
    size_t before = p->t->count;
    unsigned line = 0;

    if (!tok) {
        nvtxcorr_labels_error(p, 0, "out of memory");
        return;
    }
    if (len > FILE_MAX_BYTES) {
        report_too_large(p);
        goto out;
    }
    if (memchr(data, '\0', len < BINARY_PROBE ? len : BINARY_PROBE)) {
        nvtxcorr_labels_error(p, 0, "binary file");
        goto out;
    }
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        data += 3; /* a UTF-8 byte order mark, as some Windows editors write */
        len -= 3;
    }
    while (len > 0 && !p->stop) {
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;
        size_t next = nl ? n + 1 : n;

        line++;
        if (n > 0 && data[n - 1] == '\r') n--;
        parse_line(p, line, data, n, tok);
        data += next;
        len -= next;
    }
    if (p->errors == 0 && p->t->count == before) nvtxcorr_labels_error(p, 0, "no rules");
out:
    free(tok);
}

/* Inline rules are separated by ';', except inside a quoted field, and by a newline,
 * always: a quote left open on one line is an error of that rule, not a swallowed next
 * line. A comment runs to the end of its rule; a quote inside it hides no ';'. */
static void parse_inline(labels_parser_t *p, const char *s)
{
    char *tok = malloc(NVTXCORR_LABELS_LINE_MAX + 1);
    size_t before = p->t->count;
    unsigned rule = 0;

    if (!tok) {
        nvtxcorr_labels_error(p, 0, "out of memory");
        return;
    }
    while (!p->stop) {
        size_t i = 0;
        int quote = 0, comment = 0;

        for (; s[i]; i++) {
            char c = s[i];
            if (c == '\n') {
                break;
            } else if (quote) {
                if (c == '\\' && s[i + 1] && s[i + 1] != '\n')
                    i++;
                else if (c == '"')
                    quote = 0;
            } else if (c == ';') {
                break;
            } else if (!comment && c == '"') {
                quote = 1;
            } else if (!comment && c == '#' && (i == 0 || is_blank(s[i - 1]))) {
                comment = 1;
            }
        }
        rule++;
        size_t n = i;
        if (n > 0 && s[n - 1] == '\r') n--;
        parse_line(p, rule, s, n, tok);
        if (!s[i]) break;
        s += i + 1;
    }
    if (p->errors == 0 && p->t->count == before) nvtxcorr_labels_error(p, 0, "no rules");
    free(tok);
}

/* Reports "<what>: <the system's text for errnum>" about the whole source. */
static void report_errno(labels_parser_t *p, const char *what, int errnum)
{
    char err[128];

    nvtxcorr_labels_error(p, 0, "%s: %s", what, strerror_r(errnum, err, sizeof(err)));
}

/* Opens a label file and checks it before reading anything: only a regular file of at most
 * FILE_MAX_BYTES is read, since a FIFO or a terminal would block the host process and
 * /dev/zero never ends. Returns the descriptor and the file's size, or -1 after reporting. */
static int open_label_file(labels_parser_t *p, const char *path, size_t *size)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    if (fd < 0) {
        report_errno(p, "cannot open", errno);
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        report_errno(p, "cannot open", errno);
    } else if (S_ISDIR(st.st_mode)) {
        report_errno(p, "cannot open", EISDIR);
    } else if (!S_ISREG(st.st_mode)) {
        nvtxcorr_labels_error(p, 0, "not a regular file");
    } else if (st.st_size > FILE_MAX_BYTES) {
        report_too_large(p);
    } else {
        *size = (size_t)st.st_size;
        return fd;
    }
    close(fd);
    return -1;
}

/* Doubles the read buffer, unless the file has grown past FILE_MAX_BYTES since fstat.
 * Returns 0, or -1 after reporting (the buffer is left as it was). */
static int grow_buffer(labels_parser_t *p, char **buf, size_t *cap)
{
    if (*cap > FILE_MAX_BYTES) {
        report_too_large(p);
        return -1;
    }
    char *n = realloc(*buf, *cap * 2);
    if (!n) {
        nvtxcorr_labels_error(p, 0, "out of memory");
        return -1;
    }
    *buf = n;
    *cap *= 2;
    return 0;
}

/* Reads fd to its end into a malloc'd buffer, starting from the size fstat reported. One byte
 * more than that size is asked for, so a file growing under us is seen as over the limit
 * rather than silently cut. Returns the buffer, or NULL after reporting. */
static char *read_to_end(labels_parser_t *p, int fd, size_t size, size_t *len)
{
    size_t cap = size + 1, have = 0;
    char *buf = malloc(cap);

    if (!buf) {
        nvtxcorr_labels_error(p, 0, "out of memory");
        return NULL;
    }
    for (;;) {
        if (have == cap && grow_buffer(p, &buf, &cap) != 0) break;
        ssize_t got = read(fd, buf + have, cap - have);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            report_errno(p, "cannot read", errno);
            break;
        }
        if (got == 0) {
            *len = have;
            return buf;
        }
        have += (size_t)got;
    }
    free(buf);
    return NULL;
}

/* A whole label file in a malloc'd buffer, or NULL after reporting why not. */
static char *read_file(labels_parser_t *p, const char *path, size_t *len)
{
    size_t size = 0;
    int fd = open_label_file(p, path, &size);

    if (fd < 0) return NULL;
    char *buf = read_to_end(p, fd, size, len);
    close(fd);
    return buf;
}

static int only_blanks(const char *s)
{
    return s[strspn(s, " \t\r\n")] == '\0';
}

/* Common tail of both loaders: rejects the table on any error, indexes it otherwise. */
static nvtxcorr_label_table_t *finish(nvtxcorr_label_table_t *t, unsigned errors,
                                      nvtxcorr_labels_report_fn report, void *ctx)
{
    if (errors == 0 && t->count > 0) {
        if (nvtxcorr_labels_build_index(t) == 0) return t;
        if (report) {
            nvtxcorr_label_error_t e = {"label table", 0, "out of memory"};
            report(ctx, &e);
        }
    }
    nvtxcorr_labels_free(t);
    return NULL;
}

static void init_parser(labels_parser_t *p, nvtxcorr_label_table_t *t, const char *source,
                        int is_inline, nvtxcorr_labels_report_fn report, void *ctx)
{
    memset(p, 0, sizeof(*p));
    p->t = t;
    p->report = report;
    p->ctx = ctx;
    p->source = source;
    p->is_inline = is_inline;
}

nvtxcorr_label_table_t *nvtxcorr_labels_load_buffer(const char *name, const char *data, size_t len,
                                                    nvtxcorr_labels_report_fn report, void *ctx)
{
    nvtxcorr_label_table_t *t = calloc(1, sizeof(*t));
    labels_parser_t p;

    if (!t || !name || (!data && len > 0)) {
        free(t);
        return NULL;
    }
    t->file_source = strdup(name);
    if (!t->file_source) {
        free(t);
        return NULL;
    }
    init_parser(&p, t, t->file_source, 0, report, ctx);
    parse_buffer(&p, data ? data : "", len);
    finish_source(&p);
    return finish(t, p.errors, report, ctx);
}

nvtxcorr_label_table_t *nvtxcorr_labels_load(const char *inline_rules, const char *path,
                                             nvtxcorr_labels_report_fn report, void *ctx)
{
    nvtxcorr_label_table_t *t;
    labels_parser_t p;
    unsigned errors = 0;

    if (inline_rules && only_blanks(inline_rules)) inline_rules = NULL;
    if (path && !path[0]) path = NULL;
    if (!inline_rules && !path) return NULL;
    t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    if (inline_rules) {
        init_parser(&p, t, inline_source, 1, report, ctx);
        parse_inline(&p, inline_rules);
        finish_source(&p);
        errors += p.errors;
    }
    if (path) {
        size_t len = 0;
        char *data;

        t->file_source = strdup(path);
        if (!t->file_source) {
            nvtxcorr_labels_free(t);
            return NULL;
        }
        init_parser(&p, t, t->file_source, 0, report, ctx);
        data = read_file(&p, path, &len);
        if (data) parse_buffer(&p, data, len);
        free(data);
        finish_source(&p);
        errors += p.errors;
    }
    return finish(t, errors, report, ctx);
}
