/* Label table rules: parses one validated rule (a NUL-terminated line of at most
 * NVTXCORR_LABELS_LINE_MAX bytes of UTF-8, from labels_load.c) into a label_rule_t: its
 * tokens, pattern, label template and options. Regexes are checked and compiled by
 * labels_regex.c. Every problem is reported through nvtxcorr_labels_error; the format is
 * specified in docs/labels.md. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels_impl.h"

enum {
    RULES_MAX = 1000000,
    CATEGORY_NAME_MAX = 63,
};

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Reads the next token of a NUL-terminated rule at *pos into out (sized for the whole
 * line). Returns 1 for a token, 0 at the end of the rule or a comment, -1 after reporting a
 * syntax error. A quoted token honours \" and \\; any other backslash is kept, so regexes
 * read the same quoted or not. */
static int next_token(labels_parser_t *p, unsigned line, const char *s, size_t *pos, char *out,
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
                nvtxcorr_labels_error(p, line, "syntax error: unterminated quote");
                return -1;
            }
            if (s[i] == '"') break;
            if (s[i] == '\\' && (s[i + 1] == '"' || s[i + 1] == '\\')) i++;
            out[o++] = s[i];
        }
        i++;
        if (s[i] != '\0' && !is_blank(s[i])) {
            nvtxcorr_labels_error(p, line, "syntax error: text after closing quote");
            return -1;
        }
    } else {
        for (; s[i] != '\0' && !is_blank(s[i]); i++) {
            if (s[i] == '"') {
                nvtxcorr_labels_error(
                    p, line,
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
                                                 "sig",   "top",     NULL};

static int in_list(const char *const *list, const char *name, size_t n)
{
    for (; *list; list++) {
        if (strlen(*list) == n && memcmp(*list, name, n) == 0) return 1;
    }
    return 0;
}

/* Checks {placeholders} now, so that matching never meets a bad one. */
static int check_label(labels_parser_t *p, unsigned line, const char *label, int graph)
{
    char q[NVTXCORR_LABELS_QUOTE_MAX + 8];

    if (label[0] == '\0') {
        nvtxcorr_labels_error(p, line, "empty label");
        return -1;
    }
    if (strlen(label) > NVTXCORR_LABEL_MAX - 1) {
        nvtxcorr_labels_error(p, line, "label longer than %d bytes", NVTXCORR_LABEL_MAX - 1);
        return -1;
    }
    for (const char *c = label; *c; c++) {
        if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
            c++;
            continue;
        }
        if (*c != '{') continue;
        const char *end = strchr(c + 1, '}');
        if (!end) {
            nvtxcorr_labels_error(p, line,
                                  "unterminated '{' in label (write {{ for a literal brace)");
            return -1;
        }
        size_t n = (size_t)(end - c - 1);
        const char *own = graph ? "graph" : "kernel";
        const char *other = graph ? "kernel" : "graph";
        if (!in_list(graph ? graph_placeholders : kernel_placeholders, c + 1, n)) {
            if (in_list(graph ? kernel_placeholders : graph_placeholders, c + 1, n)) {
                nvtxcorr_labels_error(p, line,
                                      "placeholder {%.*s} is only for %s rules, not %s rules",
                                      (int)n, c + 1, other, own);
            } else {
                nvtxcorr_labels_error(p, line, "unknown placeholder {%s}",
                                      nvtxcorr_labels_excerpt_bytes(c + 1, n, q, sizeof(q)));
            }
            return -1;
        }
        c = end;
    }
    return 0;
}

static const char *const graph_keys[] = {"", "ordinal", "nodes", "kernels", "sig", "top"};

/* Sets kind, key and the glob (or compiles the regex) from the pattern token. */
static int parse_pattern(labels_parser_t *p, unsigned line, label_rule_t *r, char *pat)
{
    char q[NVTXCORR_LABELS_QUOTE_MAX + 8];
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
                    if (strlen(graph_keys[k]) == n && memcmp(graph_keys[k], glob, n) == 0) break;
                }
                if (k == sizeof(graph_keys) / sizeof(graph_keys[0])) {
                    glob[n] = '\0';
                    nvtxcorr_labels_error(
                        p, line,
                        "unknown graph key '%s' (keys: ordinal, nodes, kernels, sig, "
                        "top)",
                        nvtxcorr_labels_excerpt(glob, q, sizeof(q)));
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
        nvtxcorr_labels_error(p, line, "empty pattern");
        return -1;
    }
    if (r->kind == RULE_KERNEL_REGEX || r->kind == RULE_GRAPH_REGEX)
        return nvtxcorr_labels_compile_regex(p, line, r, glob);
    r->pattern = strdup(glob);
    if (!r->pattern) {
        nvtxcorr_labels_error(p, line, "out of memory");
        return -1;
    }
    if (r->kind == RULE_KERNEL_GLOB) nvtxcorr_labels_glob_literal(r->pattern, &r->lit, &r->lit_len);
    return 0;
}

static int is_category_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':' || c == '-';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int parse_color(labels_parser_t *p, unsigned line, label_rule_t *r, const char *v)
{
    char q[NVTXCORR_LABELS_QUOTE_MAX + 8];
    uint32_t rgb = 0;
    int ok = v[0] == '#' && strlen(v) == 7;

    for (int i = 1; ok && i < 7; i++) {
        int h = hexval(v[i]);
        ok = h >= 0;
        rgb = rgb << 4 | (uint32_t)(h & 0xF);
    }
    if (r->has_color) {
        nvtxcorr_labels_error(p, line, "duplicate option 'color'");
        return -1;
    }
    if (!ok) {
        nvtxcorr_labels_error(p, line, "bad color '%s': expected #RRGGBB",
                              nvtxcorr_labels_excerpt(v, q, sizeof(q)));
        return -1;
    }
    r->has_color = 1;
    r->color = 0xFF000000u | rgb;
    return 0;
}

static int parse_category(labels_parser_t *p, unsigned line, label_rule_t *r, const char *v)
{
    char q[NVTXCORR_LABELS_QUOTE_MAX + 8];
    size_t n = strlen(v);
    int ok = n >= 1 && n <= CATEGORY_NAME_MAX;

    for (size_t i = 0; ok && i < n; i++)
        ok = is_category_char(v[i]);
    if (r->category) {
        nvtxcorr_labels_error(p, line, "duplicate option 'category'");
        return -1;
    }
    if (!ok) {
        nvtxcorr_labels_error(p, line, "bad category '%s': expected 1 to %d of A-Z a-z 0-9 _ . : -",
                              nvtxcorr_labels_excerpt(v, q, sizeof(q)), CATEGORY_NAME_MAX);
        return -1;
    }
    r->category = strdup(v);
    if (!r->category) {
        nvtxcorr_labels_error(p, line, "out of memory");
        return -1;
    }
    return 0;
}

/* The options a rule may carry after its label, as key=value. */
typedef int (*option_parser_fn)(labels_parser_t *p, unsigned line, label_rule_t *r,
                                const char *value);
static const struct rule_option {
    const char *key;
    option_parser_fn parse;
} rule_options[] = {{"color", parse_color}, {"category", parse_category}};

/* The option whose key is the `len` bytes at `key`, or NULL. */
static const struct rule_option *find_option(const char *key, size_t len)
{
    for (size_t i = 0; i < sizeof(rule_options) / sizeof(rule_options[0]); i++) {
        const struct rule_option *o = &rule_options[i];
        if (strlen(o->key) == len && memcmp(o->key, key, len) == 0) return o;
    }
    return NULL;
}

static int parse_option(labels_parser_t *p, unsigned line, label_rule_t *r, const char *tok)
{
    char q[NVTXCORR_LABELS_QUOTE_MAX + 8];
    const char *eq = strchr(tok, '=');

    if (!eq) {
        nvtxcorr_labels_error(
            p, line,
            "syntax error: unexpected '%s' after label (quote labels that contain "
            "spaces)",
            nvtxcorr_labels_excerpt(tok, q, sizeof(q)));
        return -1;
    }
    size_t klen = (size_t)(eq - tok);
    const struct rule_option *o = find_option(tok, klen);
    if (o) return o->parse(p, line, r, eq + 1);
    nvtxcorr_labels_error(p, line, "unknown option '%s'",
                          nvtxcorr_labels_excerpt_bytes(tok, klen, q, sizeof(q)));
    return -1;
}

static int append_rule(labels_parser_t *p, unsigned line, label_rule_t *r)
{
    nvtxcorr_label_table_t *t = p->t;

    if (t->count == RULES_MAX) {
        nvtxcorr_labels_error(p, line, "too many rules (limit %d)", RULES_MAX);
        p->stop = 1;
        return -1;
    }
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        label_rule_t *n = realloc(t->rules, cap * sizeof(*n));
        if (!n) {
            nvtxcorr_labels_error(p, line, "out of memory");
            p->stop = 1;
            return -1;
        }
        t->rules = n;
        t->cap = cap;
    }
    t->rules[t->count++] = *r;
    return 0;
}

