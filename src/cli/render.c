/* nvtxcorr-tool render [--of TEXT] FILE.json: a summary's JSON (the library's, or the report's
 * merge of several, which has the same schema) drawn as the text table the library writes at
 * exit, by the library's own text writer (summary_text.c, summary_tree.c, compiled into this
 * tool), so the two are the same byte for byte: the table is drawn in one place
 * (docs/design.md, Front end). This file only turns the JSON back into the rows the library's
 * walk (summary.c) hands the writer, section by section, in the same order. --of names whose
 * profile it is in the head ("3 processes"), for a merge without a pid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "json.h"
#include "profile/output/summary_writer.h"
#include "render.h"

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

/* Labels by the GPU time their launches caused, most first (summary.c's gpu_labels); equal
 * times keep the labels section's order. */
static const rows_t *gpu_sort_rows;
static int before_gpu(uint32_t a, uint32_t b)
{
    const prof_row_t *x = &gpu_sort_rows->row[a], *y = &gpu_sort_rows->row[b];
    if (x->v[PROF_F_GPU_NS] != y->v[PROF_F_GPU_NS])
        return x->v[PROF_F_GPU_NS] > y->v[PROF_F_GPU_NS];
    return a < b;
}

/* Program context's rows, as summary_tree.c reads them. */
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

static void deliver(const prof_writer_t *w, prof_out_t *o, const prof_summary_t *s, int sec,
                    const rows_t *r, const uint32_t *order, int measuring)
{
    for (size_t i = 0; i < r->n; i++) {
        const prof_row_t *row = &r->row[order ? order[i] : i];
        if (measuring)
            w->measure(s, sec, row);
        else
            w->record(o, s, sec, row);
    }
}

static int draw(const json_value_t *root, const char *of)
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
    s.subject = of;
    s.gpu_note = text_of(root, "gpu_time_note");
    const json_value_t *w = json_get_kind(root, "window", JSON_OBJECT);
    if (w) {
        window.index = (v = json_get_kind(w, "index", JSON_COUNT)) ? (unsigned)v->count : 0;
        window.reason = text_of(w, "reason") ? text_of(w, "reason") : "?";
        window.start_ns = (v = json_get_kind(w, "start_ns", JSON_COUNT)) ? v->count : 0;
        window.end_ns = (v = json_get_kind(w, "end_ns", JSON_COUNT)) ? v->count : window.start_ns;
        s.window = &window;
    }
    const json_value_t *ctx = json_get_kind(root, "contexts", JSON_ARRAY);
    for (size_t i = 0; ctx && i < ctx->n; i++) {
        const json_value_t *path = json_get_kind(&ctx->items[i], "context", JSON_ARRAY);
        if (path && path->n) {
            view = (prof_ctx_view_t){ctx->n, context_line, ctx->items};
            s.ctx_view = &view;
            break;
        }
    }
    rows_t labels, kernel_labels, graphs, none = {NULL, 0};
    if (section(root, "labels", nvtxcorr_prof_row_fields, PROF_ROW_N, NULL, &labels) ||
        section(root, "kernel_labels", nvtxcorr_prof_row_fields, PROF_ROW_N, "kind",
                &kernel_labels) ||
        section(root, "graphs", nvtxcorr_prof_graph_fields, PROF_GRAPH_N, NULL, &graphs))
        return -1;
    /* By launch label: the labels whose launches caused GPU work. */
    uint32_t *gpu_order = calloc(labels.n ? labels.n : 1, sizeof *gpu_order);
    if (!gpu_order) return -1;
    rows_t launch_gpu = {labels.row, 0};
    for (size_t i = 0; i < labels.n; i++)
        if (labels.row[i].v[PROF_F_GPU_KERNELS]) gpu_order[launch_gpu.n++] = (uint32_t)i;
    gpu_sort_rows = &labels;
    nvtxcorr_prof_sort(gpu_order, launch_gpu.n, before_gpu);

    const rows_t *by_section[PROF_SECTION_N] = {[PROF_SEC_LABELS] = &labels,
                                                [PROF_SEC_KERNELS] = &none,
                                                [PROF_SEC_LAUNCH_GPU] = &launch_gpu,
                                                [PROF_SEC_KERNEL_LABELS] = &kernel_labels,
                                                [PROF_SEC_GRAPHS] = &graphs};
    const prof_writer_t *wr = &nvtxcorr_prof_text_writer;
    static prof_out_t out;
    nvtxcorr_out_open(&out, STDOUT_FILENO, 0);
    wr->begin(&out, &s);
    for (int pass = 1; pass >= 0; pass--)
        for (int sec = 0; sec < PROF_SECTION_N; sec++) {
            int gpu_section = sec != PROF_SEC_LABELS && sec != PROF_SEC_KERNELS;
            const uint32_t *order = sec == PROF_SEC_LAUNCH_GPU ? gpu_order : NULL;
            if (!pass) wr->section(&out, &s, sec, 0);
            if (!gpu_section || s.gpu) deliver(wr, &out, &s, sec, by_section[sec], order, pass);
            if (!pass) wr->section(&out, &s, sec, 1);
        }
    wr->contexts(&out, &s);
    wr->end(&out, &s);
    nvtxcorr_out_flush(&out);
    free(gpu_order), free(labels.row), free(kernel_labels.row), free(graphs.row);
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

int nvtxcorr_render(int argc, char **argv)
{
    const char *of = NULL, *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--of") == 0 && i + 1 < argc)
            of = argv[++i];
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return puts("usage: nvtxcorr-tool render [--of TEXT] FILE.json|-"), 0;
        else if (!path && (argv[i][0] != '-' || !argv[i][1]))
            path = argv[i];
        else
            return fprintf(stderr, "nvtxcorr: error: render: unexpected '%s'\n", argv[i]), 2;
    }
    if (!path) return fputs("nvtxcorr: error: render needs a summary: FILE.json\n", stderr), 2;
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
    else if (draw(&root, of))
        fprintf(stderr, "nvtxcorr: error: render: %s\n", strerror(errno ? errno : ENOMEM)),
            status = 1;
    if (!bad) json_free(&root);
    free(text);
    return status;
}
