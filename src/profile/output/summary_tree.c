/* The text table's tree of program context (docs/profile.md, Program context): each node's
 * GPU time inclusive and exclusive, kernels and launches, kernel labels as leaves. Drawn from
 * s->ctx_view, which the library makes from its context layer (summary_context.c) and
 * nvtxcorr-tool from a summary's `contexts` rows, so both draw the same tree. The rows come
 * sorted by path (names compared element by element, a row before its descendants), so a
 * node's rows are the ones that follow the row that first shows it: its sums are read forward
 * from there. Same constraints as summary.c: may run in a signal handler (static state). */
#include <string.h>
#include "profile/base/out.h"
#include "summary_writer.h"
typedef struct node_sum {
    uint64_t incl, excl, kernels, launches;
} node_sum_t;

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

static prof_ctx_line_t cur, scan;

/* r is in the subtree of the node at `depth` of cur's path. */
static int under(const prof_ctx_line_t *r, unsigned depth)
{
    if (r->depth <= depth) return 0;
    for (unsigned e = 0; e <= depth; e++)
        if (r->path[e] != cur.path[e] && strcmp(r->path[e], cur.path[e]) != 0) return 0;
    return 1;
}

static void node_sums(const prof_ctx_view_t *v, size_t first, unsigned depth, node_sum_t *n)
{
    memset(n, 0, sizeof *n);
    for (size_t j = first; j < v->n; j++) {
        v->line(v, j, &scan);
        if (!under(&scan, depth)) break;
        n->incl += scan.gpu_ns, n->kernels += scan.gpu_kernels, n->launches += scan.launches;
        if (scan.depth == depth + 1) n->excl += scan.gpu_ns;
    }
}

void nvtxcorr_prof_text_contexts(prof_out_t *o, const prof_summary_t *s)
{
    const prof_ctx_view_t *v = s->ctx_view;
    if (v == NULL) return;
    nvtxcorr_out_str(o, "\nBy program context (GPU time: inclusive, exclusive)\n");
    nvtxcorr_prof_pad(o, "context > kernel label", 50, 0);
    if (s->gpu) {
        nvtxcorr_prof_pad(o, "incl", 10, 1);
        nvtxcorr_prof_pad(o, "excl", 10, 1);
        nvtxcorr_prof_pad(o, "kernels", 9, 1);
    }
    nvtxcorr_prof_pad(o, "launches", 9, 1);
    nvtxcorr_out_str(o, "\n");
    /* Print the elements where a row's path leaves the previous one's, then the row's label
     * as a leaf. */
    static const char *prev[PROF_CTX_DEPTH_MAX];
    unsigned nprev = 0;
    for (size_t i = 0; i < v->n; i++) {
        v->line(v, i, &cur);
        unsigned same = 0;
        while (same < cur.depth && same < nprev &&
               (cur.path[same] == prev[same] || strcmp(cur.path[same], prev[same]) == 0))
            same++;
        for (unsigned e = same; e < cur.depth; e++) {
            node_sum_t n;
            node_sums(v, i, e, &n);
            text_line(o, e, cur.path[e], &n, s->gpu, 0);
        }
        node_sum_t leaf = {cur.gpu_ns, cur.gpu_ns, cur.gpu_kernels, cur.launches};
        text_line(o, cur.depth, cur.label, &leaf, s->gpu, 1);
        memcpy(prev, cur.path, cur.depth * sizeof *prev);
        nprev = cur.depth;
    }
}
