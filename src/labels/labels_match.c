/* Label table matcher: finds the first rule that matches a kernel or graph and expands its
 * label. The core calls this once per distinct kernel handle or graph and caches the
 * answer, but a process can load 100,000 distinct kernels (JIT-compiled Triton, autotuning)
 * against a generated table of 10,000 rules, so a linear scan of every rule per kernel is
 * not an option. Three structures, built once at load, keep it sub-linear:
 *   - rules without glob metacharacters sit in a hash table keyed by their literal text;
 *   - globs and regexes are filed under one trigram of a literal substring every match
 *     must contain, so a name only meets the rules whose trigram it contains (then memmem,
 *     then fnmatch or regexec);
 *   - rules with no such literal of 3 bytes are scanned, but only below the best rule found
 *     so far.
 * Rule order is precedence, so the smallest matching rule index wins. Graph rules are few
 * (one per captured batch size at most) and are scanned in order. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels_impl.h"

enum { NO_RULE = UINT32_MAX, SEEN_SLOTS = 1024 };

/* regexec's time grows with the name's length (linearly for most regexes: 22 ms for
 * "[a-z]{999}x" on 4000 bytes), and demangled template names run to tens of kilobytes in
 * `nvtxcorr explain`. A regex sees at most this many bytes of a name, from its start; the
 * preload library's names are shorter anyway. See REGEX_TABLE_BUDGET in labels_regex.c. */
enum { REGEX_NAME_MAX = 4096 };

static int regex_matches(const regex_t *re, const char *s, size_t len)
{
#ifdef REG_STARTEND /* glibc, musl and the BSDs: match s[0, len) without copying it */
    regmatch_t range = {0, (regoff_t)(len < REGEX_NAME_MAX ? len : REGEX_NAME_MAX)};
    return regexec(re, s, 1, &range, REG_STARTEND) == 0;
#else
    (void)len;
    return regexec(re, s, 0, NULL, 0) == 0;
#endif
}

static uint32_t hash_tri(uint32_t tri)
{
    return tri * 2654435761u;
}

static uint32_t trigram(const char *s)
{
    return (uint32_t)(unsigned char)s[0] << 16 | (uint32_t)(unsigned char)s[1] << 8 |
           (unsigned char)s[2];
}

static size_t pow2_at_least(size_t n)
{
    size_t p = 16;

    while (p < n)
        p *= 2;
    return p;
}

static int list_push(index_list_t *l, uint32_t rule)
{
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        uint32_t *n = realloc(l->rules, cap * sizeof(*n));
        if (!n) return -1;
        l->rules = n;
        l->cap = cap;
    }
    l->rules[l->count++] = rule;
    return 0;
}

static tri_bucket_t *tri_slot(const nvtxcorr_label_table_t *t, uint32_t tri)
{
    size_t mask = t->tri_size - 1;

    for (size_t i = hash_tri(tri) & mask;; i = (i + 1) & mask) {
        if (t->tri[i].tri == tri || t->tri[i].tri == 0) return &t->tri[i];
    }
}

static int build_exact(nvtxcorr_label_table_t *t, size_t n)
{
    t->exact_size = pow2_at_least(n * 2);
    t->exact = calloc(t->exact_size, sizeof(*t->exact));
    if (!t->exact) return -1;
    for (size_t r = 0; r < t->count; r++) {
        const label_rule_t *rule = &t->rules[r];
        if (rule->kind != RULE_KERNEL_EXACT) continue;
        size_t mask = t->exact_size - 1;
        for (size_t i = nvtxcorr_hash_str(rule->pattern) & mask;; i = (i + 1) & mask) {
            if (!t->exact[i].key) {
                t->exact[i].key = rule->pattern;
                t->exact[i].rule = (uint32_t)r;
                break;
            }
            if (strcmp(t->exact[i].key, rule->pattern) == 0)
                break; /* an earlier rule with the same text always wins */
        }
    }
    return 0;
}

