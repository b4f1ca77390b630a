/* Private to the label table: the rule representation and loader state shared by the
 * loader (labels_load.c), the rule parser (labels_parse.c, labels_regex.c), the matcher
 * (labels_match.c) and what they all use (labels_rules.c, labels_glob.c). Calls go one
 * way: load -> parse -> regex -> rules and glob; load -> match -> rules. Not for the preload
 * core, which uses labels.h only. */
#ifndef NVTXCORR_LABELS_IMPL_H
#define NVTXCORR_LABELS_IMPL_H

#include <regex.h>
#include <stdint.h>

#include "labels.h"

enum rule_kind {
    RULE_KERNEL_EXACT, /* glob without metacharacters: a hash lookup */
    RULE_KERNEL_GLOB,
    RULE_KERNEL_REGEX,
    RULE_GRAPH_GLOB,
    RULE_GRAPH_REGEX,
};

/* What a graph rule's glob looks at: graph#N or the descriptor, or one key's value. */
enum graph_key {
    GKEY_NAME,
    GKEY_ORDINAL,
    GKEY_NODES,
    GKEY_KERNELS,
    GKEY_SIG,
    GKEY_TOP,
};

typedef struct label_rule {
    enum rule_kind kind;
    enum graph_key key;
    char *pattern;   /* glob or exact text; for a regex its required literal (the
                        source is not kept, the compiled form is) */
    regex_t *re;     /* compiled once at load, for the *_REGEX kinds */
    const char *lit; /* a substring every match must contain ("" when none), in pattern */
    size_t lit_len;
    char *label; /* validated template with {placeholders}; NULL when skip */
    char *category;
    char *text; /* the rule as written, comment and surrounding blanks removed */
    const char *source;
    unsigned line;
    int has_color;
    uint32_t color;
} label_rule_t;

typedef struct exact_slot {
    const char *key; /* NULL: empty slot */
    uint32_t rule;
} exact_slot_t;

typedef struct tri_bucket {
    uint32_t tri; /* three bytes; 0 marks an empty slot (names contain no NUL) */
    uint32_t count, cap;
    uint32_t *rules; /* ascending rule indices */
} tri_bucket_t;

typedef struct index_list {
    uint32_t count, cap;
    uint32_t *rules;
} index_list_t;

struct nvtxcorr_label_table {
    label_rule_t *rules; /* inline rules first, then file rules: index order is precedence */
    size_t count, cap;
    char *file_source; /* the path as given: rules point at it as their source */

    exact_slot_t *exact; /* open addressing; size a power of two */
    size_t exact_size;
    tri_bucket_t *tri; /* globs and regexes by one trigram of their required literal */
    size_t tri_size;
    index_list_t short_globs; /* globs whose literal is under 3 bytes: always scanned */
    index_list_t regexes;     /* regexes likewise */
    index_list_t graphs;

    /* Regex costs spent so far while loading, against the budgets in labels_regex.c. */
    unsigned long regex_cost;   /* every regex */
    unsigned long scanned_cost; /* regexes every name meets: no 3-byte literal, graph ones */
    unsigned long kernel_match_cost, graph_match_cost; /* regexec work one name may cost */
    int regex_budget_spent; /* reported once; later regexes are not compiled */
};

enum { NVTXCORR_LABELS_LINE_MAX = 4096 }; /* bytes in one line or inline rule */

/* The state of loading one source (the file or the inline rules). */
typedef struct labels_parser {
    nvtxcorr_label_table_t *t;
    nvtxcorr_labels_report_fn report;
    void *ctx;
    const char *source; /* "NVTXCORR_LABELS_INLINE" or the table's copy of the path: messages
                           name it, rules keep it as their source */
    int is_inline;
    unsigned errors; /* in this source */
    unsigned hidden; /* errors past the number shown */
    int stop;        /* a fatal condition: no point reading further */
} labels_parser_t;

/* Reports "nvtxcorr: error: <source>:<line>: <reason>" (line 0: about the whole source),
 * counting it, up to the cap (labels_rules.c). */
void nvtxcorr_labels_error(labels_parser_t *p, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Hands one line to the caller's callback, uncounted (labels_rules.c). */
void nvtxcorr_labels_report(labels_parser_t *p, unsigned line, const char *reason);

enum { NVTXCORR_LABELS_QUOTE_MAX = 48 }; /* offending text echoed in a message */
/* Offending text for a message, the `n` bytes at s (or all of s): at most
 * NVTXCORR_LABELS_QUOTE_MAX of them, cut on a UTF-8 boundary, into buf (QUOTE_MAX + 8 bytes),
 * which is returned (labels_rules.c). */
const char *nvtxcorr_labels_excerpt_bytes(const char *s, size_t n, char *buf, size_t size);
const char *nvtxcorr_labels_excerpt(const char *s, char *buf, size_t size);

/* Checks, weighs and charges the regex src to the table's budgets, then compiles it into r,
 * with its required literal as r's pattern; 0, or -1 after reporting (labels_regex.c). */
int nvtxcorr_labels_compile_regex(labels_parser_t *p, unsigned line, label_rule_t *r,
                                  const char *src);

/* Parses one rule and appends it to p->t, or reports why not (labels_parse.c). `s` is
 * NUL-terminated valid UTF-8 of at most NVTXCORR_LABELS_LINE_MAX bytes; `tok` is scratch of
 * NVTXCORR_LABELS_LINE_MAX + 1 bytes. Blank and comment-only rules add nothing. */
void nvtxcorr_labels_parse_rule(labels_parser_t *p, unsigned line, const char *s, char *tok);

/* Builds the lookup structures once all rules are in; 0, or -1 when out of memory. */
int nvtxcorr_labels_build_index(nvtxcorr_label_table_t *t);

/* Frees one rule's strings and regex (zeroing it), or every rule and the rule array
 * (labels_rules.c); the indexes are labels_match.c's. */
void nvtxcorr_labels_free_rule(label_rule_t *r);
void nvtxcorr_labels_free_rules(nvtxcorr_label_table_t *t);

/* How a bracket expression ("[a-z]", "[^]x]", "[[:digit:]_]") is read: in a glob (fnmatch)
 * '!' or '^' negates and '\\' escapes the next byte; in a POSIX regex '^' negates and '\\' is
 * an ordinary member. */
enum bracket_syntax { BRACKET_GLOB, BRACKET_REGEX };

/* Where the bracket expression opening at `open` (a '[') ends: its closing ']', or NULL when
 * the pattern ends first. A ']' first in the set (after any negation) is a member, and
 * "[:class:]", "[.coll.]" and "[=equiv=]" inside are skipped whole (labels_glob.c). */
const char *nvtxcorr_labels_bracket_end(const char *open, enum bracket_syntax syntax);

/* The longest run of bytes a glob match must contain; "" when none can be proven
 * (labels_glob.c). */
void nvtxcorr_labels_glob_literal(const char *glob, const char **lit, size_t *len);

#endif
