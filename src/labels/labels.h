/* The label table: rules that turn kernel and graph names into NVTX range labels.
 * One parser and one matcher, shared by the preload library and the `nvtxcorr check` /
 * `nvtxcorr explain` command. Matching happens once per distinct kernel or graph; the core
 * caches the result per handle, so nothing here is on the per-launch hot path. The format is
 * specified in docs/labels.md. */
#ifndef NVTXCORR_LABELS_H
#define NVTXCORR_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "names.h"

typedef struct nvtxcorr_label_table nvtxcorr_label_table_t;

/* One error in a label table, as values: where and why. The strings are the loader's raw text
 * (a path or a quoted token may hold control bytes): whoever prints escapes them. */
typedef struct nvtxcorr_label_error {
    const char *source; /* the file's path as given, "NVTXCORR_LABELS_INLINE", or "label table" */
    unsigned line;      /* line (file) or rule number (inline); 0: about the whole source */
    const char *reason; /* one line, no trailing newline */
} nvtxcorr_label_error_t;

/* Where errors go. */
typedef void (*nvtxcorr_labels_report_fn)(void *ctx, const nvtxcorr_label_error_t *error);

/* The one textual form of an error, "<source>:<line>: <reason>" ("<source>: <reason>" for line
 * 0), into buf (cut to size); every reporter prints it after "nvtxcorr: error: ". Returns buf. */
const char *nvtxcorr_label_error_text(const nvtxcorr_label_error_t *error, char *buf, size_t size);

/* Loads inline rules (NVTXCORR_LABELS_INLINE, rules separated by ';', tried first) and a
 * file (NVTXCORR_LABELS). Either may be NULL. Returns NULL when neither gives a rule or when
 * any error was found: the caller then uses default labels. Every error (up to a cap) is
 * reported through `report`. */
nvtxcorr_label_table_t *nvtxcorr_labels_load(const char *inline_rules, const char *path,
                                             nvtxcorr_labels_report_fn report, void *ctx);
/* Parses `len` bytes as a label file named `name` in messages (the fuzz target and tests use
 * it to skip the file system). Same result and reporting as a file given to
 * nvtxcorr_labels_load. */
nvtxcorr_label_table_t *nvtxcorr_labels_load_buffer(const char *name, const char *data, size_t len,
                                                    nvtxcorr_labels_report_fn report, void *ctx);
void nvtxcorr_labels_free(nvtxcorr_label_table_t *table);
size_t nvtxcorr_labels_rule_count(const nvtxcorr_label_table_t *table);

/* What a graph launch can be matched on (see docs/labels.md, graph names). */
typedef struct nvtxcorr_graph_keys {
    unsigned ordinal; /* N of graph#N: order of successful instantiation, from 1 */
    unsigned nodes;   /* all nodes */
    unsigned kernels; /* kernel nodes */
    const char *sig;  /* 8 hex digits: hash of the ordered kernel names and dimensions */
    const char *top;  /* base name of the most frequent kernel, "" when none */
} nvtxcorr_graph_keys_t;

enum { NVTXCORR_LABEL_MAX = 256 };

typedef struct nvtxcorr_label_result {
    int matched; /* 0: no rule matched, the default label is in `label` */
    int skip;    /* the rule's label was "-": no range for this launch */
    char label[NVTXCORR_LABEL_MAX];
    int has_color;
    uint32_t color;       /* 0xAARRGGBB, alpha forced to 0xFF */
    const char *category; /* category name owned by the table, or NULL */
    const char *source;   /* the file's path as given, or "NVTXCORR_LABELS_INLINE";
                             owned by the table; NULL if unmatched */
    unsigned line;        /* line (file) or rule number (inline), 0 if unmatched */
} nvtxcorr_label_result_t;

/* First matching kernel rule wins; with no match (or table == NULL) the label is the base
 * name. Returns out->matched. */
int nvtxcorr_labels_match_kernel(const nvtxcorr_label_table_t *table,
                                 const nvtxcorr_kernel_names_t *names,
                                 nvtxcorr_label_result_t *out);

/* Same for graph launches; the default label is nvtxcorr_graph_default_label's. */
int nvtxcorr_labels_match_graph(const nvtxcorr_label_table_t *table,
                                const nvtxcorr_graph_keys_t *keys, nvtxcorr_label_result_t *out);

/* The matched rule as written (comment and surrounding blanks removed), for
 * `nvtxcorr explain`; NULL when `result` matched nothing. Linear in the table size. */
const char *nvtxcorr_labels_rule_text(const nvtxcorr_label_table_t *table,
                                      const nvtxcorr_label_result_t *result);

/* "graph#N" and the matchable descriptor "graph#N nodes=.. kernels=.. sig=.. top=..". */
void nvtxcorr_graph_name(const nvtxcorr_graph_keys_t *keys, char *buf, size_t size);
void nvtxcorr_graph_descriptor(const nvtxcorr_graph_keys_t *keys, char *buf, size_t size);
/* Default graph label: "graph#N (K kernels)". */
void nvtxcorr_graph_default_label(const nvtxcorr_graph_keys_t *keys, char *buf, size_t size);

#endif
