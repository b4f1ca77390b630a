/* Label table parser: reads NVTXCORR_LABELS_INLINE and the NVTXCORR_LABELS file into rules
 * (labels_impl.h), reporting every error as one line through the caller's callback.
 *
 * This code runs inside someone else's process, on a file someone else wrote: it must not
 * crash, block or allocate without bound on any input, and it prints nothing itself. Any
 * error rejects the whole table so that a half-loaded table never mislabels a profile; the
 * preload library then falls back to default labels. Lines are validated (length, NUL,
 * UTF-8) before they are tokenised, so the tokeniser works on a bounded C string. The
 * format is specified in docs/labels.md. */
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

enum {
    LINE_MAX_BYTES = 4096,
    BINARY_PROBE = 4096,        /* a NUL in this prefix means "not a text file" */
    FILE_MAX_BYTES = 16 << 20,  /* bounds what one bad path can make us read and keep */
    RULES_MAX = 1000000,
    ERRORS_SHOWN = 20,
    CATEGORY_MAX = 63,
    REGEX_WEIGHT_MAX = 4096,    /* see regex_weight() */
    REGEX_NEST_MAX = 64,
    QUOTE_MAX = 48,             /* offending text echoed in a message */
};

static const char inline_source[] = "NVTXCORR_LABELS_INLINE";

typedef struct parser {
    nvtxcorr_labels_t *t;
    nvtxcorr_labels_report_fn report;
    void *ctx;
    const char *source;  /* file name or inline_source, as messages name it */
    int is_inline;
    unsigned errors;     /* in this source */
    unsigned hidden;     /* errors past ERRORS_SHOWN */
    int stop;            /* a fatal condition: no point reading further */
} parser_t;

static void report_error(parser_t *p, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report_error(parser_t *p, unsigned line, const char *fmt, ...)
{
    char reason[512];
    char msg[4600];
    va_list ap;

    p->errors++;
    if (p->errors > ERRORS_SHOWN) {
        p->hidden++;
        return;
    }
    if (!p->report)
        return;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (line)
        snprintf(msg, sizeof(msg), "nvtxcorr: error: %s:%u: %s", p->source, line, reason);
    else
        snprintf(msg, sizeof(msg), "nvtxcorr: error: %s: %s", p->source, reason);
    p->report(p->ctx, msg);
}

static void finish_source(parser_t *p)
{
    char msg[4600];

    if (p->hidden && p->report) {
        snprintf(msg, sizeof(msg), "nvtxcorr: error: %s: too many errors, %u more not shown",
                 p->source, p->hidden);
        p->report(p->ctx, msg);
    }
}

/* Offending text for a message: at most QUOTE_MAX bytes, cut on a UTF-8 boundary. */
static const char *excerpt(const char *s, char *buf, size_t size)
{
    size_t n = strlen(s);

    if (n <= QUOTE_MAX)
        return s;
    n = QUOTE_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    snprintf(buf, size, "%.*s...", (int)n, s);
    return buf;
}

/* Index of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or n. */
static size_t utf8_invalid_at(const unsigned char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned char c = s[i];
        unsigned char lo = 0x80, hi = 0xBF;
        size_t more;

        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return i;
        }
        if (i + more >= n)
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= more; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        }
        i += more + 1;
    }
    return n;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Reads the next token of a NUL-terminated rule at *pos into out (sized for the whole
 * line). Returns 1 for a token, 0 at the end of the rule or a comment, -1 after reporting a
 * syntax error. A quoted token honours \" and \\; any other backslash is kept, so regexes
 * read the same quoted or not. */