static int indexed(const label_rule_t *r)
{
    return (r->kind == RULE_KERNEL_GLOB || r->kind == RULE_KERNEL_REGEX) && r->lit_len >= 3;
}

/* Files a rule under the trigram of its literal that is rarest among all rules' literals
 * (counted in an approximate sketch), so rules sharing common text ("kernel", "gemm") do
 * not pile into one bucket that every name then walks. */
static int file_indexed(nvtxcorr_label_table_t *t, uint32_t r, const uint32_t *freq)
{
    const label_rule_t *rule = &t->rules[r];
    size_t pick = 0;
    uint32_t pick_freq = UINT32_MAX;

    for (size_t k = 0; k + 3 <= rule->lit_len; k++) {
        uint32_t f = freq[hash_tri(trigram(rule->lit + k)) >> 16];
        if (f < pick_freq) {
            pick = k;
            pick_freq = f;
        }
    }
    uint32_t tri = trigram(rule->lit + pick);
    tri_bucket_t *b = tri_slot(t, tri);
    b->tri = tri;
    if (b->count == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 4;
        uint32_t *n = realloc(b->rules, cap * sizeof(*n));
        if (!n) return -1;
        b->rules = n;
        b->cap = cap;
    }
    b->rules[b->count++] = r;
    return 0;
}

int nvtxcorr_labels_build_index(nvtxcorr_label_table_t *t)
{
    size_t exact = 0, nindexed = 0;
    uint32_t *freq;

    for (size_t r = 0; r < t->count; r++) {
        exact += t->rules[r].kind == RULE_KERNEL_EXACT;
        nindexed += indexed(&t->rules[r]);
    }
    if (build_exact(t, exact) != 0) return -1;
    t->tri_size = pow2_at_least(nindexed * 2);
    t->tri = calloc(t->tri_size, sizeof(*t->tri));
    freq = calloc(1u << 16, sizeof(*freq));
    if (!t->tri || !freq) {
        free(freq);
        return -1;
    }
    for (size_t r = 0; r < t->count; r++) {
        const label_rule_t *rule = &t->rules[r];
        for (size_t k = 0; indexed(rule) && k + 3 <= rule->lit_len; k++)
            freq[hash_tri(trigram(rule->lit + k)) >> 16]++;
    }
    for (size_t r = 0; r < t->count; r++) {
        const label_rule_t *rule = &t->rules[r];
        int rc = 0;

        if (indexed(rule)) {
            rc = file_indexed(t, (uint32_t)r, freq);
        } else if (rule->kind == RULE_KERNEL_GLOB) {
            rc = list_push(&t->short_globs, (uint32_t)r);
        } else if (rule->kind == RULE_KERNEL_REGEX) {
            rc = list_push(&t->regexes, (uint32_t)r);
        } else if (rule->kind == RULE_GRAPH_GLOB || rule->kind == RULE_GRAPH_REGEX) {
            rc = list_push(&t->graphs, (uint32_t)r);
        }
        if (rc != 0) {
            free(freq);
            return -1;
        }
    }
    free(freq);
    return 0;
}

void nvtxcorr_labels_free(nvtxcorr_label_table_t *t)
{
    if (!t) return;
    nvtxcorr_labels_free_rules(t);
    free(t->exact);
    for (size_t i = 0; i < t->tri_size; i++)
        free(t->tri[i].rules);
    free(t->tri);
    free(t->short_globs.rules);
    free(t->regexes.rules);
    free(t->graphs.rules);
    free(t);
}

size_t nvtxcorr_labels_rule_count(const nvtxcorr_label_table_t *t)
{
    return t ? t->count : 0;
}

const char *nvtxcorr_labels_rule_text(const nvtxcorr_label_table_t *t,
                                      const nvtxcorr_label_result_t *res)
{
    if (!t || !res || !res->matched) return NULL;
    for (size_t r = 0; r < t->count; r++) {
        if (t->rules[r].source == res->source && t->rules[r].line == res->line)
            return t->rules[r].text;
    }
    return NULL;
}

