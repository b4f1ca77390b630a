/* The summary by program context (docs/profile.md, Program context) in the formats other than
 * JSON (summary_json.c writes the `contexts` array itself):
 *   folded  NVTXCORR_PROFILE ending in .folded: one line per row, `ctx;ctx;...;label <n>`, n
 *           the row's GPU ns (its CPU ns when the summary has no GPU time), rows of 0 left
 *           out: the folded-stack format flamegraph.pl, inferno and speedscope read. A ';' in a
 *           name becomes ':' and a line break ' ', so a name stays one frame;
 *   CSV     rows of section `context`: the path joined with " > " in `name`, the label in
 *           `label`, launches, cpu_ns, gpu_kernels and gpu_ns in their columns;
 *   text    a tree (summary_tree.c draws it from the view made here): each node's GPU time
 *           inclusive and exclusive, kernels and launches, kernel labels as leaves.
 * CSV and text show them only when the program's NVTX ranges reached nvtxcorr and some row has
 * a context: a program without NVTX ranges (or without the tool) gets the tables it always had.
 * Same constraints as summary.c: may run in a signal handler (static state, mmap'd arrays). */
#include <string.h>
#include "context/context.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "profile/counting/context_stats.h"
#include "summary.h"
static void element(prof_out_t *o, const char *s, int folded)
{
    char buf[NVTXCORR_CONTEXT_ELEMENT_MAX * 4 + 8];
    size_t n = 0;
    for (; *s && n + 1 < sizeof buf; s++)
        buf[n++] = folded && *s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s;
    buf[n] = 0;
    nvtxcorr_out_str(o, buf);
}

static unsigned path_of(const prof_ctx_row_t *r, uint32_t *path)
{
    return nvtxcorr_context_path(r->ctx, path, NVTXCORR_CONTEXT_PATH_MAX);
}

/* ---- folded stacks ---- */
static void folded_rows(prof_out_t *o, const prof_summary_t *s)
{
    for (size_t i = 0; i < s->nctx; i++) {
        const prof_ctx_row_t *r = &s->ctx_rows[s->ctx_order[i]];
        uint64_t v = s->gpu ? r->gpu_ns : r->cpu_ns;
        if (v == 0) continue;
        uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
        unsigned n = path_of(r, path);
        for (unsigned e = 0; e < n; e++) {
            element(o, nvtxcorr_context_name(path[e]), 1);
            nvtxcorr_out_str(o, ";");
        }
        element(o, nvtxcorr_prof_ctx_row_label(r), 1);
        nvtxcorr_out_str(o, " ");
        nvtxcorr_out_u64(o, v);
        nvtxcorr_out_str(o, "\n");
    }
}

static void no_begin(prof_out_t *o, const prof_summary_t *s)
{
    (void)o, (void)s;
}
static void no_section(prof_out_t *o, const prof_summary_t *s, int sec, int end)
{
    (void)o, (void)s, (void)sec, (void)end;
}
static void no_record(prof_out_t *o, const prof_summary_t *s, int sec, const prof_row_t *r)
{
    (void)o, (void)s, (void)sec, (void)r;
}

const prof_writer_t nvtxcorr_prof_folded_writer = {NULL,      no_begin, no_section,
                                                   no_record, no_begin, folded_rows};

/* The program's NVTX ranges reached nvtxcorr and some row has a path (a replayed kernel's path
 * always has its graph's label: that alone is the by-kernel view again). */
static int any_context(const prof_summary_t *s)
{
    if (!nvtxcorr_context_injected()) return 0;
    for (size_t i = 0; i < s->nctx; i++)
        if (s->ctx_rows[i].ctx != NVTXCORR_CONTEXT_ROOT) return 1;
    return 0;
}

/* ---- CSV ---- */
void nvtxcorr_prof_csv_contexts(prof_out_t *o, const prof_summary_t *s)
{
    if (!any_context(s)) return;
    for (size_t i = 0; i < s->nctx; i++) {
        const prof_ctx_row_t *r = &s->ctx_rows[s->ctx_order[i]];
        uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
        unsigned n = path_of(r, path);
        static char joined[NVTXCORR_CONTEXT_PATH_MAX * (NVTXCORR_CONTEXT_ELEMENT_MAX + 3) + 1];
        size_t len = 0;
        for (unsigned e = 0; e < n; e++) {
            const char *name = nvtxcorr_context_name(path[e]);
            size_t l = strlen(name);
            if (e) memcpy(joined + len, " > ", 3), len += 3;
            memcpy(joined + len, name, l);
            len += l;
        }
        joined[len] = 0;
        const char *text[PROF_TEXT_N] = {
            [PROF_T_LABEL] = nvtxcorr_prof_ctx_row_label(r), [PROF_T_NAME] = joined};
        uint64_t v[PROF_ROW_N] = {[PROF_F_LAUNCHES] = r->launches,
                                  [PROF_F_CPU_NS] = r->cpu_ns,
                                  [PROF_F_GPU_KERNELS] = r->gpu_kernels,
                                  [PROF_F_GPU_NS] = r->gpu_ns};
        uint32_t have = 1u << PROF_F_LAUNCHES | 1u << PROF_F_CPU_NS;
        if (s->gpu) have |= 1u << PROF_F_GPU_KERNELS | 1u << PROF_F_GPU_NS;
        nvtxcorr_prof_csv_line(o, "context", text, v, have);
    }
}

/* ---- text: the tree ---- */
/* The rows as the text tree reads them (summary_tree.c): each row's path of names from the
 * context layer. NULL when the tree is not drawn: no NVTX range reached nvtxcorr, or no row
 * has a context. */
_Static_assert(NVTXCORR_CONTEXT_PATH_MAX <= PROF_CTX_DEPTH_MAX, "a path fits a tree line");

static void view_line(const prof_ctx_view_t *v, size_t i, prof_ctx_line_t *out)
{
    const prof_summary_t *s = v->data;
    const prof_ctx_row_t *r = &s->ctx_rows[s->ctx_order[i]];
    uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
    out->depth = path_of(r, path);
    for (unsigned e = 0; e < out->depth; e++)
        out->path[e] = nvtxcorr_context_name(path[e]);
    out->label = nvtxcorr_prof_ctx_row_label(r);
    out->launches = r->launches, out->gpu_kernels = r->gpu_kernels, out->gpu_ns = r->gpu_ns;
}

const prof_ctx_view_t *nvtxcorr_prof_ctx_view(const prof_summary_t *s)
{
    static prof_ctx_view_t view;
    static void *space; /* mmap'd once, for the most rows there can be */
    if (!any_context(s)) return NULL;
    if (space == NULL) space = nvtxcorr_prof_zalloc(nvtxcorr_prof_tree_space(PROF_CTX_ROWS_MAX));
    view = (prof_ctx_view_t){s->nctx, view_line, s, space,
                             space ? nvtxcorr_prof_tree_space(PROF_CTX_ROWS_MAX) : 0};
    return &view;
}