static int next_token(parser_t *p, unsigned line, const char *s, size_t *pos, char *out,
                      int *quoted)
{
    size_t i = *pos, o = 0;

    while (is_blank(s[i]))
        i++;
    if (s[i] == '\0' || s[i] == '#') {
        *pos = i;
        return 0;
    }
    *quoted = s[i] == '"';
    if (*quoted) {
        for (i++;; i++) {
            if (s[i] == '\0') {
                report_error(p, line, "syntax error: unterminated quote");
                return -1;
            }
            if (s[i] == '"')
                break;
            if (s[i] == '\\' && (s[i + 1] == '"' || s[i + 1] == '\\'))
                i++;
            out[o++] = s[i];
        }
        i++;
        if (s[i] != '\0' && !is_blank(s[i])) {
            report_error(p, line, "syntax error: text after closing quote");
            return -1;
        }
    } else {
        for (; s[i] != '\0' && !is_blank(s[i]); i++) {
            if (s[i] == '"') {
                report_error(p, line,
                             "syntax error: unexpected '\"' inside a word (quote the whole "
                             "pattern or label)");
                return -1;
            }
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    *pos = i;
    return 1;
}

static const char *const kernel_placeholders[] = {"function", "demangled", "mangled", NULL};
static const char *const graph_placeholders[] = {"graph", "ordinal", "nodes", "kernels",
                                                 "sig", "top", NULL};

static int in_list(const char *const *list, const char *name, size_t n)
{
    for (; *list; list++) {
        if (strlen(*list) == n && memcmp(*list, name, n) == 0)
            return 1;
    }
    return 0;
}

/* Checks {placeholders} now, so that matching never meets a bad one. */
static int check_label(parser_t *p, unsigned line, const char *label, int graph)
{
    char q[QUOTE_MAX + 8];

    if (label[0] == '\0') {
        report_error(p, line, "empty label");
        return -1;
    }
    if (strlen(label) > NVTXCORR_LABEL_MAX - 1) {
        report_error(p, line, "label longer than %d bytes", NVTXCORR_LABEL_MAX - 1);
        return -1;
    }
    for (const char *c = label; *c; c++) {
        if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
            c++;
            continue;
        }
        if (*c != '{')
            continue;
        const char *end = strchr(c + 1, '}');
        if (!end) {
            report_error(p, line, "unterminated '{' in label (write {{ for a literal brace)");
            return -1;
        }
        size_t n = (size_t)(end - c - 1);
        const char *own = graph ? "graph" : "kernel";
        const char *other = graph ? "kernel" : "graph";
        if (!in_list(graph ? graph_placeholders : kernel_placeholders, c + 1, n)) {
            if (in_list(graph ? kernel_placeholders : graph_placeholders, c + 1, n)) {
                report_error(p, line, "placeholder {%.*s} is only for %s rules, not %s rules",
                             (int)n, c + 1, other, own);
            } else {
                char name[QUOTE_MAX + 2];
                size_t k = n < QUOTE_MAX + 1 ? n : QUOTE_MAX + 1;
                memcpy(name, c + 1, k);
                name[k] = '\0';
                report_error(p, line, "unknown placeholder {%s}", excerpt(name, q, sizeof(q)));
            }
            return -1;
        }
        c = end;
    }
    return 0;
}

/* An upper bound on the NFA copies glibc's regcomp makes for bounded repetition: it expands
 * `x{n}` into n copies of x, so nested bounds multiply ("((a{100}){100}){100}" takes 200 MB
 * and a second; one more level exhausts memory). Back-references are refused too: ERE does
 * not define them, and glibc's extension makes regexec exponential. Returns 0 or reports. */
static int regex_weight(parser_t *p, unsigned line, const char *src)
{
    unsigned long sum[REGEX_NEST_MAX + 1] = {0};
    unsigned long last = 0;
    size_t d = 0;
    char q[QUOTE_MAX + 8];

    for (size_t i = 0; src[i];) {
        char c = src[i];

        if (c == '\\') {
            if (src[i + 1] >= '1' && src[i + 1] <= '9') {
                report_error(p, line, "bad regex '%s': back-references are not supported",
                             excerpt(src, q, sizeof(q)));
                return -1;
            }
            i += src[i + 1] ? 2 : 1;
            last = 1;
        } else if (c == '[') {
            /* A bracket expression is one atom; "[]" and "[^]" start with a literal ']'. */
            i++;
            if (src[i] == '^')
                i++;
            if (src[i] == ']')
                i++;
            while (src[i] && src[i] != ']') {
                if (src[i] == '[' && (src[i + 1] == ':' || src[i + 1] == '.' ||
                                      src[i + 1] == '=')) {
                    char close[3] = {src[i + 1], ']', '\0'};
                    const char *e = strstr(src + i + 2, close);
                    i = e ? (size_t)(e - src) + 2 : strlen(src);
                } else {
                    i++;
                }
            }
            if (src[i])
                i++;
            last = 1;
        } else if (c == '(') {
            if (d == REGEX_NEST_MAX) {
                report_error(p, line, "bad regex '%s': groups nested too deeply",
                             excerpt(src, q, sizeof(q)));
                return -1;
            }
            sum[++d] = 0;
            last = 0;
            i++;
            continue;
        } else if (c == ')' && d > 0) {
            last = sum[d--];
            if (last == 0)
                last = 1;
            i++;
        } else if (c == '{' && last > 0 && src[i + 1] >= '0' && src[i + 1] <= '9') {
            unsigned long n = 0, m;
            size_t j = i + 1;
            while (src[j] >= '0' && src[j] <= '9' && n < 100000)
                n = n * 10 + (unsigned long)(src[j++] - '0');
            m = n;
            if (src[j] == ',') {
                j++;
                if (src[j] >= '0' && src[j] <= '9') {
                    m = 0;
                    while (src[j] >= '0' && src[j] <= '9' && m < 100000)
                        m = m * 10 + (unsigned long)(src[j++] - '0');
                }
            }
            if (m < 1)
                m = 1;
            /* The atom is already counted once; it now stands for m copies. */
            sum[d] += last * (m - 1);
            last *= m;
            if (sum[d] > REGEX_WEIGHT_MAX || last > REGEX_WEIGHT_MAX) {
                report_error(p, line, "bad regex '%s': repetition too large (limit %d)",
                             excerpt(src, q, sizeof(q)), REGEX_WEIGHT_MAX);
                return -1;
            }
            i = src[j] ? j + 1 : j;
            continue;
        } else {
            i++;
            if (c == '|' || c == '^' || c == '$' || c == '*' || c == '+' || c == '?')
                continue;
            last = 1;
        }
        sum[d] += last;
        if (sum[d] > REGEX_WEIGHT_MAX) {
            report_error(p, line, "bad regex '%s': repetition too large (limit %d)",
                         excerpt(src, q, sizeof(q)), REGEX_WEIGHT_MAX);
            return -1;
        }
    }
    return 0;
}

/* The longest run of plain characters a regex match must contain, so the matcher can skip
 * regexec for names without it (regexec costs far more than memmem). Only runs outside
 * groups count, none at all with an alternation, and a character under `*`, `?` or a
 * bound is not required; anything unclear ends the run, which only weakens the hint.
 * Returns a malloc'd string (maybe empty), or NULL when out of memory. */
static char *regex_literal(const char *src)
{
    size_t n = strlen(src), best = 0, best_at = 0, run = 0, run_at = 0, depth = 0;

    if (strchr(src, '|'))
        return strdup("");
    for (size_t i = 0; i <= n; i++) {
        char c = src[i];
        if (depth == 0 && c != '\0' && !strchr(".[]()*+?{}|^$\\", c)) {
            if (run == 0)
                run_at = i;
            run++;
            continue;
        }
        if (run > 0 && (c == '*' || c == '?' || c == '{')) {
            /* The quantifier takes the last character, all of it if multi-byte. */
            while (run > 0 && ((unsigned char)src[run_at + run - 1] & 0xC0) == 0x80)
                run--;
            if (run > 0)
                run--;
        }
        if (run > best) {
            best = run;
            best_at = run_at;
        }
        run = 0;
        if (c == '(') {
            depth++;
        } else if (c == ')' && depth > 0) {
            depth--;
        } else if (c == '\\' && src[i + 1]) {
            i++;
        } else if (c == '[') {
            i++;
            if (src[i] == '^')
                i++;
            if (src[i] == ']')
                i++;
            while (src[i] && src[i] != ']') {
                if (src[i] == '[' && src[i + 1] && strchr(":.=", src[i + 1])) {
                    char close[3] = {src[i + 1], ']', '\0'};
                    const char *e = strstr(src + i + 2, close);
                    i = e ? (size_t)(e - src) + 1 : n - 1;
                }
                i++;
            }
            if (!src[i])
                break;
        } else if (c == '{') {
            while (src[i + 1] && src[i] != '}')
                i++;
        }
    }
    return strndup(src + best_at, best);
}

static int compile_regex(parser_t *p, unsigned line, label_rule_t *r, const char *src)
{
    char q[QUOTE_MAX + 8];
    char err[256];
    int rc;

    if (regex_weight(p, line, src) != 0)
        return -1;
    r->re = malloc(sizeof(*r->re));
    if (!r->re) {
        report_error(p, line, "out of memory");
        return -1;
    }
    rc = regcomp(r->re, src, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        regerror(rc, r->re, err, sizeof(err));
        free(r->re);
        r->re = NULL;
        report_error(p, line, "bad regex '%s': %s", excerpt(src, q, sizeof(q)), err);
        return -1;
    }
    /* A regex rule keeps its required literal where a glob keeps its text. */
    r->pattern = regex_literal(src);
    if (!r->pattern) {
        report_error(p, line, "out of memory");
        return -1;
    }
    r->lit = r->pattern;
    r->lit_len = strlen(r->pattern);
    return 0;
}

static const char *const graph_keys[] = {"", "ordinal", "nodes", "kernels", "sig", "top"};

/* Sets kind, key and the glob (or compiles the regex) from the pattern token. */
static int parse_pattern(parser_t *p, unsigned line, label_rule_t *r, char *pat)
{
    char q[QUOTE_MAX + 8];
    char *glob = pat;

    if (strncmp(pat, "graph:", 6) == 0) {
        glob = pat + 6;
        r->kind = RULE_GRAPH_GLOB;
        r->key = GKEY_NAME;
        if (strncmp(glob, "re:", 3) == 0) {
            glob += 3;
            r->kind = RULE_GRAPH_REGEX;
        } else {
            size_t n = strspn(glob, "abcdefghijklmnopqrstuvwxyz");
            if (n > 0 && glob[n] == '=') {
                size_t k;
                for (k = 1; k < sizeof(graph_keys) / sizeof(graph_keys[0]); k++) {
                    if (strlen(graph_keys[k]) == n && memcmp(graph_keys[k], glob, n) == 0)
                        break;
                }
                if (k == sizeof(graph_keys) / sizeof(graph_keys[0])) {
                    glob[n] = '\0';
                    report_error(p, line,
                                 "unknown graph key '%s' (keys: ordinal, nodes, kernels, sig, "
                                 "top)",
                                 excerpt(glob, q, sizeof(q)));
                    return -1;
                }
                r->key = (enum graph_key)k;
                glob += n + 1;
            }
        }
    } else if (strncmp(pat, "re:", 3) == 0) {
        glob = pat + 3;
        r->kind = RULE_KERNEL_REGEX;
    } else {
        r->kind = strpbrk(pat, "*?[\\") ? RULE_KERNEL_GLOB : RULE_KERNEL_EXACT;
    }
    if (glob[0] == '\0') {
        report_error(p, line, "empty pattern");
        return -1;
    }
    if (r->kind == RULE_KERNEL_REGEX || r->kind == RULE_GRAPH_REGEX)
        return compile_regex(p, line, r, glob);
    r->pattern = strdup(glob);
    if (!r->pattern) {
        report_error(p, line, "out of memory");
        return -1;
    }
    if (r->kind == RULE_KERNEL_GLOB)
        nvtxcorr_labels_glob_literal(r->pattern, &r->lit, &r->lit_len);
    return 0;
}

static int is_category_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == ':' || c == '-';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int parse_option(parser_t *p, unsigned line, label_rule_t *r, const char *tok)
{
    char q[QUOTE_MAX + 8];
    const char *eq = strchr(tok, '=');
    const char *v = eq ? eq + 1 : NULL;

    if (!eq) {
        report_error(p, line,
                     "syntax error: unexpected '%s' after label (quote labels that contain "
                     "spaces)",
                     excerpt(tok, q, sizeof(q)));
        return -1;
    }
    size_t klen = (size_t)(eq - tok);
    if (klen == 5 && memcmp(tok, "color", 5) == 0) {
        uint32_t rgb = 0;
        int ok = v[0] == '#' && strlen(v) == 7;
        for (int i = 1; ok && i < 7; i++) {
            int h = hexval(v[i]);
            ok = h >= 0;
            rgb = rgb << 4 | (uint32_t)(h & 0xF);
        }
        if (r->has_color) {
            report_error(p, line, "duplicate option 'color'");
            return -1;
        }
        if (!ok) {
            report_error(p, line, "bad color '%s': expected #RRGGBB", excerpt(v, q, sizeof(q)));
            return -1;
        }
        r->has_color = 1;
        r->color = 0xFF000000u | rgb;
        return 0;
    }
    if (klen == 8 && memcmp(tok, "category", 8) == 0) {
        size_t n = strlen(v);
        int ok = n >= 1 && n <= CATEGORY_MAX;
        for (size_t i = 0; ok && i < n; i++)
            ok = is_category_char(v[i]);
        if (r->category) {
            report_error(p, line, "duplicate option 'category'");
            return -1;
        }
        if (!ok) {
            report_error(p, line,
                         "bad category '%s': expected 1 to %d of A-Z a-z 0-9 _ . : -",
                         excerpt(v, q, sizeof(q)), CATEGORY_MAX);
            return -1;
        }
        r->category = strdup(v);
        if (!r->category) {
            report_error(p, line, "out of memory");
            return -1;
        }
        return 0;
    }
    char key[QUOTE_MAX + 2];
    size_t k = klen < QUOTE_MAX + 1 ? klen : QUOTE_MAX + 1;
    memcpy(key, tok, k);
    key[k] = '\0';
    report_error(p, line, "unknown option '%s'", excerpt(key, q, sizeof(q)));
    return -1;
}

static void free_rule(label_rule_t *r)
{
    if (r->re) {
        regfree(r->re);
        free(r->re);
    }
    free(r->pattern);
    free(r->label);
    free(r->category);
    free(r->text);
    memset(r, 0, sizeof(*r));
}

static int append_rule(parser_t *p, unsigned line, label_rule_t *r)
{
    nvtxcorr_labels_t *t = p->t;

    if (t->count == RULES_MAX) {
        report_error(p, line, "too many rules (limit %d)", RULES_MAX);
        p->stop = 1;
        return -1;
    }
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        label_rule_t *n = realloc(t->rules, cap * sizeof(*n));
        if (!n) {
            report_error(p, line, "out of memory");
            p->stop = 1;
            return -1;
        }
        t->rules = n;
        t->cap = cap;
    }
    t->rules[t->count++] = *r;
    return 0;
}

