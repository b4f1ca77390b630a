/* The strict JSON reader of json.h: RFC 8259, nothing more (no comments, no trailing commas,
 * no NaN), nesting at most JSON_DEPTH deep so a hostile file cannot exhaust the stack. */
#include <stdlib.h>
#include <string.h>
#include "json.h"

enum { JSON_DEPTH = 64 };

typedef struct parser {
    const char *s, *end, *why;
} parser_t;

static void skip_space(parser_t *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static int fail(parser_t *p, const char *why)
{
    if (!p->why) p->why = why;
    return -1;
}

static int hex4(parser_t *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *p->s++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(p, "a \\u escape that is not hexadecimal");
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned c)
{
    if (c < 0x80) return o[0] = (char)c, 1;
    if (c < 0x800) return o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), 2;
    if (c < 0x10000) {
        o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3f)), o[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* A string at p->s (past its opening quote), decoded into a malloc'd copy, which is never
 * longer than the text; p->s ends past the closing quote. */
static char *string(parser_t *p)
{
    const char *q = p->s;
    while (q < p->end && *q != '"')
        q += *q == '\\' && q + 1 < p->end ? 2 : 1;
    if (q >= p->end) return fail(p, "a string without its closing quote"), NULL;
    const char *stop = q;
    char *out = malloc((size_t)(stop - p->s) + 1), *o = out;
    if (!out) return fail(p, "out of memory"), NULL;
    while (p->s < stop) {
        unsigned char c = (unsigned char)*p->s++;
        if (c < 0x20) return free(out), fail(p, "a control character in a string"), NULL;
        if (c != '\\') {
            *o++ = (char)c;
            continue;
        }
        char e = *p->s++;
        const char *plain = e ? strchr("\"\\/bfnrt", e) : NULL;
        if (plain) {
            *o++ = "\"\\/\b\f\n\r\t"[plain - "\"\\/bfnrt"];
            continue;
        }
        if (e != 'u') return free(out), fail(p, "an unknown escape in a string"), NULL;
        unsigned u, lo;
        if (stop - p->s < 4 || hex4(p, &u)) return free(out), fail(p, "a bad \\u escape"), NULL;
        if (u >= 0xd800 && u < 0xdc00 && stop - p->s >= 6 && p->s[0] == '\\' && p->s[1] == 'u') {
            p->s += 2;
            if (hex4(p, &lo)) return free(out), NULL;
            if (lo < 0xdc00 || lo >= 0xe000)
                return free(out), fail(p, "a lone surrogate in a string"), NULL;
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        } else if (u >= 0xd800 && u < 0xe000) {
            return free(out), fail(p, "a lone surrogate in a string"), NULL;
        }
        if (u == 0) return free(out), fail(p, "a NUL character in a string"), NULL;
        o += put_utf8(o, u);
    }
    *o = 0;
    p->s = stop + 1;
    return out;
}

static int literal(parser_t *p, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0)
        return fail(p, "not a JSON value");
    p->s += n;
    return 0;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?: a count when it is a plain integer that fits. */
static int number(parser_t *p, json_value_t *v)
{
    const char *s = p->s;
    int negative = s < p->end && *s == '-', integer = 1, overflow = 0;
    uint64_t n = 0;
    if (negative) s++;
    if (s >= p->end || *s < '0' || *s > '9') return fail(p, "not a JSON value");
    if (*s == '0' && s + 1 < p->end && s[1] >= '0' && s[1] <= '9')
        return fail(p, "a number with a leading zero");
    for (; s < p->end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (n > (UINT64_MAX - d) / 10) overflow = 1;
        n = n * 10 + d;
    }
    if (s < p->end && *s == '.') {
        integer = 0;
        if (++s >= p->end || *s < '0' || *s > '9') return fail(p, "a number cut short");
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        integer = 0;
        if (++s < p->end && (*s == '+' || *s == '-')) s++;
        if (s >= p->end || *s < '0' || *s > '9') return fail(p, "a number cut short");
        while (s < p->end && *s >= '0' && *s <= '9')
            s++;
    }
    p->s = s;
    v->kind = integer && !negative && !overflow ? JSON_COUNT : JSON_NUMBER;
    v->count = v->kind == JSON_COUNT ? n : 0;
    return 0;
}

static int value(parser_t *p, json_value_t *v, int depth);

/* The members of an array or an object, up to `close`, into v->items. */
static int members(parser_t *p, json_value_t *v, int depth, char close)
{
    size_t cap = 0;
    skip_space(p);
    if (p->s < p->end && *p->s == close) return p->s++, 0;
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 8;
            json_value_t *grown = realloc(v->items, cap * sizeof *grown);
            if (!grown) return fail(p, "out of memory");
            v->items = grown;
        }
        json_value_t *m = &v->items[v->n++]; /* counted at once: json_free frees its key */
        memset(m, 0, sizeof *m);
        skip_space(p);
        if (close == '}') {
            if (p->s >= p->end || *p->s != '"')
                return fail(p, "an object key that is not a string");
            p->s++;
            if (!(m->key = string(p))) return -1;
            skip_space(p);
            if (p->s >= p->end || *p->s != ':') return fail(p, "a key without ':'");
            p->s++;
        }
        if (value(p, m, depth + 1)) return -1;
        skip_space(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == close) return p->s++, 0;
        return fail(p,
                    close == '}' ? "an object without ',' or '}'" : "an array without ',' or ']'");
    }
}

static int value(parser_t *p, json_value_t *v, int depth)
{
    if (depth > JSON_DEPTH) return fail(p, "nested too deep");
    skip_space(p);
    if (p->s >= p->end) return fail(p, "the text ends before a value");
    switch (*p->s) {
    case '{':
        p->s++, v->kind = JSON_OBJECT;
        return members(p, v, depth, '}');
    case '[':
        p->s++, v->kind = JSON_ARRAY;
        return members(p, v, depth, ']');
    case '"':
        p->s++, v->kind = JSON_STRING;
        return (v->string = string(p)) ? 0 : -1;
    case 't':
        v->kind = JSON_BOOL, v->count = 1;
        return literal(p, "true");
    case 'f':
        v->kind = JSON_BOOL;
        return literal(p, "false");
    case 'n':
        v->kind = JSON_NULL;
        return literal(p, "null");
    default:
        return number(p, v);
    }
}

int json_parse(const char *text, size_t len, json_value_t *root, const char **why, size_t *at)
{
    parser_t p = {text, text + len, NULL};
    memset(root, 0, sizeof *root);
    if (value(&p, root, 0) == 0) {
        skip_space(&p);
        if (p.s == p.end) return 0;
        fail(&p, "more text after the value");
    }
    *why = p.why, *at = (size_t)(p.s - text);
    json_free(root);
    return -1;
}

void json_free(json_value_t *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free((char *)v->items[i].key);
        json_free(&v->items[i]);
    }
    free(v->items);
    free((char *)v->string);
    memset(v, 0, sizeof *v);
}

const json_value_t *json_get(const json_value_t *object, const char *key)
{
    if (object == NULL || object->kind != JSON_OBJECT) return NULL;
    for (size_t i = 0; i < object->n; i++)
        if (strcmp(object->items[i].key, key) == 0) return &object->items[i];
    return NULL;
}

const json_value_t *json_get_kind(const json_value_t *object, const char *key, json_kind_t kind)
{
    const json_value_t *v = json_get(object, key);
    return v && v->kind == kind ? v : NULL;
}
