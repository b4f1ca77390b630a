/* The summary as a text table, at most PROF_TEXT_WIDTH columns (docs/profile.md, "CSV and
 * text"): labels by CPU time, then notes on what no label holds, then with GPU time the two
 * GPU views by label and the graphs' replays. Each table's number columns are one of the
 * column lists below (heading, width, field); the text columns are fitted to every value
 * shown (measure). Same constraints as summary.c: may run in a signal handler. It reads only
 * the summary and the rows it is given (summary.h), never the library's state. */
#include <string.h>
#include "profile/base/out.h"
#include "summary_writer.h"
typedef enum { COUNT, TIME, SHARE } how_t;
typedef struct column {
    const char *heading;
    size_t width;
    int field;
    how_t how;
} column_t;
#define COLUMNS(c) c, sizeof c / sizeof *c

static const column_t cpu_columns[] = {
    {"launches", 9, PROF_F_LAUNCHES, COUNT}, {"share", 6, PROF_F_CPU_NS, SHARE},
    {"total", 9, PROF_F_CPU_NS, TIME},       {"mean", 8, PROF_F_CPU_MEAN, TIME},
    {"p50", 8, PROF_F_CPU_P50, TIME},        {"p99", 8, PROF_F_CPU_P99, TIME}};
static const column_t gpu_columns[] = {
    {"kernels", 9, PROF_F_GPU_KERNELS, COUNT}, {"share", 6, PROF_F_GPU_NS, SHARE},
    {"total", 9, PROF_F_GPU_NS, TIME},         {"mean", 8, PROF_F_GPU_MEAN, TIME},
    {"min", 8, PROF_F_GPU_MIN, TIME},          {"max", 8, PROF_F_GPU_MAX, TIME}};
static const column_t graph_columns[] = {{"replays", 8, PROF_G_REPLAYS, COUNT},
                                         {"kernels/replay", 15, PROF_G_PER_REPLAY, COUNT},
                                         {"per replay: mean", 17, PROF_G_MEAN, TIME},
                                         {"p50", 8, PROF_G_P50, TIME},
                                         {"p99", 8, PROF_G_P99, TIME}};

static size_t numbers_width(const column_t *c, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += 1 + c[i].width;
    return w;
}

/* cpu: the labels table; gpu: both GPU tables share one layout; graphs: one text column. */
static prof_cols_t cpu, gpu, graphs;
static uint32_t graph_rows;
/* --top: the rows the table being drawn has shown, and those it left out. */
static uint64_t shown, left_out;
static unsigned top;

/* The end of a table: how many rows --top left out, if any. */
static void table_end(prof_out_t *o)
{
    if (left_out) {
        nvtxcorr_out_str(o, "(");
        nvtxcorr_out_u64(o, left_out);
        nvtxcorr_out_str(o, " more rows; --top N or --top all)\n");
    }
    shown = left_out = 0;
}

static void pad(prof_out_t *o, const char *s, size_t width, int right)
{
    nvtxcorr_prof_pad(o, s, width, right);
}

static void cell(prof_out_t *o, const column_t *c, uint64_t v, uint64_t whole)
{
    char buf[32];
    if (c->how == TIME) {
        nvtxcorr_prof_fmt_time(buf, v);
    } else if (c->how == COUNT) {
        buf[nvtxcorr_fmt_u64(buf, v)] = 0;
    } else {
        uint64_t tenths = whole ? (v * 1000 + whole / 2) / whole : 0;
        size_t n = nvtxcorr_fmt_u64(buf, tenths / 10);
        buf[n++] = '.';
        n += nvtxcorr_fmt_u64(buf + n, tenths % 10);
        buf[n++] = '%';
        buf[n] = 0;
    }
    nvtxcorr_out_str(o, " ");
    pad(o, buf, c->width, 1);
}

static void header(prof_out_t *o, const prof_cols_t *w, const char *first, const column_t *c,
                   size_t n)
{
    pad(o, first, w->first, 0);
    if (w->second) {
        nvtxcorr_out_str(o, " ");
        pad(o, "category", w->second, 0);
    }
    for (size_t i = 0; i < n; i++) {
        nvtxcorr_out_str(o, " ");
        pad(o, c[i].heading, c[i].width, 1);
    }
    nvtxcorr_out_str(o, "\n");
}

static void row(prof_out_t *o, const prof_cols_t *w, const prof_row_t *r, uint64_t whole,
                const column_t *c, size_t n)
{
    if (top && shown >= top) {
        left_out++;
        return;
    }
    shown++;
    pad(o, r->text[PROF_T_LABEL], w->first, 0);
    if (w->second) {
        nvtxcorr_out_str(o, " ");
        const char *category = r->text[PROF_T_CATEGORY];
        pad(o, category ? category : "-", w->second, 0);
    }
    for (size_t i = 0; i < n; i++)
        cell(o, &c[i], r->v[c[i].field], whole);
    nvtxcorr_out_str(o, "\n");
}

