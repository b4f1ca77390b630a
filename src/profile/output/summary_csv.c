/* The summary as CSV (docs/profile.md, "CSV and text"): one header, then one line per record,
 * every section in the same columns: section,label,category,name,function and the
 * non-histogram fields of PROF_ROW_FIELDS, a field a record lacks left empty. A graph's
 * replays go in `launches` and its per-replay GPU time in the GPU columns. Same constraints as
 * summary.c: may run in a signal handler. */
#include "profile/base/out.h"
#include "summary.h"
/* The graph field shown in each row column, +1 (0: the column stays empty). */
static const int graph_column[PROF_ROW_N] = {
    [PROF_F_LAUNCHES] = PROF_G_REPLAYS + 1,    [PROF_F_GPU_NS] = PROF_G_NS + 1,
    [PROF_F_GPU_KERNELS] = PROF_G_KERNELS + 1, [PROF_F_GPU_MIN] = PROF_G_MIN + 1,
    [PROF_F_GPU_MAX] = PROF_G_MAX + 1,         [PROF_F_GPU_MEAN] = PROF_G_MEAN + 1,
    [PROF_F_GPU_P50] = PROF_G_P50 + 1,         [PROF_F_GPU_P99] = PROF_G_P99 + 1};

static void begin(prof_out_t *o, const prof_summary_t *s)
{
    (void)s;
    nvtxcorr_out_str(o, "section,label,category,name,function");
    for (int i = 0; i < PROF_ROW_N; i++) {
        if (PROF_KIND_IS_HIST(nvtxcorr_prof_row_fields[i].kind)) continue;
        nvtxcorr_out_str(o, ",");
        nvtxcorr_out_str(o, nvtxcorr_prof_row_fields[i].key);
    }
    nvtxcorr_out_str(o, "\n");
}

/* After the kernels, launches that passed through while nvtxcorr was starting: a row of its
 * own, its launches column and nothing else. */
static void section(prof_out_t *o, const prof_summary_t *s, int sec, int end)
{
    if (!end || sec != PROF_SEC_KERNELS || s->total[PROF_TOT_UNCOUNTED] == 0) return;
    static const char *const none[PROF_TEXT_N];
    uint64_t v[PROF_ROW_N] = {[PROF_F_LAUNCHES] = s->total[PROF_TOT_UNCOUNTED]};
    nvtxcorr_prof_csv_line(o, "uncounted_at_start", none, v, 1u << PROF_F_LAUNCHES);
}

static void record(prof_out_t *o, const prof_summary_t *s, int sec, const prof_row_t *r)
{
    (void)s;
    const char *name = nvtxcorr_prof_section_csv[sec];
    if (name == NULL) return;
    if (sec != PROF_SEC_GRAPHS) {
        nvtxcorr_prof_csv_line(o, name, r->text, r->v, r->have);
        return;
    }
    uint64_t v[PROF_ROW_N] = {0};
    uint32_t have = 0;
    for (int i = 0; i < PROF_ROW_N; i++)
        if (graph_column[i]) v[i] = r->v[graph_column[i] - 1], have |= 1u << i;
    nvtxcorr_prof_csv_line(o, name, r->text, v, have);
}

/* A window's summary (NVTXCORR_WINDOW) ends with one "window" row: label the reason, name
 * the index, function "start_ns:end_ns". */
static void end(prof_out_t *o, const prof_summary_t *s)
{
    if (s->window == NULL) return;
    char num[48];
    nvtxcorr_out_str(o, "window,");
    nvtxcorr_out_csv(o, s->window->reason);
    nvtxcorr_out_str(o, ",,");
    nvtxcorr_out_u64(o, s->window->index);
    nvtxcorr_out_str(o, ",");
    size_t n = nvtxcorr_fmt_u64(num, s->window->start_ns);
    num[n++] = ':';
    num[n + nvtxcorr_fmt_u64(num + n, s->window->end_ns)] = 0;
    nvtxcorr_out_str(o, num);
    for (int i = 0; i < PROF_ROW_N; i++)
        if (!PROF_KIND_IS_HIST(nvtxcorr_prof_row_fields[i].kind)) nvtxcorr_out_str(o, ",");
    nvtxcorr_out_str(o, "\n");
}

const prof_writer_t nvtxcorr_prof_csv_writer = {NULL,   begin, section,
                                                record, end,   nvtxcorr_prof_csv_contexts};
