/* Label table regexes (re: and graph:re: patterns): checked, weighed, charged to the
 * table's budgets and compiled once, at load. Patterns that would make the C library's regcomp
 * or regexec explode are refused first, since a label table must never hang or exhaust the
 * process it is loaded into. Called by the rule parser (labels_parse.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labels_impl.h"

enum {
    REGEX_WEIGHT_MAX = 1000, /* see regex_weight() */
    REGEX_NEST_MAX = 64,
};

/* Budgets across all the regexes of a table. REGEX_WEIGHT_MAX bounds one regex, but a table
 * may hold a million rules: 1000 regexes each just under the weight limit took 36 s and
 * 7.9 GB in glibc's regcomp, 10,000 exhausted 24 GB, and under `ulimit -v` glibc's regcomp
 * corrupted its heap when an allocation failed. So each regex is charged, before it is
 * compiled, a cost of REGEX_COST_FIXED + weight^2 units, where one unit is about 8 bytes of
 * compiled regex. Measured with glibc 2.39 (x86-64): a repeated optional atom, "(.?){998}x",
 * compiles to 8.05 MB (epsilon closures quadratic in the weight: 8.1 bytes per weight^2) in
 * 7 ms; shapes without an optional repeat ("[a-z]{999}x", "(ab){499}") compile to 100-220 KB,
 * so the model is an upper bound. The smallest regex ("a") takes 1 KB: REGEX_COST_FIXED.
 *   - REGEX_TABLE_BUDGET, over every regex, bounds what compiling costs: at most ~32 MB and
 *     ~30 ms of regcomp. That is 4 regexes of the maximum weight, 1000 regexes of weight 61
 *     (`^ncclDevKernel_AllReduce_.*_f32_` weighs 32), or 10,000 of weight 16.
 *   - REGEX_SCANNED_BUDGET, over the regexes every distinct kernel (or graph) meets, those
 *     without a 3-byte literal for the trigram index and graph regexes, bounds how many
 *     regexec calls every name costs: 390 small ones (a small regexec is about 5 us, 2 ms for
 *     390), fewer larger ones. Regexes with a literal are only tried on names that contain it.
 *   - REGEX_MATCH_BUDGET bounds the work of matching one name against every regex it may
 *     meet, which is all the kernel regexes (a name can contain every literal) or all the
 *     graph regexes. Compiled size says little about it: glibc's regexec builds its DFA
 *     lazily, each new state costing the NFA states in it times their epsilon closures, so a
 *     regex that must fail after many optional atoms is the worst shape: "k0_(.?){990}Z" costs
 *     3.4 s on a 255-byte name and 5.4 s on 4,000 bytes, on its first regexec (later ones reuse
 *     the cached states). Each regex is charged weight^2 * (1 + optional weight) match units,
 *     optional weight being what can match nothing (regex_weights_t). Measured on 4,000-byte
 *     names, one unit costs 0.3 to 7 ns ("(.?){200}Z": 8.4M units, 57 ms; "(.|){500}Z":
 *     125M units, 0.9 s; "(.?){150}Z": 3.5M, 10 ms; ".{990}Z": 1M, 1.7 ms), so the budget is at
 *     most ~55 ms of regexec per distinct kernel. Regexes of ordinary shape cost little:
 *     `^ncclDevKernel_AllReduce_.*_f1_` is 1,682 units, 1,000 of them 1.7M.
 * Regexes see at most the first REGEX_NAME_MAX bytes of a name (labels_match.c). */
enum {
    REGEX_COST_FIXED = 128,
    REGEX_TABLE_BUDGET = 4000000,
    REGEX_SCANNED_BUDGET = 50000,
    REGEX_MATCH_BUDGET = 8000000,
};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reports "bad regex '<src>': <why>". Returns -1. */
static int refuse_regex(labels_parser_t *p, unsigned line, const char *src, const char *why)
{
    char q[NVTXCORR_LABELS_QUOTE_MAX + 8];

    nvtxcorr_labels_error(p, line, "bad regex '%s': %s", nvtxcorr_labels_excerpt(src, q, sizeof(q)),
                          why);
    return -1;
}

