/* nvtxcorr-tool render [options] FILE.json: a summary's JSON (the library's, or the report's
 * merge of several, which has the same schema) drawn as the text table the library writes at
 * exit, by the library's own text writer (summary_text.c, summary_tree.c, compiled into this
 * tool), so the two are the same byte for byte: the table is drawn in one place
 * (docs/design.md, Front end). This file only turns the JSON back into the rows the library's
 * walk (summary.c) hands the writer, section by section, in the same order. nvtxcorr stat and
 * report draw their text tables with it (render.py), with their options (usage_text below),
 * and with --tree the program-context tree alone (summary_tree.c), of the rows report --by
 * context and stat merged, focused and cut (context.py). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "json.h"
#include "profile/output/summary_writer.h"
#include "render.h"

typedef struct render_options {
    const char *of;
    unsigned top;
    int sort, gpu_first, contexts, tree;
} render_options_t;

typedef struct rows {
    prof_row_t *row;
    size_t n;
} rows_t;

static const char *text_of(const json_value_t *e, const char *key)
{
    const json_value_t *v = json_get_kind(e, key, JSON_STRING);
    return v ? v->string : NULL;
}

/* One record: its text columns by key, its fields by the writer's own field table. */
static void fill(prof_row_t *r, const json_value_t *e, const prof_field_t *fields, int n,
                 const char *name_key)
{
    memset(r, 0, sizeof *r);
    r->text[PROF_T_LABEL] = text_of(e, "label");
    r->text[PROF_T_CATEGORY] = text_of(e, "category");
    r->text[PROF_T_NAME] = name_key ? text_of(e, name_key) : NULL;
    r->text[PROF_T_FUNCTION] = text_of(e, "function");
    for (int i = 0; i < n; i++) {
        const json_value_t *v = json_get_kind(e, fields[i].key, JSON_COUNT);
        if (v) r->v[i] = v->count, r->have |= 1u << i;
    }
}

static int section(const json_value_t *root, const char *key, const prof_field_t *fields, int n,
                   const char *name_key, rows_t *out)
{
    const json_value_t *a = json_get_kind(root, key, JSON_ARRAY);
    out->n = 0;
    out->row = calloc(a && a->n ? a->n : 1, sizeof *out->row);
    if (!out->row) return -1;
    for (size_t i = 0; a && i < a->n; i++)
        if (a->items[i].kind == JSON_OBJECT)
            fill(&out->row[out->n++], &a->items[i], fields, n, name_key);
    return 0;
}

/* Row order. The library's (SORT_OWN): the labels by CPU time, then launches; the GPU tables by
 * GPU time; the graphs as they come. stat's and report's --sort gpu|cpu|launches: every table
 * by (GPU, CPU, count), (CPU, GPU, count) or (count, GPU, CPU), the count being launches,
 * kernels or replays. Equal rows by label, then category, then their order in the JSON. */
enum { SORT_OWN, SORT_GPU, SORT_CPU, SORT_LAUNCHES };
enum { TABLE_CPU, TABLE_GPU, TABLE_GRAPHS };
static const prof_row_t *sort_rows;
static int sort_by, sort_table_kind;

static int text_cmp(const char *a, const char *b)
{
    return a == b ? 0 : !a ? -1 : !b ? 1 : strcmp(a, b);
}

static void keys(const prof_row_t *r, uint64_t *k)
{
    int graphs = sort_table_kind == TABLE_GRAPHS;
    uint64_t gpu = r->v[graphs ? PROF_G_NS : PROF_F_GPU_NS];
    uint64_t cpu = graphs ? 0 : r->v[PROF_F_CPU_NS];
    uint64_t n = r->v[graphs                         ? PROF_G_REPLAYS
                      : sort_table_kind == TABLE_GPU ? PROF_F_GPU_KERNELS
                                                     : PROF_F_LAUNCHES];
    int by = sort_by;
    if (by == SORT_OWN && sort_table_kind == TABLE_CPU) {
        k[0] = cpu, k[1] = n, k[2] = 0;
        return;
    }
    if (by == SORT_OWN) by = SORT_GPU;
    if (by == SORT_GPU) k[0] = gpu, k[1] = cpu, k[2] = n;
    if (by == SORT_CPU) k[0] = cpu, k[1] = gpu, k[2] = n;
    if (by == SORT_LAUNCHES) k[0] = n, k[1] = gpu, k[2] = cpu;
    if (sort_by == SORT_OWN) k[1] = k[2] = 0; /* the GPU tables: GPU time alone */
}

