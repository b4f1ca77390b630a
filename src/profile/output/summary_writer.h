/* The summary's writer interface (summary.c and the tool's `render` hand rows to a writer;
 * summary_json.c, summary_csv.c, summary_text.c, summary_tree.c are writers): the field tables
 * every format is generated from, the rows, the summary as a writer sees it, the writer's ops.
 * A new field of a label or kernel is one row of PROF_ROW_FIELDS (its value filled in
 * summary.c's fill_cpu or fill_gpu) and its line in docs/profile.md: the JSON key, the CSV
 * column and the empty cells of the rows that lack it follow (darshan's X-macro counter lists,
 * uftrace's one ops struct per format). Nothing here names the library's state: nvtxcorr-tool
 * compiles the text writer too (docs/design.md, Front end). */
#ifndef NVTXCORR_PROFILE_SUMMARY_WRITER_H
#define NVTXCORR_PROFILE_SUMMARY_WRITER_H
#include <stddef.h>
#include <stdint.h>
#include "profile/base/out.h"
#include "profile/counting/windows.h"
/* The deepest context path (NVTXCORR_CONTEXT_PATH_MAX, checked in summary_context.c). */
#define PROF_CTX_DEPTH_MAX 65
/* Field kinds: a CPU value (from nvtxcorr's own counts: always there), a GPU value (null in
 * JSON and empty in CSV when the summary has no GPU time, or the row has no such value), and
 * the histograms (JSON only: a list of [bucket, count]). */
enum { PROF_KIND_CPU = 0, PROF_KIND_GPU = 1, PROF_KIND_CPU_HIST = 2, PROF_KIND_GPU_HIST = 3 };
#define PROF_KIND_IS_GPU(k) ((k)&1)
#define PROF_KIND_IS_HIST(k) ((k)&2)

/* A label's or a kernel's fields, in the order of the JSON object and of the CSV columns
 * (after section,label,category,name,function): X(id, key, kind). */
#define PROF_ROW_FIELDS(X)                                                                         \
    X(LAUNCHES, "launches", CPU)                                                                   \
    X(GRAPH_LAUNCHES, "graph_launches", CPU)                                                       \
    X(ERRORS, "errors", CPU)                                                                       \
    X(CAPTURE, "capture_launches", CPU)                                                            \
    X(CPU_NS, "cpu_ns", CPU)                                                                       \
    X(CPU_MIN, "cpu_min_ns", CPU)                                                                  \
    X(CPU_MAX, "cpu_max_ns", CPU)                                                                  \
    X(CPU_MEAN, "cpu_mean_ns", CPU)                                                                \
    X(CPU_P50, "cpu_p50_ns", CPU)                                                                  \
    X(CPU_P99, "cpu_p99_ns", CPU)                                                                  \
    X(GPU_NS, "gpu_ns", GPU)                                                                       \
    X(GPU_KERNELS, "gpu_kernels", GPU)                                                             \
    X(GPU_MIN, "gpu_min_ns", GPU)                                                                  \
    X(GPU_MAX, "gpu_max_ns", GPU)                                                                  \
    X(GPU_MEAN, "gpu_mean_ns", GPU)                                                                \
    X(GPU_P50, "gpu_p50_ns", GPU)                                                                  \
    X(GPU_P99, "gpu_p99_ns", GPU)                                                                  \
    X(GPU_HIST, "gpu_histogram", GPU_HIST)                                                         \
    X(CPU_HIST, "cpu_histogram", CPU_HIST)

/* A graph label's replays (the `graphs` section; CSV maps them onto the row columns). */
#define PROF_GRAPH_FIELDS(X)                                                                       \
    X(REPLAYS, "replays", GPU)                                                                     \
    X(KERNELS, "gpu_kernels", GPU)                                                                 \
    X(PER_REPLAY, "kernels_per_replay", GPU)                                                       \
    X(NS, "gpu_ns", GPU)                                                                           \
    X(MIN, "gpu_replay_min_ns", GPU)                                                               \
    X(MAX, "gpu_replay_max_ns", GPU)                                                               \
    X(MEAN, "gpu_replay_mean_ns", GPU)                                                             \
    X(P50, "gpu_replay_p50_ns", GPU)                                                               \
    X(P99, "gpu_replay_p99_ns", GPU)                                                               \
    X(HIST, "gpu_replay_histogram", GPU_HIST)