static const char uncorrelated[] = "[not from a wrapped launch]";

static void measure(const prof_summary_t *s, int sec, const prof_row_t *r)
{
    (void)s;
    const char *label = r->text[PROF_T_LABEL], *category = r->text[PROF_T_CATEGORY];
    if (sec == PROF_SEC_LABELS && r->v[PROF_F_LAUNCHES])
        nvtxcorr_prof_cols_need(&cpu, label, category);
    if (sec == PROF_SEC_LAUNCH_GPU || sec == PROF_SEC_KERNEL_LABELS)
        nvtxcorr_prof_cols_need(&gpu, label, category);
}

static void begin(prof_out_t *o, const prof_summary_t *s)
{
    const uint64_t *tot = s->total;
    char t[32];
    memset(&cpu, 0, sizeof cpu), memset(&gpu, 0, sizeof gpu), memset(&graphs, 0, sizeof graphs);
    graph_rows = 0;
    shown = left_out = 0, top = s->top;
    nvtxcorr_prof_cols_need(&cpu, "label", "category");
    nvtxcorr_prof_cols_need(&gpu, "label", "category");
    if (tot[PROF_TOT_GPU_UNCORRELATED]) nvtxcorr_prof_cols_need(&gpu, uncorrelated, NULL);
    nvtxcorr_out_str(o, "nvtxcorr: profile of ");
    if (s->subject) {
        nvtxcorr_out_str(o, s->subject);
    } else {
        nvtxcorr_out_str(o, "pid ");
        nvtxcorr_out_u64(o, s->pid);
    }
    nvtxcorr_out_str(o, ": ");
    nvtxcorr_out_u64(o, tot[PROF_TOT_LAUNCHES]);
    nvtxcorr_out_str(o, " launches (");
    nvtxcorr_out_u64(o, tot[PROF_TOT_GRAPH_LAUNCHES]);
    nvtxcorr_out_str(o, " graph), ");
    nvtxcorr_out_u64(o, tot[PROF_TOT_ERRORS]);
    nvtxcorr_out_str(o, " errors, ");
    nvtxcorr_prof_fmt_time(t, tot[PROF_TOT_CPU_NS]);
    nvtxcorr_out_str(o, t);
    nvtxcorr_out_str(o, " CPU in launch calls\n");
    if (s->window) {
        nvtxcorr_out_str(o, "window ");
        nvtxcorr_out_u64(o, s->window->index);
        nvtxcorr_out_str(o, " (closed by ");
        nvtxcorr_out_str(o, s->window->reason);
        nvtxcorr_out_str(o, "): ");
        nvtxcorr_prof_fmt_time(t, s->window->end_ns - s->window->start_ns);
        nvtxcorr_out_str(o, t);
        nvtxcorr_out_str(o, "\n");
    }
}

/* A count of launches, then what is said of them, when there are any. */
static void note(prof_out_t *o, uint64_t n, const char *what)
{
    if (n == 0) return;
    nvtxcorr_out_u64(o, n);
    nvtxcorr_out_str(o, what);
}

/* What no label of the table holds, under it. */
static void notes(prof_out_t *o, const uint64_t *tot)
{
    note(o, tot[PROF_TOT_UNLABELLED],
         " launches of kernels whose rule says \"-\" are in no label (see the kernels list)\n");
    note(o, tot[PROF_TOT_OTHER],
         " launches of kernels beyond the 32766 distinct kernels and graph labels kept are "
         "counted under [other]\n");
    note(o, tot[PROF_TOT_OTHER_GRAPHS],
         " launches of graphs beyond the 8191 distinct graph labels kept are counted under "
         "[other graphs]\n");
    note(o, tot[PROF_TOT_CAPTURE],
         " launches made during stream capture (recorded, not run) not counted\n");
    if (tot[PROF_TOT_OWN_NS]) { /* CUPTI's callbacks into nvtxcorr: its time, not the launches' */
        char t[32];
        nvtxcorr_prof_fmt_time(t, tot[PROF_TOT_OWN_NS]);
        nvtxcorr_out_str(o, "nvtxcorr's own work inside the launch calls (CUPTI callbacks), "
                            "not in the times above: ");
        nvtxcorr_out_str(o, t);
        nvtxcorr_out_str(o, "\n");
    }
    note(o, tot[PROF_TOT_UNCOUNTED],
         " launches made while nvtxcorr was starting passed through uncounted\n");
}