static int before(uint32_t a, uint32_t b)
{
    const prof_row_t *x = &sort_rows[a], *y = &sort_rows[b];
    uint64_t kx[3], ky[3];
    keys(x, kx), keys(y, ky);
    for (int i = 0; i < 3; i++)
        if (kx[i] != ky[i]) return kx[i] > ky[i];
    int d = text_cmp(x->text[PROF_T_LABEL], y->text[PROF_T_LABEL]);
    if (d == 0 && !(sort_by == SORT_OWN && sort_table_kind == TABLE_CPU))
        d = text_cmp(x->text[PROF_T_CATEGORY], y->text[PROF_T_CATEGORY]);
    return d != 0 ? d < 0 : a < b;
}

/* order[0..n) sorted, for one table (the graphs keep the JSON's order unless --sort). */
static void sort_table(const prof_row_t *rows, uint32_t *order, size_t n, int by, int kind)
{
    if (by == SORT_OWN && kind == TABLE_GRAPHS) return;
    sort_rows = rows, sort_by = by, sort_table_kind = kind;
    nvtxcorr_prof_sort(order, n, before);
}

/* Program context's rows, as summary_tree.c reads them: in the JSON's order, which the
 * library's and the report's (context.py) is by path, then label. */
static void context_line(const prof_ctx_view_t *v, size_t i, prof_ctx_line_t *out)
{
    const json_value_t *e = &((const json_value_t *)v->data)[i];
    const json_value_t *path = json_get_kind(e, "context", JSON_ARRAY);
    const json_value_t *n;
    memset(out, 0, sizeof *out);
    for (size_t k = 0; path && k < path->n && k < PROF_CTX_DEPTH_MAX; k++)
        out->path[out->depth++] = path->items[k].kind == JSON_STRING ? path->items[k].string : "?";
    out->label = text_of(e, "label") ? text_of(e, "label") : "-";
    if ((n = json_get_kind(e, "launches", JSON_COUNT))) out->launches = n->count;
    if ((n = json_get_kind(e, "gpu_kernels", JSON_COUNT))) out->gpu_kernels = n->count;
    if ((n = json_get_kind(e, "gpu_ns", JSON_COUNT))) out->gpu_ns = n->count;
}

typedef struct table {
    const rows_t *rows;
    uint32_t *order;
    size_t n;
} table_t;

static void deliver(const prof_writer_t *w, prof_out_t *o, const prof_summary_t *s, int sec,
                    const table_t *t, int measuring)
{
    for (size_t i = 0; i < t->n; i++) {
        const prof_row_t *row = &t->rows->row[t->order[i]];
        if (measuring)
            w->measure(s, sec, row);
        else
            w->record(o, s, sec, row);
    }
}

/* A table of every row of `rows` (the by-launch one: the labels with GPU work), in order. */
static int table_of(table_t *t, const rows_t *rows, int launch_gpu, int by, int kind)
{
    t->rows = rows, t->n = 0;
    t->order = calloc(rows->n ? rows->n : 1, sizeof *t->order);
    if (!t->order) return -1;
    for (size_t i = 0; i < rows->n; i++)
        if (!launch_gpu || rows->row[i].v[PROF_F_GPU_KERNELS]) t->order[t->n++] = (uint32_t)i;
    sort_table(rows->row, t->order, t->n, by, kind);
    return 0;
}

