/* The text table's tree of program context (docs/profile.md, Program context): each node's
 * GPU time inclusive and exclusive, kernels and launches, kernel labels as leaves among the
 * child contexts. The only drawing of the tree: the library draws it at exit from its context
 * layer (summary_context.c makes the view), nvtxcorr-tool render from a summary's `contexts`
 * rows, which is how nvtxcorr stat and report --by context draw theirs (their rows merged,
 * --focus'd and --depth-cut in Python first). A node's children, largest first (GPU time
 * inclusive when the summary has GPU time, else launches; at equal size a context before a
 * kernel label, then by name), at most s->top of them (0: all) and a line saying how many
 * more. Names longer than their column are cut in the middle, as in every text table.
 *
 * The rows come sorted by path (names compared element by element, a row before its
 * descendants), so a node's rows are one run of the view. Same constraints as summary.c: may
 * run in a signal handler, so no malloc: the children are gathered and sorted in the view's
 * work space (nvtxcorr_prof_tree_space), which the caller provides. */
#include <string.h>
#include "profile/base/out.h"
#include "summary_writer.h"

/* A child of a node: one kernel label (one row) or a context (its rows [first, end)). */
typedef struct item {
    const char *name;
    uint32_t first, end;
    int leaf;
    uint64_t incl, excl, kernels, launches;
} item_t;

/* A node at depth d has at most (its rows - its drawn child's rows + 1) children gathered
 * while that child's are, so the levels drawn at once hold at most n + depth + 1. */
size_t nvtxcorr_prof_tree_space(size_t n)
{
    return (n + PROF_CTX_DEPTH_MAX + 1) * (sizeof(item_t) + sizeof(uint32_t));
}

static const prof_ctx_view_t *view;
static const prof_summary_t *sum;
static prof_out_t *out;
static item_t *items;
static uint32_t *order;
static prof_ctx_line_t line;

/* Two columns a level, at most 40 (the name keeps 9). */
static size_t indent(unsigned depth)
{
    static const char spaces[] = "                                        ";
    size_t n = 2 * depth < 40 ? 2 * depth : 40;
    nvtxcorr_out_mem(out, spaces, n);
    return n;
}

static void text_line(unsigned depth, const item_t *it)
{
    char cell[32];
    size_t indent_cols = indent(depth);
    nvtxcorr_prof_pad(out, it->name, 49 - indent_cols, 0);
    nvtxcorr_out_str(out, " ");
    if (sum->gpu) {
        nvtxcorr_prof_fmt_time(cell, it->incl);
        nvtxcorr_prof_pad(out, cell, 10, 1);
        if (it->leaf)
            nvtxcorr_prof_pad(out, "", 10, 1);
        else
            nvtxcorr_prof_fmt_time(cell, it->excl), nvtxcorr_prof_pad(out, cell, 10, 1);
        cell[nvtxcorr_fmt_u64(cell, it->kernels)] = 0;
        nvtxcorr_prof_pad(out, cell, 9, 1);
    }
    cell[nvtxcorr_fmt_u64(cell, it->launches)] = 0;
    nvtxcorr_prof_pad(out, cell, 9, 1);
    nvtxcorr_out_str(out, "\n");
}

static int before(uint32_t a, uint32_t b)
{
    const item_t *x = &items[a], *y = &items[b];
    uint64_t kx = sum->gpu ? x->incl : x->launches, ky = sum->gpu ? y->incl : y->launches;
    if (kx != ky) return kx > ky;
    if (x->leaf != y->leaf) return y->leaf;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c < 0 : a < b;
}

/* The children of the node at `depth` whose rows are [first, end), into items[at, at + k):
 * the rows at the node itself are its kernel labels, a run of rows sharing their next element
 * one child context. The names stay valid while the tree is drawn (summary_writer.h). */
static size_t gather(size_t first, size_t end, unsigned depth, size_t at)
{
    size_t k = 0;
    for (size_t i = first; i < end; i++) {
        view->line(view, i, &line);
        int leaf = line.depth <= depth;
        const char *name = leaf ? line.label : line.path[depth];
        const item_t *last = k ? &items[at + k - 1] : NULL;
        if (leaf || !last || last->leaf || (last->name != name && strcmp(last->name, name) != 0))
            items[at + k++] = (item_t){.name = name, .first = (uint32_t)i, .leaf = leaf};
        item_t *it = &items[at + k - 1];
        it->end = (uint32_t)i + 1;
        it->incl += line.gpu_ns, it->kernels += line.gpu_kernels, it->launches += line.launches;
        if (line.depth <= depth + 1) it->excl += line.gpu_ns; /* at the child itself */
    }
    return k;
}

static void draw(size_t first, size_t end, unsigned depth, size_t at)
{
    size_t k = gather(first, end, depth, at);
    for (size_t j = 0; j < k; j++)
        order[at + j] = (uint32_t)(at + j);
    nvtxcorr_prof_sort(order + at, k, before);
    size_t shown = sum->top && k > sum->top ? sum->top : k;
    for (size_t j = 0; j < shown; j++) {
        const item_t *it = &items[order[at + j]];
        text_line(depth, it);
        if (!it->leaf) draw(it->first, it->end, depth + 1, at + k);
    }
    if (shown < k) {
        char n[24];
        n[nvtxcorr_fmt_u64(n, k - shown)] = 0;
        indent(depth);
        nvtxcorr_out_str(out, "(");
        nvtxcorr_out_str(out, n);
        nvtxcorr_out_str(out, " more; --top N or --top all)\n");
    }
}

void nvtxcorr_prof_text_tree(prof_out_t *o, const prof_summary_t *s)
{
    const prof_ctx_view_t *v = s->ctx_view;
    if (v == NULL || v->space == NULL || v->space_size < nvtxcorr_prof_tree_space(v->n)) return;
    nvtxcorr_out_str(o, s->gpu ? "By program context (GPU time: inclusive, exclusive)\n"
                               : "By program context\n");
    nvtxcorr_prof_pad(o, "context > kernel label", 50, 0);
    if (s->gpu) {
        nvtxcorr_prof_pad(o, "incl", 10, 1);
        nvtxcorr_prof_pad(o, "excl", 10, 1);
        nvtxcorr_prof_pad(o, "kernels", 9, 1);
    }
    nvtxcorr_prof_pad(o, "launches", 9, 1);
    nvtxcorr_out_str(o, "\n");
    view = v, sum = s, out = o;
    items = v->space;
    order = (uint32_t *)(items + v->n + PROF_CTX_DEPTH_MAX + 1);
    draw(0, v->n, 0, 0);
}

void nvtxcorr_prof_text_contexts(prof_out_t *o, const prof_summary_t *s)
{
    const prof_ctx_view_t *v = s->ctx_view;
    if (v == NULL || v->space == NULL || v->space_size < nvtxcorr_prof_tree_space(v->n)) return;
    nvtxcorr_out_str(o, "\n");
    nvtxcorr_prof_text_tree(o, s);
}