/* The three names a kernel rule looks at, without repeats (a plain C name is all three). */
typedef struct name_set {
    const char *s[3];
    size_t len[3];
    int n;
} name_set_t;

static void name_set_init(name_set_t *ns, const nvtxcorr_kernel_names_t *names)
{
    const char *in[3] = {names->function, names->demangled, names->mangled};

    ns->n = 0;
    for (int i = 0; i < 3; i++) {
        const char *s = in[i] ? in[i] : "";
        int dup = 0;
        for (int k = 0; k < ns->n; k++)
            dup |= strcmp(ns->s[k], s) == 0;
        if (!dup) {
            ns->s[ns->n] = s;
            ns->len[ns->n] = strlen(s);
            ns->n++;
        }
    }
}

static int kernel_rule_matches(const label_rule_t *r, const name_set_t *ns)
{
    for (int i = 0; i < ns->n; i++) {
        if (r->lit_len > 0 && !memmem(ns->s[i], ns->len[i], r->lit, r->lit_len)) continue;
        if (r->kind == RULE_KERNEL_REGEX ? regex_matches(r->re, ns->s[i], ns->len[i])
                                         : fnmatch(r->pattern, ns->s[i], 0) == 0)
            return 1;
    }
    return 0;
}

/* Rules in a list ascend; only those below *best can still win. */
static void scan_list(const nvtxcorr_label_table_t *t, const uint32_t *rules, uint32_t count,
                      const name_set_t *ns, uint32_t *best)
{
    for (uint32_t k = 0; k < count && rules[k] < *best; k++) {
        if (kernel_rule_matches(&t->rules[rules[k]], ns)) {
            *best = rules[k];
            return;
        }
    }
}

/* Remembers trigrams already looked up for this kernel. When the set is full a trigram is
 * looked up again, which costs time but never changes the answer. */
static int seen_before(uint32_t *seen, uint32_t tri)
{
    for (uint32_t i = hash_tri(tri) & (SEEN_SLOTS - 1), probes = 0; probes < 8;
         i = (i + 1) & (SEEN_SLOTS - 1), probes++) {
        if (seen[i] == tri) return 1;
        if (seen[i] == 0) {
            seen[i] = tri;
            return 0;
        }
    }
    return 0;
}

static uint32_t best_kernel_rule(const nvtxcorr_label_table_t *t, const name_set_t *ns)
{
    uint32_t best = NO_RULE;

    for (int i = 0; i < ns->n; i++) {
        size_t mask = t->exact_size - 1;
        for (size_t k = nvtxcorr_hash_str(ns->s[i]) & mask; t->exact[k].key; k = (k + 1) & mask) {
            if (strcmp(t->exact[k].key, ns->s[i]) == 0) {
                if (t->exact[k].rule < best) best = t->exact[k].rule;
                break;
            }
        }
    }

    uint32_t seen[SEEN_SLOTS];
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < ns->n; i++) {
        for (size_t p = 0; p + 3 <= ns->len[i]; p++) {
            uint32_t tri = trigram(ns->s[i] + p);
            if (seen_before(seen, tri)) continue;
            const tri_bucket_t *b = tri_slot(t, tri);
            if (b->tri == tri) scan_list(t, b->rules, b->count, ns, &best);
        }
    }
    scan_list(t, t->short_globs.rules, t->short_globs.count, ns, &best);
    scan_list(t, t->regexes.rules, t->regexes.count, ns, &best);
    return best;
}

/* Appends to a label of at most NVTXCORR_LABEL_MAX - 1 bytes; longer text is cut. */
typedef struct label_buf {
    char *s;
    size_t len;
    int cut;
} label_buf_t;

/* Control bytes (from a kernel name, or a quoted label in the table) are written as \xNN:
 * an NVTX tool and the terminals that show its output must never get them raw. */