/* The whole process (JSON `totals`; the text table's head and notes). */
#define PROF_TOTAL_FIELDS(X)                                                                       \
    X(LAUNCHES, "launches", CPU)                                                                   \
    X(GRAPH_LAUNCHES, "graph_launches", CPU)                                                       \
    X(ERRORS, "errors", CPU)                                                                       \
    X(CAPTURE, "capture_launches", CPU)                                                            \
    X(CPU_NS, "cpu_ns", CPU)                                                                       \
    X(OWN_NS, "cpu_own_ns", CPU)                                                                   \
    X(UNLABELLED, "unlabelled_launches", CPU)                                                      \
    X(OTHER, "other_launches", CPU)                                                                \
    X(OTHER_GRAPHS, "other_graph_launches", CPU)                                                   \
    X(UNCOUNTED, "uncounted_at_start", CPU)                                                        \
    X(GPU_NS, "gpu_ns", GPU)                                                                       \
    X(GPU_KERNELS, "gpu_kernels", GPU)                                                             \
    X(GPU_DROPPED, "gpu_dropped_records", GPU)                                                     \
    X(GPU_INCOMPLETE, "gpu_incomplete_records", GPU)                                               \
    X(GPU_UNCORRELATED, "gpu_uncorrelated_kernels", GPU)                                           \
    X(GPU_UNCORRELATED_NS, "gpu_uncorrelated_ns", GPU)                                             \
    X(GPU_NOT_HOOKED, "gpu_not_hooked_kernels", GPU)                                               \
    X(GPU_NOT_HOOKED_NS, "gpu_not_hooked_ns", GPU)                                                 \
    X(GPU_UNLABELLED_NS, "gpu_unlabelled_ns", GPU)                                                 \
    X(GPU_UNLABELLED_LAUNCH_NS, "gpu_unlabelled_launch_ns", GPU)                                   \
    X(CTX_TRUNCATED, "context_truncated", CPU)                                                     \
    X(CTX_OTHER, "context_other", CPU)                                                             \
    X(CTX_UNBALANCED, "context_unbalanced_pops", CPU)                                              \
    X(CTX_LONG, "context_long_messages", CPU)                                                      \
    X(CTX_INVALID_UTF8, "context_invalid_utf8", CPU)

/* The sections, in the order written: X(id, JSON key, CSV section); LAUNCH_GPU (labels by the
 * GPU time their launches caused) is a table of the text format only. */
#define PROF_SECTIONS(X)                                                                           \
    X(LABELS, "labels", "label")                                                                   \
    X(KERNELS, "kernels", "kernel")                                                                \
    X(LAUNCH_GPU, NULL, NULL)                                                                      \
    X(KERNEL_LABELS, "kernel_labels", "kernel_label")                                              \
    X(GRAPHS, "graphs", "graph")

#define PROF_ENUM_F(id, key, kind) PROF_F_##id,
#define PROF_ENUM_G(id, key, kind) PROF_G_##id,
#define PROF_ENUM_T(id, key, kind) PROF_TOT_##id,
#define PROF_ENUM_S(id, json, csv) PROF_SEC_##id,
enum { PROF_ROW_FIELDS(PROF_ENUM_F) PROF_ROW_N };
enum { PROF_GRAPH_FIELDS(PROF_ENUM_G) PROF_GRAPH_N };
enum { PROF_TOTAL_FIELDS(PROF_ENUM_T) PROF_TOTAL_N };
enum { PROF_SECTIONS(PROF_ENUM_S) PROF_SECTION_N };
#undef PROF_ENUM_F
#undef PROF_ENUM_G
#undef PROF_ENUM_T
#undef PROF_ENUM_S
_Static_assert((int)PROF_GRAPH_N <= (int)PROF_ROW_N, "a graph row's fields fit a row");
_Static_assert(PROF_ROW_N <= 32, "`have` is a 32-bit mask");

typedef struct prof_field {
    const char *key;
    int kind;
} prof_field_t;
extern const prof_field_t nvtxcorr_prof_row_fields[PROF_ROW_N];
extern const prof_field_t nvtxcorr_prof_graph_fields[PROF_GRAPH_N];
extern const prof_field_t nvtxcorr_prof_total_fields[PROF_TOTAL_N];
extern const char *const nvtxcorr_prof_section_json[PROF_SECTION_N];
extern const char *const nvtxcorr_prof_section_csv[PROF_SECTION_N];

/* The text columns of a row: label, category, name (a kernel_label row: its kind), function;
 * NULL when it has none. */