/* Why the token at src[i] must not reach glibc, or NULL. Stacked quantifiers ("x?++++",
 * undefined in POSIX ERE) are refused outright: each one multiplies glibc's epsilon closures
 * (12 of them take seconds and 250 MB). So are back-references: ERE does not define them, and
 * glibc's extension makes regexec exponential. *after_quantifier carries from one token to
 * the next. */
static const char *regex_refusal(const char *src, size_t i, size_t depth, int *after_quantifier)
{
    char c = src[i];
    int quantifier = c == '*' || c == '+' || c == '?' || (c == '{' && is_digit(src[i + 1]));

    if (quantifier && *after_quantifier) return "a quantifier cannot follow a quantifier";
    *after_quantifier = quantifier;
    if (c == '\\' && src[i + 1] >= '1' && src[i + 1] <= '9')
        return "back-references are not supported";
    if (c == '(' && depth == REGEX_NEST_MAX) return "groups nested too deeply";
    return NULL;
}

/* The weight of a regex as regex_weight reads it: one sum per open group (sum[0] is the whole
 * regex) and the weight of the atom just read, which a quantifier after it multiplies. Beside
 * each, the part of that weight that can match the empty string (an atom under `?`, `*` or a
 * bound from 0, a group with an empty branch), as glibc's epsilon closures see it: `(.?){990}`
 * weighs 990 and all of it is optional. empty_branch[d]: group d has a branch with nothing in
 * it yet (`(`, `(a|`). */
typedef struct regex_weights {
    unsigned long sum[REGEX_NEST_MAX + 1], optional[REGEX_NEST_MAX + 1];
    unsigned long last, last_optional;
    unsigned char empty_branch[REGEX_NEST_MAX + 1], nullable[REGEX_NEST_MAX + 1];
    size_t depth;
} regex_weights_t;

static void add_atom(regex_weights_t *w, unsigned long weight, unsigned long optional)
{
    w->last = weight;
    w->last_optional = optional;
    w->sum[w->depth] += weight;
    w->optional[w->depth] += optional;
    w->empty_branch[w->depth] = 0;
}

static void repeat_last(regex_weights_t *w, unsigned long copies)
{
    w->sum[w->depth] += w->last * copies;
    w->optional[w->depth] += w->last_optional * copies;
    w->last += w->last * copies;
    w->last_optional += w->last_optional * copies;
}

/* The atom just read may match nothing (`x?`, `x*`, `x{0,n}`): all of it is optional. */
static void last_optional(regex_weights_t *w)
{
    w->optional[w->depth] += w->last - w->last_optional;
    w->last_optional = w->last;
}

/* A bound's count, read up to its last digit; past 100,000 (far over any limit) it stops
 * growing. */
static unsigned long read_count(const char *src, size_t *i)
{
    unsigned long n = 0;

    for (; is_digit(src[*i]); (*i)++) {
        if (n < 100000) n = n * 10 + (unsigned long)(src[*i] - '0');
    }
    return n;
}

/* The extra copies of an atom that the bound "{n}", "{n,}" or "{n,m}" makes (src[*i] is its
 * first digit), read up to its end: n - 1, or m - 1 when m is given. *min: n. */
static unsigned long bound_copies(const char *src, size_t *i, unsigned long *min)
{
    unsigned long n = read_count(src, i);

    *min = n;
    if (src[*i] == ',') {
        (*i)++;
        if (is_digit(src[*i])) n = read_count(src, i);
    }
    if (src[*i] == '}') (*i)++;
    return n > 1 ? n - 1 : 0;
}

/* Adds the token at src[*i] to the weights and moves past it. Anchors, '|', '*' and '?' weigh
 * nothing: they make no copies. */