static int looks_like_option(const char *tok)
{
    return strncmp(tok, "color=", 6) == 0 || strncmp(tok, "category=", 9) == 0;
}

/* One rule: `s` is NUL-terminated, at most LINE_MAX_BYTES, valid UTF-8. `tok` is scratch
 * space for one token (LINE_MAX_BYTES + 1). */
static void parse_rule(parser_t *p, unsigned line, const char *s, char *tok)
{
    label_rule_t r;
    size_t pos = 0, start, end;
    int quoted = 0, rc;
    char label[LINE_MAX_BYTES + 1];
    int label_quoted;

    memset(&r, 0, sizeof(r));
    rc = next_token(p, line, s, &pos, tok, &quoted);
    if (rc <= 0)
        return; /* blank, comment-only or already reported */
    start = strspn(s, " \t");

    rc = next_token(p, line, s, &pos, label, &label_quoted);
    if (rc < 0)
        return;
    if (rc == 0 || (!label_quoted && looks_like_option(label))) {
        report_error(p, line, "syntax error: missing label");
        return;
    }
    if (parse_pattern(p, line, &r, tok) != 0)
        goto fail;
    int graph = r.kind == RULE_GRAPH_GLOB || r.kind == RULE_GRAPH_REGEX;
    if (label_quoted || strcmp(label, "-") != 0) {
        if (check_label(p, line, label, graph) != 0)
            goto fail;
        r.label = strdup(label);
        if (!r.label) {
            report_error(p, line, "out of memory");
            goto fail;
        }
    }
    end = pos;
    while ((rc = next_token(p, line, s, &pos, tok, &quoted)) > 0) {
        if (parse_option(p, line, &r, tok) != 0)
            goto fail;
        end = pos;
    }
    if (rc < 0)
        goto fail;
    r.text = strndup(s + start, end - start);
    if (!r.text) {
        report_error(p, line, "out of memory");
        goto fail;
    }
    r.source = p->is_inline ? inline_source : p->t->file_source;
    r.line = line;
    if (append_rule(p, line, &r) == 0)
        return;
fail:
    free_rule(&r);
}