static int draw(const json_value_t *root, const render_options_t *opt)
{
    static prof_summary_t s;
    static prof_window_t window;
    static prof_ctx_view_t view;
    const json_value_t *v, *totals = json_get_kind(root, "totals", JSON_OBJECT);
    for (int i = 0; i < PROF_TOTAL_N; i++)
        if ((v = json_get_kind(totals, nvtxcorr_prof_total_fields[i].key, JSON_COUNT)))
            s.total[i] = v->count;
    s.gpu = (v = json_get_kind(root, "gpu_time", JSON_BOOL)) && v->count;
    s.pid = (v = json_get_kind(root, "pid", JSON_COUNT)) ? v->count : 0;
    s.subject = opt->of;
    s.top = opt->top;
    s.gpu_first = opt->gpu_first;
    s.gpu_note = text_of(root, "gpu_time_note");
    const json_value_t *w = json_get_kind(root, "window", JSON_OBJECT);
    if (w) {
        window.index = (v = json_get_kind(w, "index", JSON_COUNT)) ? (unsigned)v->count : 0;
        window.reason = text_of(w, "reason") ? text_of(w, "reason") : "?";
        window.start_ns = (v = json_get_kind(w, "start_ns", JSON_COUNT)) ? v->count : 0;
        window.end_ns = (v = json_get_kind(w, "end_ns", JSON_COUNT)) ? v->count : window.start_ns;
        s.window = &window;
    }
    /* The tree when a row has a context; with --tree always (report --by context). */
    const json_value_t *ctx = json_get_kind(root, "contexts", JSON_ARRAY);
    int tree = opt->tree && ctx;
    for (size_t i = 0; opt->contexts && ctx && !tree && i < ctx->n; i++) {
        const json_value_t *path = json_get_kind(&ctx->items[i], "context", JSON_ARRAY);
        tree = path && path->n;
    }
    void *space = NULL;
    if (tree) {
        size_t size = nvtxcorr_prof_tree_space(ctx->n);
        if ((space = malloc(size)) == NULL) return -1;
        view = (prof_ctx_view_t){ctx->n, context_line, ctx->items, space, size};
        s.ctx_view = &view;
    }
    static prof_out_t out;
    nvtxcorr_out_open(&out, STDOUT_FILENO, 0);
    if (opt->tree) {
        nvtxcorr_prof_text_tree(&out, &s);
        nvtxcorr_out_flush(&out);
        free(space);
        return out.err ? -1 : 0;
    }
    rows_t labels, kernel_labels, graphs, none = {NULL, 0};
    if (section(root, "labels", nvtxcorr_prof_row_fields, PROF_ROW_N, NULL, &labels) ||
        section(root, "kernel_labels", nvtxcorr_prof_row_fields, PROF_ROW_N, "kind",
                &kernel_labels) ||
        section(root, "graphs", nvtxcorr_prof_graph_fields, PROF_GRAPH_N, NULL, &graphs))
        return -1;
    table_t t[PROF_SECTION_N];
    if (table_of(&t[PROF_SEC_LABELS], &labels, 0, opt->sort, TABLE_CPU) ||
        table_of(&t[PROF_SEC_KERNELS], &none, 0, opt->sort, TABLE_CPU) ||
        table_of(&t[PROF_SEC_LAUNCH_GPU], &labels, 1, opt->sort, TABLE_GPU) ||
        table_of(&t[PROF_SEC_KERNEL_LABELS], &kernel_labels, 0, opt->sort, TABLE_GPU) ||
        table_of(&t[PROF_SEC_GRAPHS], &graphs, 0, opt->sort, TABLE_GRAPHS))
        return -1;
    /* The walk's order (summary.c), or with the GPU tables first the labels' table last. */
    int order[PROF_SECTION_N];
    for (int i = 0; i < PROF_SECTION_N; i++)
        order[i] = opt->gpu_first ? (i + PROF_SEC_LAUNCH_GPU) % PROF_SECTION_N : i;
    const prof_writer_t *wr = &nvtxcorr_prof_text_writer;
    wr->begin(&out, &s);
    for (int pass = 1; pass >= 0; pass--)
        for (int i = 0; i < PROF_SECTION_N; i++) {
            int sec = order[i], gpu_section = sec != PROF_SEC_LABELS && sec != PROF_SEC_KERNELS;
            if (!pass) wr->section(&out, &s, sec, 0);
            if (!gpu_section || s.gpu) deliver(wr, &out, &s, sec, &t[sec], pass);
            if (!pass) wr->section(&out, &s, sec, 1);
        }
    wr->contexts(&out, &s);
    wr->end(&out, &s);
    nvtxcorr_out_flush(&out);
    for (int i = 0; i < PROF_SECTION_N; i++)
        free(t[i].order);
    free(labels.row), free(kernel_labels.row), free(graphs.row), free(space);
    return out.err ? -1 : 0;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *grown = realloc(buf, cap *= 2);
        if (!grown) free(buf);
        buf = grown;
    }
    int err = ferror(f) ? errno : 0;
    if (f != stdin) fclose(f);
    if (err && buf) free(buf), buf = NULL, errno = err;
    *len = n;
    return buf;
}