static void weigh_token(regex_weights_t *w, const char *src, size_t *i)
{
    char c = src[(*i)++];

    if (c == '\\') {
        if (src[*i]) (*i)++;
        add_atom(w, 1, 0);
    } else if (c == '[') {
        /* A bracket expression is one atom; unclosed, it runs to the end. */
        const char *end = nvtxcorr_labels_bracket_end(src + *i - 1, BRACKET_REGEX);
        *i = end ? (size_t)(end - src) + 1 : strlen(src);
        add_atom(w, 1, 0);
    } else if (c == '(') {
        w->depth++;
        w->sum[w->depth] = w->optional[w->depth] = 0;
        w->empty_branch[w->depth] = 1;
        w->nullable[w->depth] = 0;
        w->last = w->last_optional = 0;
    } else if (c == '|') {
        if (w->empty_branch[w->depth]) w->nullable[w->depth] = 1; /* "(|a", "(a||b" */
        w->empty_branch[w->depth] = 1;
        w->last = w->last_optional = 0;
    } else if (c == ')' && w->depth > 0) {
        size_t d = w->depth--;
        unsigned long group = w->sum[d] ? w->sum[d] : 1;
        int nullable = w->nullable[d] || w->empty_branch[d];
        add_atom(w, group, nullable ? group : w->optional[d]);
    } else if (c == '{' && is_digit(src[*i])) {
        unsigned long min = 1;
        if (w->last > 0) {
            repeat_last(w, bound_copies(src, i, &min));
            if (min == 0) last_optional(w);
        } else {
            w->last = 1; /* a bound with nothing to repeat: regcomp refuses it */
        }
    } else if (c == '+') {
        if (w->last > 0) repeat_last(w, 1); /* glibc builds x+ as x x* */
    } else if (c == '*' || c == '?') {
        if (w->last > 0) last_optional(w);
    } else if (c != '^' && c != '$') {
        add_atom(w, 1, 0);
    }
}

/* An upper bound on the NFA copies glibc's regcomp makes for repetition: it expands `x{n}`
 * into n copies of x and `x+` into two, so nested repetitions multiply
 * ("((a{100}){100}){100}" takes 200 MB and a second; one more level exhausts memory). Regexes
 * glibc must not see at all are refused first (regex_refusal). *optional: how much of that
 * weight can match nothing. Returns 0, or -1 after reporting. */
static int regex_weight(labels_parser_t *p, unsigned line, const char *src, unsigned long *weight,
                        unsigned long *optional)
{
    regex_weights_t w;
    int after_quantifier = 0;

    memset(&w, 0, sizeof(w));
    for (size_t i = 0; src[i];) {
        const char *why = regex_refusal(src, i, w.depth, &after_quantifier);
        if (why) return refuse_regex(p, line, src, why);
        weigh_token(&w, src, &i);
        if (w.sum[w.depth] > REGEX_WEIGHT_MAX || w.last > REGEX_WEIGHT_MAX) {
            char why_limit[64];
            snprintf(why_limit, sizeof(why_limit), "repetition too large (limit %d)",
                     REGEX_WEIGHT_MAX);
            return refuse_regex(p, line, src, why_limit);
        }
    }
    *weight = *optional = 0;
    for (size_t k = 0; k <= w.depth; k++) { /* groups left open are regcomp's error */
        *weight += w.sum[k];
        *optional += w.optional[k];
    }
    if (*optional > *weight) *optional = *weight;
    return 0;
}

/* Charges a regex to the table's budgets (see REGEX_TABLE_BUDGET) before it is compiled.
 * The first regex over a budget is reported; the table is then rejected, and later regexes
 * are checked but not compiled. Returns 0, or -1 when the regex must not be compiled. */