/* An unquoted label that reads "key=..." with a known key is an option: the label is missing. */
static int looks_like_option(const char *tok)
{
    const char *eq = strchr(tok, '=');

    return eq && find_option(tok, (size_t)(eq - tok)) != NULL;
}

void nvtxcorr_labels_parse_rule(labels_parser_t *p, unsigned line, const char *s, char *tok)
{
    label_rule_t r;
    size_t pos = 0, start, end;
    int quoted = 0, rc;
    char label[NVTXCORR_LABELS_LINE_MAX + 1];
    int label_quoted;

    memset(&r, 0, sizeof(r));
    rc = next_token(p, line, s, &pos, tok, &quoted);
    if (rc <= 0) return; /* blank, comment-only or already reported */
    start = strspn(s, " \t");

    rc = next_token(p, line, s, &pos, label, &label_quoted);
    if (rc < 0) return;
    if (rc == 0 || (!label_quoted && looks_like_option(label))) {
        nvtxcorr_labels_error(p, line, "syntax error: missing label");
        return;
    }
    if (parse_pattern(p, line, &r, tok) != 0) goto fail;
    int graph = r.kind == RULE_GRAPH_GLOB || r.kind == RULE_GRAPH_REGEX;
    if (label_quoted || strcmp(label, "-") != 0) {
        if (check_label(p, line, label, graph) != 0) goto fail;
        r.label = strdup(label);
        if (!r.label) {
            nvtxcorr_labels_error(p, line, "out of memory");
            goto fail;
        }
    }
    end = pos;
    while ((rc = next_token(p, line, s, &pos, tok, &quoted)) > 0) {
        if (parse_option(p, line, &r, tok) != 0) goto fail;
        end = pos;
    }
    if (rc < 0) goto fail;
    r.text = strndup(s + start, end - start);
    if (!r.text) {
        nvtxcorr_labels_error(p, line, "out of memory");
        goto fail;
    }
    r.source = p->source;
    r.line = line;
    if (append_rule(p, line, &r) == 0) return;
fail:
    nvtxcorr_labels_free_rule(&r);
}
