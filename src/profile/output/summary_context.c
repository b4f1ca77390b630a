/* The summary by program context (docs/profile.md, Program context) in the formats other than
 * JSON (summary_json.c writes the `contexts` array itself):
 *   folded  NVTXCORR_PROFILE ending in .folded: one line per row, `ctx;ctx;...;label <n>`, n
 *           the row's GPU ns (its CPU ns when the summary has no GPU time), rows of 0 left
 *           out: the folded-stack format flamegraph.pl, inferno and speedscope read. A ';' in a
 *           name becomes ':' and a line break ' ', so a name stays one frame;
 *   CSV     rows of section `context`: the path joined with " > " in `name`, the label in
 *           `label`, launches, cpu_ns, gpu_kernels and gpu_ns in their columns;
 *   text    a tree: each node's GPU time inclusive and exclusive, kernels and launches, kernel
 *           labels as leaves.
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
typedef struct node_sum {
    uint64_t incl, excl, kernels, launches;
} node_sum_t;
static node_sum_t *sums; /* by context id */

static void text_line(prof_out_t *o, unsigned depth, const char *name, const node_sum_t *n, int gpu,
                      int leaf)
{
    char buf[PROF_TEXT_WIDTH + 8], cell[32];
    size_t indent = 2 * depth < 40 ? 2 * depth : 40, width = 50;
    memset(buf, ' ', indent);
    size_t len = indent + nvtxcorr_text_safe(buf + indent, width + 1 - indent, name);
    buf[len] = 0;
    nvtxcorr_prof_pad(o, buf, width, 0);
    if (gpu) {
        nvtxcorr_prof_fmt_time(cell, n->incl);
        nvtxcorr_prof_pad(o, cell, 10, 1);
        if (leaf)
            nvtxcorr_prof_pad(o, "", 10, 1);
        else
            nvtxcorr_prof_fmt_time(cell, n->excl), nvtxcorr_prof_pad(o, cell, 10, 1);
        cell[nvtxcorr_fmt_u64(cell, n->kernels)] = 0;
        nvtxcorr_prof_pad(o, cell, 9, 1);
    }
    cell[nvtxcorr_fmt_u64(cell, n->launches)] = 0;
    nvtxcorr_prof_pad(o, cell, 9, 1);
    nvtxcorr_out_str(o, "\n");
}

void nvtxcorr_prof_text_contexts(prof_out_t *o, const prof_summary_t *s)
{
    if (!any_context(s)) return;
    uint32_t count = nvtxcorr_context_count();
    if (sums == NULL && (sums = nvtxcorr_prof_zalloc(NVTXCORR_CONTEXT_IDS * sizeof *sums)) == NULL)
        return;
    memset(sums, 0, count * sizeof *sums);
    for (size_t i = 0; i < s->nctx; i++) {
        const prof_ctx_row_t *r = &s->ctx_rows[i];
        sums[r->ctx].excl += r->gpu_ns;
        for (uint32_t c = r->ctx;; c = nvtxcorr_context_parent(c)) {
            sums[c].incl += r->gpu_ns, sums[c].kernels += r->gpu_kernels;
            sums[c].launches += r->launches;
            if (c == NVTXCORR_CONTEXT_ROOT) break;
        }
    }
    nvtxcorr_out_str(o, "\nBy program context (GPU time: inclusive, exclusive)\n");
    nvtxcorr_prof_pad(o, "context > kernel label", 50, 0);
    if (s->gpu) {
        nvtxcorr_prof_pad(o, "incl", 10, 1);
        nvtxcorr_prof_pad(o, "excl", 10, 1);
        nvtxcorr_prof_pad(o, "kernels", 9, 1);
    }
    nvtxcorr_prof_pad(o, "launches", 9, 1);
    nvtxcorr_out_str(o, "\n");
    /* Rows sorted by path, parents first: print the elements where a row's path leaves the
     * previous one's, then the row's label as a leaf. */
    uint32_t prev[NVTXCORR_CONTEXT_PATH_MAX];
    unsigned nprev = 0;
    for (size_t i = 0; i < s->nctx; i++) {
        const prof_ctx_row_t *r = &s->ctx_rows[s->ctx_order[i]];
        uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
        unsigned n = path_of(r, path), same = 0;
        while (same < n && same < nprev && path[same] == prev[same])
            same++;
        for (unsigned e = same; e < n; e++)
            text_line(o, e, nvtxcorr_context_name(path[e]), &sums[path[e]], s->gpu, 0);
        node_sum_t leaf = {r->gpu_ns, r->gpu_ns, r->gpu_kernels, r->launches};
        text_line(o, n, nvtxcorr_prof_ctx_row_label(r), &leaf, s->gpu, 1);
        memcpy(prev, path, n * sizeof *path);
        nprev = n;
    }
}