static const char usage_text[] =
    "usage: nvtxcorr-tool render [--top N] [--sort gpu|cpu|launches] [--gpu-first]\n"
    "                            [--no-contexts | --tree] [--of TEXT] FILE.json|-\n"
    "The summary's text table, as the library writes it at exit, from its JSON (the library's\n"
    "or nvtxcorr report's merge). --top: rows per table and children per context; --sort:\n"
    "every table's order; --gpu-first: the GPU tables before the CPU one, and why there is no\n"
    "GPU time; --no-contexts: no program-context tree; --tree: that tree alone, of the\n"
    "`contexts` rows as given; --of: whose profile the head names (default: pid N).\n";

int nvtxcorr_render(int argc, char **argv)
{
    render_options_t opt = {NULL, 0, SORT_OWN, 0, 1, 0};
    const char *path = NULL;
    static const char *const sorts[] = {"gpu", "cpu", "launches"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return fputs(usage_text, stdout), 0;
        if (strcmp(a, "--gpu-first") == 0) {
            opt.gpu_first = 1;
        } else if (strcmp(a, "--no-contexts") == 0) {
            opt.contexts = 0;
        } else if (strcmp(a, "--tree") == 0) {
            opt.tree = 1;
        } else if (strcmp(a, "--of") == 0 && value) {
            opt.of = value, i++;
        } else if (strcmp(a, "--top") == 0 && value) {
            char *end;
            unsigned long n = strtoul(value, &end, 10);
            if (strcmp(value, "all") != 0 && (*end || !n || n > 1000000000ul || value[0] == '-'))
                return fprintf(stderr, "nvtxcorr: error: render --top %s: not a count\n", value), 2;
            opt.top = strcmp(value, "all") == 0 ? 0 : (unsigned)n, i++;
        } else if (strcmp(a, "--sort") == 0 && value) {
            int k = 0;
            while (k < 3 && strcmp(value, sorts[k]) != 0)
                k++;
            if (k == 3)
                return fprintf(stderr, "nvtxcorr: error: render --sort %s: gpu, cpu or launches\n",
                               value),
                       2;
            opt.sort = SORT_GPU + k, i++;
        } else if (!path && (a[0] != '-' || !a[1])) {
            path = a;
        } else {
            fprintf(stderr, "nvtxcorr: error: render: unexpected '%s'\n", a);
            return fputs(usage_text, stderr), 2;
        }
    }
    if (!path) return fputs(usage_text, stderr), 2;
    if (opt.tree && !opt.contexts)
        return fprintf(stderr, "nvtxcorr: error: render: --tree or --no-contexts, not both\n"), 2;
    size_t len, at = 0;
    char *text = read_all(path, &len);
    if (!text) return fprintf(stderr, "nvtxcorr: error: %s: %s\n", path, strerror(errno)), 2;
    json_value_t root;
    const char *why = NULL;
    int bad = json_parse(text, len, &root, &why, &at);
    const json_value_t *version = bad ? NULL : json_get_kind(&root, "nvtxcorr_profile", JSON_COUNT);
    int status = 0;
    if (bad)
        fprintf(stderr, "nvtxcorr: error: %s: not JSON: %s at byte %zu\n", path, why, at),
            status = 2;
    else if (!version || version->count != 1)
        fprintf(stderr,
                "nvtxcorr: error: %s: not an nvtxcorr summary (no \"nvtxcorr_profile\": 1)\n",
                path),
            status = 2;
    else if (draw(&root, &opt))
        fprintf(stderr, "nvtxcorr: error: render: %s\n", strerror(errno ? errno : ENOMEM)),
            status = 1;
    if (!bad) json_free(&root);
    free(text);
    return status;
}