enum { PROF_T_LABEL, PROF_T_CATEGORY, PROF_T_NAME, PROF_T_FUNCTION, PROF_TEXT_N };

/* One record of a section. Fields are PROF_F_* (PROF_G_* in the graphs section); a field not
 * in `have` has no value (null, an empty cell). A histogram field's buckets are in hist[id]
 * (NULL: none were counted), valid only during the writer's call. */
typedef struct prof_row {
    const char *text[PROF_TEXT_N];
    uint64_t v[PROF_ROW_N];
    const uint64_t *hist[PROF_ROW_N];
    uint32_t have;
} prof_row_t;

/* Program context's rows as the tree reads them, sorted by path, then label: line(v, i, out)
 * fills out (path: `depth` names, outermost first, valid while the tree is drawn); space: the
 * tree's work space (summary_tree.c), nvtxcorr_prof_tree_space(n) bytes, else no tree. */
typedef struct prof_ctx_line {
    const char *path[PROF_CTX_DEPTH_MAX];
    unsigned depth;
    const char *label;
    uint64_t launches, gpu_kernels, gpu_ns;
} prof_ctx_line_t;
typedef struct prof_ctx_view {
    size_t n;
    void (*line)(const struct prof_ctx_view *v, size_t i, prof_ctx_line_t *out);
    const void *data;
    void *space;
    size_t space_size;
} prof_ctx_view_t;
size_t nvtxcorr_prof_tree_space(size_t n);

/* What a writer draws, all of it: the text writer reads nothing else of the library (no
 * process, GPU or context state), so the same table can be drawn from a summary's JSON. */
typedef struct prof_summary {
    uint64_t total[PROF_TOTAL_N];
    int gpu; /* GPU time is in this summary: the GPU totals and sections have values */
    uint64_t pid;
    const char *subject;  /* whose profile the head names, or NULL: "pid N" */
    const char *gpu_note; /* why GPU time is partial, or NULL (the text table's GPU head) */
    /* stat's and report's (0 in the library): rows per table and children per context (0:
     * all), the GPU tables first with why there is none (the caller hands those over first) */
    unsigned top;
    int gpu_first;
    uint64_t end_ns;
    const prof_window_t *window; /* NVTXCORR_WINDOW: the window summarised, else NULL */
    /* by program context (context_stats.c): rows[order[0..n)], for the CSV and folded forms;
     * the same rows as the text table's tree draws them (NULL when there is no context) */
    const struct prof_ctx_row *ctx_rows;
    const uint32_t *ctx_order;
    size_t nctx;
    const prof_ctx_view_t *ctx_view;
} prof_summary_t;

/* A format: begin, then each section in PROF_SECTIONS order (section(.., 0), its records,
 * section(.., 1)), then end. When measure is set, every record is first shown to it, after
 * begin and before the first section, so a layout can fit the widest value (the text tables).
 * Everything here may run in a signal handler: static state only, output through `o`. */
typedef struct prof_writer {
    void (*measure)(const prof_summary_t *s, int section, const prof_row_t *r);
    void (*begin)(prof_out_t *o, const prof_summary_t *s);
    void (*section)(prof_out_t *o, const prof_summary_t *s, int section, int end);
    void (*record)(prof_out_t *o, const prof_summary_t *s, int section, const prof_row_t *r);
    void (*end)(prof_out_t *o, const prof_summary_t *s);
    /* The by-context rows, after the sections and before end (NULL: the format has none). */
    void (*contexts)(prof_out_t *o, const prof_summary_t *s);
} prof_writer_t;
extern const prof_writer_t nvtxcorr_prof_json_writer, nvtxcorr_prof_csv_writer,
    nvtxcorr_prof_text_writer, nvtxcorr_prof_folded_writer,
    nvtxcorr_prof_html_writer; /* summary_html.c: the JSON inside the report's page */
/* summary_context.c: the by-context rows as CSV lines; summary_tree.c: the tree of s->ctx_view
 * after a blank line (the text writer's), or alone (nvtxcorr-tool render --tree). */
void nvtxcorr_prof_csv_contexts(prof_out_t *o, const prof_summary_t *s);
void nvtxcorr_prof_text_contexts(prof_out_t *o, const prof_summary_t *s);
void nvtxcorr_prof_text_tree(prof_out_t *o, const prof_summary_t *s);
/* summary_csv.c: one CSV line in the common columns. */
void nvtxcorr_prof_csv_line(prof_out_t *o, const char *section, const char *const *text,
                            const uint64_t *v, uint32_t have);
#endif