/* Validates one physical line or inline rule of n bytes, then parses it. */
static void parse_line(parser_t *p, unsigned line, const char *s, size_t n, char *tok)
{
    char buf[LINE_MAX_BYTES + 1];
    size_t bad;

    if (n > LINE_MAX_BYTES) {
        report_error(p, line, "%s longer than %d bytes", p->is_inline ? "rule" : "line",
                     LINE_MAX_BYTES);
        return;
    }
    if (memchr(s, '\0', n)) {
        report_error(p, line, "NUL byte in line");
        return;
    }
    bad = utf8_invalid_at((const unsigned char *)s, n);
    if (bad < n) {
        report_error(p, line, "invalid UTF-8 at byte %zu", bad + 1);
        return;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    parse_rule(p, line, buf, tok);
}

static void parse_buffer(parser_t *p, const char *data, size_t len)
{
    char *tok = malloc(LINE_MAX_BYTES + 1);
    size_t before = p->t->count;
    unsigned line = 0;

    if (!tok) {
        report_error(p, 0, "out of memory");
        return;
    }
    if (len > FILE_MAX_BYTES) {
        report_error(p, 0, "file larger than %d MiB", FILE_MAX_BYTES >> 20);
        goto out;
    }
    if (memchr(data, '\0', len < BINARY_PROBE ? len : BINARY_PROBE)) {
        report_error(p, 0, "binary file");
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
        if (n > 0 && data[n - 1] == '\r')
            n--;
        parse_line(p, line, data, n, tok);
        data += next;
        len -= next;
    }
    if (p->errors == 0 && p->t->count == before)
        report_error(p, 0, "no rules");
out:
    free(tok);
}

/* Inline rules are separated by ';' or a newline, except inside a quoted label and inside a
 * comment's quotes (a comment runs to the end of its rule). */
static void parse_inline(parser_t *p, const char *s)
{
    char *tok = malloc(LINE_MAX_BYTES + 1);
    size_t before = p->t->count;
    unsigned rule = 0;

    if (!tok) {
        report_error(p, 0, "out of memory");
        return;
    }
    while (!p->stop) {
        size_t i = 0;
        int quote = 0, comment = 0;

        for (; s[i]; i++) {
            char c = s[i];
            if (quote) {
                if (c == '\\' && s[i + 1])
                    i++;
                else if (c == '"')
                    quote = 0;
            } else if (c == ';' || c == '\n') {
                break;
            } else if (!comment && c == '"') {
                quote = 1;
            } else if (!comment && c == '#' && (i == 0 || is_blank(s[i - 1]))) {
                comment = 1;
            }
        }
        rule++;
        size_t n = i;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        parse_line(p, rule, s, n, tok);
        if (!s[i])
            break;
        s += i + 1;
    }
    if (p->errors == 0 && p->t->count == before)
        report_error(p, 0, "no rules");
    free(tok);
}

/* Reads a whole regular file. Anything else is refused before reading: a FIFO or a
 * terminal would block the host process, and /dev/zero never ends. */
static char *read_file(parser_t *p, const char *path, size_t *len)
{
    struct stat st;
    char *buf = NULL;
    size_t have = 0;
    char err[128];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    if (fd < 0) {
        report_error(p, 0, "cannot open: %s", strerror_r(errno, err, sizeof(err)));
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        report_error(p, 0, "cannot open: %s", strerror_r(errno, err, sizeof(err)));
        goto fail;
    }
    if (S_ISDIR(st.st_mode)) {
        report_error(p, 0, "cannot open: %s", strerror_r(EISDIR, err, sizeof(err)));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        report_error(p, 0, "not a regular file");
        goto fail;
    }
    if (st.st_size > FILE_MAX_BYTES) {
        report_error(p, 0, "file larger than %d MiB", FILE_MAX_BYTES >> 20);
        goto fail;
    }
    /* One byte more than the size, so a file growing under us is seen as over the limit
     * rather than silently cut. */
    size_t cap = (size_t)st.st_size + 1;
    buf = malloc(cap);
    if (!buf) {
        report_error(p, 0, "out of memory");
        goto fail;
    }
    for (;;) {
        if (have == cap) {
            if (cap > FILE_MAX_BYTES) {
                report_error(p, 0, "file larger than %d MiB", FILE_MAX_BYTES >> 20);
                goto fail;
            }
            char *n = realloc(buf, cap * 2);
            if (!n) {
                report_error(p, 0, "out of memory");
                goto fail;
            }
            buf = n;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + have, cap - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            report_error(p, 0, "cannot read: %s", strerror_r(errno, err, sizeof(err)));
            goto fail;
        }
        if (got == 0)
            break;
        have += (size_t)got;
    }
    close(fd);
    *len = have;
    return buf;
fail:
    free(buf);
    close(fd);
    return NULL;
}

static int only_blanks(const char *s)
{
    return s[strspn(s, " \t\r\n")] == '\0';
}

/* Common tail of both loaders: rejects the table on any error, indexes it otherwise. */
static nvtxcorr_labels_t *finish(nvtxcorr_labels_t *t, unsigned errors,
                                 nvtxcorr_labels_report_fn report, void *ctx)
{
    if (errors == 0 && t->count > 0) {
        if (nvtxcorr_labels_build_index(t) == 0)
            return t;
        if (report) {
            report(ctx, "nvtxcorr: error: label table: out of memory");
        }
    }
    nvtxcorr_labels_free(t);
    return NULL;
}

static void init_parser(parser_t *p, nvtxcorr_labels_t *t, const char *source, int is_inline,
                        nvtxcorr_labels_report_fn report, void *ctx)
{
    memset(p, 0, sizeof(*p));
    p->t = t;
    p->report = report;
    p->ctx = ctx;
    p->source = source;
    p->is_inline = is_inline;
}

nvtxcorr_labels_t *nvtxcorr_labels_load_buffer(const char *name, const char *data, size_t len,
                                               nvtxcorr_labels_report_fn report, void *ctx)
{
    nvtxcorr_labels_t *t = calloc(1, sizeof(*t));
    parser_t p;

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

nvtxcorr_labels_t *nvtxcorr_labels_load(const char *inline_rules, const char *path,
                                        nvtxcorr_labels_report_fn report, void *ctx)
{
    nvtxcorr_labels_t *t;
    parser_t p;
    unsigned errors = 0;

    if (inline_rules && only_blanks(inline_rules))
        inline_rules = NULL;
    if (path && !path[0])
        path = NULL;
    if (!inline_rules && !path)
        return NULL;
    t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
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
        if (data)
            parse_buffer(&p, data, len);
        free(data);
        finish_source(&p);
        errors += p.errors;
    }
    return finish(t, errors, report, ctx);
}

/* Frees what the parser allocated; labels_match.c frees the indexes. */
void nvtxcorr_labels_free_rules(nvtxcorr_labels_t *t)
{
    for (size_t i = 0; i < t->count; i++)
        free_rule(&t->rules[i]);
    free(t->rules);
    free(t->file_source);
}
