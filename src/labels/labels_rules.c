/* What the label table's loader, rule parser, regex compiler and matcher share, below them
 * all: error reporting into the caller's callback (counted, the first ERRORS_SHOWN shown),
 * excerpts of offending text for messages, and freeing rules. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels_impl.h"

enum { ERRORS_SHOWN = 20 };

void nvtxcorr_labels_report(labels_parser_t *p, unsigned line, const char *reason)
{
    nvtxcorr_label_error_t e = {p->source, line, reason};
    p->report(p->ctx, &e);
}

const char *nvtxcorr_label_error_text(const nvtxcorr_label_error_t *e, char *buf, size_t size)
{
    if (e->line)
        snprintf(buf, size, "%s:%u: %s", e->source, e->line, e->reason);
    else
        snprintf(buf, size, "%s: %s", e->source, e->reason);
    return buf;
}

void nvtxcorr_labels_error(labels_parser_t *p, unsigned line, const char *fmt, ...)
{
    char reason[512];
    va_list ap;

    p->errors++;
    if (p->errors > ERRORS_SHOWN) {
        p->hidden++;
        return;
    }
    if (!p->report) return;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    nvtxcorr_labels_report(p, line, reason);
}

/* Offending text for a message, the `n` bytes at s: at most NVTXCORR_LABELS_QUOTE_MAX of them, cut
 * on a UTF-8 boundary. Written into buf (NVTXCORR_LABELS_QUOTE_MAX + 8 bytes), which it returns. */
const char *nvtxcorr_labels_excerpt_bytes(const char *s, size_t n, char *buf, size_t size)
{
    if (n <= NVTXCORR_LABELS_QUOTE_MAX) {
        snprintf(buf, size, "%.*s", (int)n, s);
        return buf;
    }
    n = NVTXCORR_LABELS_QUOTE_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    snprintf(buf, size, "%.*s...", (int)n, s);
    return buf;
}

const char *nvtxcorr_labels_excerpt(const char *s, char *buf, size_t size)
{
    return nvtxcorr_labels_excerpt_bytes(s, strlen(s), buf, size);
}

void nvtxcorr_labels_free_rule(label_rule_t *r)
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

/* Frees what the parser allocated; labels_match.c frees the indexes. */
void nvtxcorr_labels_free_rules(nvtxcorr_label_table_t *t)
{
    for (size_t i = 0; i < t->count; i++)
        nvtxcorr_labels_free_rule(&t->rules[i]);
    free(t->rules);
    free(t->file_source);
}