static void gpu_head(prof_out_t *o, const prof_summary_t *s)
{
    const uint64_t *tot = s->total;
    char t[32];
    nvtxcorr_prof_fmt_time(t, tot[PROF_TOT_GPU_NS]);
    nvtxcorr_out_str(o, s->gpu_first ? "GPU time: " : "\nGPU time: ");
    nvtxcorr_out_str(o, t);
    nvtxcorr_out_str(o, " in ");
    nvtxcorr_out_u64(o, tot[PROF_TOT_GPU_KERNELS]);
    nvtxcorr_out_str(o, " kernels; ");
    nvtxcorr_out_u64(o, tot[PROF_TOT_GPU_DROPPED]);
    nvtxcorr_out_str(o, " records dropped by CUPTI");
    const char *why = s->gpu_note;
    if (why) {
        nvtxcorr_out_str(o, "\n(");
        nvtxcorr_out_str(o, why);
        nvtxcorr_out_str(o, ")");
    }
    if (tot[PROF_TOT_GPU_NOT_HOOKED]) {
        nvtxcorr_prof_fmt_time(t, tot[PROF_TOT_GPU_NOT_HOOKED_NS]);
        nvtxcorr_out_str(o, "\n(");
        nvtxcorr_out_u64(o, tot[PROF_TOT_GPU_NOT_HOOKED]);
        nvtxcorr_out_str(o, " kernels, ");
        nvtxcorr_out_str(o, t);
        nvtxcorr_out_str(o, ", came from launches only CUPTI saw, by a path nvtxcorr does not "
                            "hook: under [not hooked])");
    }
    nvtxcorr_prof_cols_fit(&gpu, numbers_width(COLUMNS(gpu_columns)), 1);
    nvtxcorr_out_str(o, "\nby launch label (a graph launch's label gets all its kernels)\n");
    header(o, &gpu, "label", COLUMNS(gpu_columns));
}

static void section(prof_out_t *o, const prof_summary_t *s, int sec, int end)
{
    const uint64_t *tot = s->total;
    if (sec == PROF_SEC_LABELS && !end) {
        if (s->gpu_first && s->gpu) nvtxcorr_out_str(o, "\nCPU time in launch calls, by label\n");
        nvtxcorr_prof_cols_fit(&cpu, numbers_width(COLUMNS(cpu_columns)), 1);
        header(o, &cpu, "label", COLUMNS(cpu_columns));
    } else if (sec == PROF_SEC_LABELS) {
        table_end(o);
        notes(o, tot);
        if (s->gpu_first && !s->gpu) {
            nvtxcorr_out_str(o, s->gpu_note ? "(no GPU time: " : "(no GPU time");
            if (s->gpu_note) nvtxcorr_out_str(o, s->gpu_note);
            nvtxcorr_out_str(o, ")\n");
        }
    } else if (!s->gpu) {
        return;
    } else if (sec == PROF_SEC_LAUNCH_GPU && !end) {
        gpu_head(o, s);
    } else if (sec == PROF_SEC_LAUNCH_GPU) {
        if (tot[PROF_TOT_GPU_UNCORRELATED]) {
            prof_row_t u = {.text = {uncorrelated}};
            u.v[PROF_F_GPU_KERNELS] = tot[PROF_TOT_GPU_UNCORRELATED];
            u.v[PROF_F_GPU_NS] = tot[PROF_TOT_GPU_UNCORRELATED_NS];
            u.v[PROF_F_GPU_MEAN] = u.v[PROF_F_GPU_NS] / u.v[PROF_F_GPU_KERNELS];
            row(o, &gpu, &u, tot[PROF_TOT_GPU_NS], COLUMNS(gpu_columns));
        }
        table_end(o);
    } else if (sec == PROF_SEC_KERNEL_LABELS && !end) {
        nvtxcorr_out_str(o, "by kernel label (every kernel that ran, graph nodes included)\n");
        header(o, &gpu, "label", COLUMNS(gpu_columns));
    } else if (end && (sec == PROF_SEC_KERNEL_LABELS || sec == PROF_SEC_GRAPHS)) {
        table_end(o);
    }
}

static void record(prof_out_t *o, const prof_summary_t *s, int sec, const prof_row_t *r)
{
    if (sec == PROF_SEC_LABELS && r->v[PROF_F_LAUNCHES]) {
        row(o, &cpu, r, s->total[PROF_TOT_CPU_NS], COLUMNS(cpu_columns));
    } else if (sec == PROF_SEC_LAUNCH_GPU || sec == PROF_SEC_KERNEL_LABELS) {
        row(o, &gpu, r, s->total[PROF_TOT_GPU_NS], COLUMNS(gpu_columns));
    } else if (sec == PROF_SEC_GRAPHS) {
        if (graph_rows++ == 0) {
            nvtxcorr_prof_cols_fit(&graphs, numbers_width(COLUMNS(graph_columns)), 0);
            header(o, &graphs, "graph", COLUMNS(graph_columns));
        }
        row(o, &graphs, r, 0, COLUMNS(graph_columns));
    }
}

static void end(prof_out_t *o, const prof_summary_t *s)
{
    (void)o, (void)s;
}

const prof_writer_t nvtxcorr_prof_text_writer = {measure, begin, section,
                                                 record,  end,   nvtxcorr_prof_text_contexts};