static void put(label_buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";

    for (size_t i = 0; i < n && !b->cut;) {
        size_t room = NVTXCORR_LABEL_MAX - 1 - b->len, k = 0;
        while (i + k < n && !nvtxcorr_is_control((unsigned char)s[i + k]))
            k++;
        if (k > room) {
            k = room;
            b->cut = 1;
        }
        memcpy(b->s + b->len, s + i, k);
        b->len += k;
        i += k;
        if (b->cut || i == n) break;
        if (room - k < 4) { /* never half an escape */
            b->cut = 1;
            break;
        }
        unsigned char c = (unsigned char)s[i++];
        b->s[b->len++] = '\\';
        b->s[b->len++] = 'x';
        b->s[b->len++] = hex[c >> 4];
        b->s[b->len++] = hex[c & 15];
    }
    b->s[b->len] = '\0';
}

/* A cut label must not end inside a UTF-8 sequence: NVTX tools reject or mangle it. */
static void trim_partial_utf8(label_buf_t *b)
{
    size_t i = b->len, need;

    while (i > 0 && ((unsigned char)b->s[i - 1] & 0xC0) == 0x80 && b->len - i < 3)
        i--;
    if (i == 0) return;
    unsigned char lead = (unsigned char)b->s[i - 1];
    if (lead < 0xC0) return;
    need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (b->len - (i - 1) < need) {
        b->len = i - 1;
        b->s[b->len] = '\0';
    }
}

/* Expands a validated template: names[k] is the value of placeholder keys[k]. */
static void expand(const char *tmpl, const char *const *keys, const char *const *vals, char *out)
{
    label_buf_t b = {out, 0, 0};

    out[0] = '\0';
    for (const char *c = tmpl; *c;) {
        if ((c[0] == '{' && c[1] == '{') || (c[0] == '}' && c[1] == '}')) {
            put(&b, c, 1);
            c += 2;
        } else if (c[0] == '{') {
            const char *end = strchr(c, '}');
            size_t n = (size_t)(end - c - 1);
            for (int k = 0; keys[k]; k++) {
                if (strlen(keys[k]) == n && memcmp(keys[k], c + 1, n) == 0) {
                    put(&b, vals[k], strlen(vals[k]));
                    break;
                }
            }
            c = end + 1;
        } else {
            size_t n = strcspn(c, "{}");
            if (n == 0) n = 1; /* a lone '}' is literal */
            put(&b, c, n);
            c += n;
        }
    }
    if (b.cut) trim_partial_utf8(&b);
}

static void copy_label(char *out, const char *s)
{
    label_buf_t b = {out, 0, 0};

    out[0] = '\0';
    put(&b, s, strlen(s));
    if (b.cut) trim_partial_utf8(&b);
}

static void fill_result(const nvtxcorr_label_table_t *t, uint32_t r, const char *const *keys,
                        const char *const *vals, nvtxcorr_label_result_t *out)
{
    const label_rule_t *rule = &t->rules[r];

    out->matched = 1;
    out->skip = rule->label == NULL;
    out->label[0] = '\0';
    if (rule->label) expand(rule->label, keys, vals, out->label);
    out->has_color = rule->has_color;
    out->color = rule->color;
    out->category = rule->category;
    out->source = rule->source;
    out->line = rule->line;
}

static void clear_result(nvtxcorr_label_result_t *out)
{
    out->matched = 0;
    out->skip = 0;
    out->label[0] = '\0';
    out->has_color = 0;
    out->color = 0;
    out->category = NULL;
    out->source = NULL;
    out->line = 0;
}