static int charge_regex(labels_parser_t *p, unsigned line, const char *src, unsigned long weight,
                        unsigned long optional, int graph, int scanned)
{
    nvtxcorr_label_table_t *t = p->t;
    unsigned long cost = REGEX_COST_FIXED + weight * weight;
    unsigned long match = weight * weight * (1 + optional);
    unsigned long *matched = graph ? &t->graph_match_cost : &t->kernel_match_cost;
    char q[NVTXCORR_LABELS_QUOTE_MAX + 8];

    if (t->regex_budget_spent) return -1;
    if (t->regex_cost + cost > REGEX_TABLE_BUDGET) {
        nvtxcorr_labels_error(p, line,
                              "regex budget exceeded: the table's regexes cost more than %d "
                              "(this one %lu, the ones before it %lu; see docs/labels.md, Cost)",
                              REGEX_TABLE_BUDGET, cost, t->regex_cost);
        t->regex_budget_spent = 1;
        return -1;
    }
    if (scanned && t->scanned_cost + cost > REGEX_SCANNED_BUDGET) {
        nvtxcorr_labels_error(p, line,
                              "regex budget exceeded: regexes tried on every name (graph regexes "
                              "and those without a 3-byte literal) cost more than %d (this one "
                              "%lu, the ones before it %lu; see docs/labels.md, Cost)",
                              REGEX_SCANNED_BUDGET, cost, t->scanned_cost);
        t->regex_budget_spent = 1;
        return -1;
    }
    if (*matched + match > REGEX_MATCH_BUDGET) {
        nvtxcorr_labels_error(p, line,
                              "regex budget exceeded: matching one %s against every %s regex "
                              "could cost more than %d (this one '%s' %lu, the ones before it "
                              "%lu; see docs/labels.md, Cost)",
                              graph ? "graph" : "kernel name", graph ? "graph" : "kernel",
                              REGEX_MATCH_BUDGET, nvtxcorr_labels_excerpt(src, q, sizeof(q)), match,
                              *matched);
        t->regex_budget_spent = 1;
        return -1;
    }
    t->regex_cost += cost;
    if (scanned) t->scanned_cost += cost;
    *matched += match;
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

    if (strchr(src, '|')) return strdup("");
    for (size_t i = 0; i <= n; i++) {
        char c = src[i];
        if (depth == 0 && c != '\0' && !strchr(".[]()*+?{}|^$\\", c)) {
            if (run == 0) run_at = i;
            run++;
            continue;
        }
        if (run > 0 && (c == '*' || c == '?' || c == '{')) {
            /* The quantifier takes the last character, all of it if multi-byte. */
            while (run > 0 && ((unsigned char)src[run_at + run - 1] & 0xC0) == 0x80)
                run--;
            if (run > 0) run--;
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
            const char *end = nvtxcorr_labels_bracket_end(src + i, BRACKET_REGEX);
            if (!end) break;
            i = (size_t)(end - src);
        } else if (c == '{') {
            while (src[i + 1] && src[i] != '}')
                i++;
        }
    }
    return strndup(src + best_at, best);
}

int nvtxcorr_labels_compile_regex(labels_parser_t *p, unsigned line, label_rule_t *r,
                                  const char *src)
{
    char err[256];
    int rc;
    unsigned long weight = 0, optional = 0;

    if (regex_weight(p, line, src, &weight, &optional) != 0) return -1;
    /* A regex rule keeps its required literal where a glob keeps its text. */
    r->pattern = regex_literal(src);
    if (!r->pattern) {
        nvtxcorr_labels_error(p, line, "out of memory");
        return -1;
    }
    r->lit = r->pattern;
    r->lit_len = strlen(r->pattern);
    int graph = r->kind == RULE_GRAPH_REGEX;
    if (charge_regex(p, line, src, weight, optional, graph, graph || r->lit_len < 3) != 0)
        return -1;
    r->re = malloc(sizeof(*r->re));
    if (!r->re) {
        nvtxcorr_labels_error(p, line, "out of memory");
        return -1;
    }
    rc = regcomp(r->re, src, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        regerror(rc, r->re, err, sizeof(err));
        free(r->re);
        r->re = NULL;
        return refuse_regex(p, line, src, err);
    }
    return 0;
}