int nvtxcorr_labels_match_kernel(const nvtxcorr_label_table_t *t,
                                 const nvtxcorr_kernel_names_t *names, nvtxcorr_label_result_t *out)
{
    static const char *const keys[] = {"function", "demangled", "mangled", NULL};
    static const nvtxcorr_kernel_names_t none = {"", "", ""};
    name_set_t ns;

    clear_result(out);
    if (!names) names = &none;
    const char *vals[] = {names->function ? names->function : "",
                          names->demangled ? names->demangled : "",
                          names->mangled ? names->mangled : ""};
    if (t && t->count > 0) {
        name_set_init(&ns, names);
        uint32_t r = best_kernel_rule(t, &ns);
        if (r != NO_RULE) {
            fill_result(t, r, keys, vals, out);
            return 1;
        }
    }
    copy_label(out->label, vals[0]);
    return 0;
}

void nvtxcorr_graph_name(const nvtxcorr_graph_keys_t *keys, char *buf, size_t size)
{
    if (buf && size) snprintf(buf, size, "graph#%u", keys ? keys->ordinal : 0);
}

void nvtxcorr_graph_descriptor(const nvtxcorr_graph_keys_t *keys, char *buf, size_t size)
{
    static const nvtxcorr_graph_keys_t zero;

    if (!buf || !size) return;
    if (!keys) keys = &zero;
    snprintf(buf, size, "graph#%u nodes=%u kernels=%u sig=%s top=%s", keys->ordinal, keys->nodes,
             keys->kernels, keys->sig ? keys->sig : "", keys->top ? keys->top : "");
}

void nvtxcorr_graph_default_label(const nvtxcorr_graph_keys_t *keys, char *buf, size_t size)
{
    if (buf && size)
        snprintf(buf, size, "graph#%u (%u kernels)", keys ? keys->ordinal : 0,
                 keys ? keys->kernels : 0);
}

static int graph_rule_matches(const label_rule_t *r, const char *const *vals, const char *desc)
{
    if (r->kind == RULE_GRAPH_REGEX) return regex_matches(r->re, desc, strlen(desc));
    switch (r->key) {
    case GKEY_NAME:
        return fnmatch(r->pattern, vals[0], 0) == 0 || fnmatch(r->pattern, desc, 0) == 0;
    case GKEY_ORDINAL:
        return fnmatch(r->pattern, vals[1], 0) == 0;
    case GKEY_NODES:
        return fnmatch(r->pattern, vals[2], 0) == 0;
    case GKEY_KERNELS:
        return fnmatch(r->pattern, vals[3], 0) == 0;
    case GKEY_SIG:
        return fnmatch(r->pattern, vals[4], 0) == 0;
    case GKEY_TOP:
        return fnmatch(r->pattern, vals[5], 0) == 0;
    }
    return 0;
}

int nvtxcorr_labels_match_graph(const nvtxcorr_label_table_t *t, const nvtxcorr_graph_keys_t *keys,
                                nvtxcorr_label_result_t *out)
{
    static const char *const names[] = {"graph", "ordinal", "nodes", "kernels", "sig", "top", NULL};
    static const nvtxcorr_graph_keys_t zero;
    char graph[32], ordinal[16], nodes[16], kernels[16];
    char desc[NVTXCORR_LABEL_MAX * 2];

    clear_result(out);
    if (!keys) keys = &zero;
    nvtxcorr_graph_name(keys, graph, sizeof(graph));
    snprintf(ordinal, sizeof(ordinal), "%u", keys->ordinal);
    snprintf(nodes, sizeof(nodes), "%u", keys->nodes);
    snprintf(kernels, sizeof(kernels), "%u", keys->kernels);
    nvtxcorr_graph_descriptor(keys, desc, sizeof(desc));
    const char *vals[] = {
        graph, ordinal, nodes, kernels, keys->sig ? keys->sig : "", keys->top ? keys->top : ""};

    if (t) {
        for (uint32_t k = 0; k < t->graphs.count; k++) {
            uint32_t r = t->graphs.rules[k];
            if (graph_rule_matches(&t->rules[r], vals, desc)) {
                fill_result(t, r, names, vals, out);
                return 1;
            }
        }
    }
    nvtxcorr_graph_default_label(keys, out->label, sizeof(out->label));
    return 0;
}
