/* GPU time in the summary (summary.c calls these while it writes): the GPU fields of each
 * label and kernel, the totals, and the sections only GPU time has: `kernel_labels` (the
 * by-kernel view, by label) and `graphs` (per graph label: replays and the GPU time of each).
 * Same constraints as summary.c: may run in a signal handler, so static tables, no malloc. */
#include <string.h>

#include "internal.h"

int nvtxcorr_prof_gpu_reported(void)
{
    return nvtxcorr_prof_gpu_on == 1 && nvtxcorr_prof_gpu.by_kernel != NULL;
}

static void merge(prof_gpu_stat_t *a, const prof_gpu_stat_t *b)
{
    if (b->n == 0) return;
    if (a->n == 0 || b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
    a->n += b->n;
    a->ns += b->ns;
}

static void percentiles(prof_gpu_stat_t *s, const uint64_t *hist)
{
    s->hist = hist;
    s->p50 = hist ? nvtxcorr_prof_percentile(hist, s->n, s->min, s->max, 500) : 0;
    s->p99 = hist ? nvtxcorr_prof_percentile(hist, s->n, s->min, s->max, 990) : 0;
}

/* The label's sites merged; its histogram is a static scratch, valid until the next call. */
void nvtxcorr_prof_gpu_label_stat(const prof_label_t *l, uint32_t nsites, int by_kernel,
                                  prof_gpu_stat_t *out)
{
    static uint64_t hist[PROF_BUCKETS];
    int whole = 1;
    memset(out, 0, sizeof *out);
    if (!nvtxcorr_prof_gpu_reported()) return;
    const prof_gpu_stat_t *v =
        by_kernel ? nvtxcorr_prof_gpu.by_kernel : nvtxcorr_prof_gpu.by_launch;
    uint64_t *const *hists =
        by_kernel ? nvtxcorr_prof_gpu.kernel_hist : nvtxcorr_prof_gpu.launch_hist;
    memset(hist, 0, sizeof hist);
    for (const nvtxcorr_profile_site_t *s = atomic_load_explicit(&l->first, memory_order_acquire);
         s; s = atomic_load_explicit(&s->next_in_label, memory_order_relaxed)) {
        if (s->id >= nsites || v[s->id].n == 0) continue;
        merge(out, &v[s->id]);
        if (hists[s->id] == NULL) whole = 0;
        for (unsigned b = 0; whole && b < PROF_BUCKETS; b++)
            hist[b] += hists[s->id][b];
    }
    percentiles(out, whole ? hist : NULL);
}

void nvtxcorr_prof_gpu_site_stat(uint32_t id, prof_gpu_stat_t *out)
{
    memset(out, 0, sizeof *out);
    if (!nvtxcorr_prof_gpu_reported()) return;
    *out = nvtxcorr_prof_gpu.by_kernel[id];
    percentiles(out, nvtxcorr_prof_gpu.kernel_hist[id]);
}

/* Percentiles exist for a row without operations, or one whose histogram is whole. */
static int have_percentiles(const prof_gpu_stat_t *s)
{
    return nvtxcorr_prof_gpu_reported() && (s->n == 0 || s->hist != NULL);
}

static void json_u64(prof_out_t *o, const char *key, uint64_t v, int have)
{
    nvtxcorr_out_str(o, key);
    if (have)
        nvtxcorr_out_u64(o, v);
    else
        nvtxcorr_out_str(o, "null");
}

void nvtxcorr_prof_gpu_json_stat(prof_out_t *o, const prof_gpu_stat_t *s)
{
    int have = nvtxcorr_prof_gpu_reported();
    json_u64(o, "\"gpu_ns\": ", s->ns, have);
    json_u64(o, ", \"gpu_kernels\": ", s->n, have);
    json_u64(o, ", \"gpu_min_ns\": ", s->min, have);
    json_u64(o, ", \"gpu_max_ns\": ", s->max, have);
    json_u64(o, ", \"gpu_mean_ns\": ", s->n ? s->ns / s->n : 0, have);
    json_u64(o, ", \"gpu_p50_ns\": ", s->n ? s->p50 : 0, have_percentiles(s));
    json_u64(o, ", \"gpu_p99_ns\": ", s->n ? s->p99 : 0, have_percentiles(s));
    nvtxcorr_out_str(o, ", \"gpu_histogram\": ");
    if (!have_percentiles(s)) {
        nvtxcorr_out_str(o, "null");
        return;
    }
    nvtxcorr_out_str(o, "[");
    int first = 1;
    for (unsigned b = 0; s->n && b < PROF_BUCKETS; b++)
        if (s->hist[b]) {
            nvtxcorr_out_str(o, first ? "[" : ", [");
            nvtxcorr_out_u64(o, b);
            nvtxcorr_out_str(o, ", ");
            nvtxcorr_out_u64(o, s->hist[b]);
            nvtxcorr_out_str(o, "]");
            first = 0;
        }
    nvtxcorr_out_str(o, "]");
}

void nvtxcorr_prof_gpu_json_head(prof_out_t *o)
{
    if (nvtxcorr_prof_gpu_reported()) nvtxcorr_prof_gpu_note_failures();
    nvtxcorr_out_str(o, nvtxcorr_prof_gpu_reported() ? "\"gpu_time\": true, \"gpu_time_note\": "
                                                     : "\"gpu_time\": false, \"gpu_time_note\": ");
    nvtxcorr_out_json(o, nvtxcorr_prof_gpu_note[0] ? nvtxcorr_prof_gpu_note : NULL);
}

/* Sites whose rule says "-": their kernels' time (by kernel) or the time their launches
 * caused (by launch) is in no label of that view. */
static uint64_t unlabelled_ns(uint32_t nsites, const prof_gpu_stat_t *view)
{
    uint64_t ns = 0;
    for (uint32_t i = 0; i < nsites; i++) {
        const nvtxcorr_profile_site_t *s =
            atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
        if (s->label_id == PROF_NO_LABEL) ns += view[i].ns;
    }
    return ns;
}

void nvtxcorr_prof_gpu_json_totals(prof_out_t *o)
{
    const prof_gpu_t *g = &nvtxcorr_prof_gpu;
    int have = nvtxcorr_prof_gpu_reported();
    uint32_t nsites = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_acquire);
    json_u64(o, ", \"gpu_ns\": ", g->ns, have);
    json_u64(o, ", \"gpu_kernels\": ", g->ops, have);
    json_u64(o, ", \"gpu_dropped_records\": ", g->dropped, have);
    json_u64(o, ", \"gpu_incomplete_records\": ", g->incomplete, have);
    json_u64(o, ", \"gpu_uncorrelated_kernels\": ", g->uncorrelated, have);
    json_u64(o, ", \"gpu_uncorrelated_ns\": ", g->uncorrelated_ns, have);
    json_u64(o, ", \"gpu_unlabelled_ns\": ", have ? unlabelled_ns(nsites, g->by_kernel) : 0, have);
    json_u64(o, ", \"gpu_unlabelled_launch_ns\": ", have ? unlabelled_ns(nsites, g->by_launch) : 0,
             have);
}

/* ---- the by-kernel view by label, ordered by GPU time ---- */
static prof_gpu_stat_t label_gpu[PROF_MAX_SITES];
static uint32_t order[PROF_MAX_SITES];

static int before(uint32_t a, uint32_t b)
{
    if (label_gpu[a].ns != label_gpu[b].ns) return label_gpu[a].ns > label_gpu[b].ns;
    return a < b;
}
/* Labels with GPU operations in the by-kernel view, into `order`, most time first. */
static uint32_t kernel_labels(uint32_t nsites)
{
    uint32_t n = 0,
             nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    for (uint32_t i = 0; i < nlabels; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_acquire);
        nvtxcorr_prof_gpu_label_stat(l, nsites, 1, &label_gpu[i]);
        if (label_gpu[i].n) order[n++] = i;
    }
    nvtxcorr_prof_sort(order, n, before);
    return n;
}

static const char *kind_of(const char *label)
{
    return !strcmp(label, "[memcpy]") ? "memcpy" : !strcmp(label, "[memset]") ? "memset" : "kernel";
}

/* Graph launch sites with GPU replays. A graph whose rule says "-" has no label, so no entry
 * (its time is in gpu_unlabelled_launch_ns), as a skipped kernel has none in kernel_labels;
 * its site's name, "-", would read as a graph labelled "-". */
static const prof_gpu_replays_t *replays_of(const nvtxcorr_profile_site_t *s)
{
    return s->graph && s->label_id != PROF_NO_LABEL ? nvtxcorr_prof_gpu.replays[s->id] : NULL;
}

static const char *category_of(const nvtxcorr_profile_site_t *s)
{
    return s->label_id == PROF_NO_LABEL
               ? NULL
               : atomic_load_explicit(&nvtxcorr_prof_labels[s->label_id], memory_order_relaxed)
                     ->category;
}

static uint64_t replay_pct(const prof_gpu_replays_t *r, uint64_t per_mille)
{
    return nvtxcorr_prof_percentile(r->hist, r->time.n, r->time.min, r->time.max, per_mille);
}

void nvtxcorr_prof_gpu_json_sections(prof_out_t *o, uint32_t nsites)
{
    int have = nvtxcorr_prof_gpu_reported();
    uint32_t n = have ? kernel_labels(nsites) : 0;
    nvtxcorr_out_str(o, ",\n \"kernel_labels\": [");
    for (uint32_t i = 0; i < n; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        nvtxcorr_out_str(o, i ? ",\n  {\"label\": " : "\n  {\"label\": ");
        nvtxcorr_out_json(o, l->text);
        nvtxcorr_out_str(o, ", \"category\": ");
        nvtxcorr_out_json(o, l->category);
        nvtxcorr_out_str(o, ", \"kind\": ");
        nvtxcorr_out_json(o, kind_of(l->text));
        nvtxcorr_out_str(o, ", ");
        prof_gpu_stat_t st; /* again, for its histogram (a scratch shared by all labels) */
        nvtxcorr_prof_gpu_label_stat(l, nsites, 1, &st);
        nvtxcorr_prof_gpu_json_stat(o, &st);
        nvtxcorr_out_str(o, "}");
    }
    nvtxcorr_out_str(o, "],\n \"graphs\": [");
    int first = 1;
    for (uint32_t i = 0; have && i < nsites; i++) {
        const nvtxcorr_profile_site_t *s =
            atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
        const prof_gpu_replays_t *r = replays_of(s);
        if (r == NULL || r->time.n == 0) continue;
        nvtxcorr_out_str(o, first ? "\n  {\"label\": " : ",\n  {\"label\": ");
        first = 0;
        nvtxcorr_out_json(o, s->name);
        nvtxcorr_out_str(o, ", \"category\": ");
        nvtxcorr_out_json(o, category_of(s));
        json_u64(o, ", \"replays\": ", r->time.n, 1);
        json_u64(o, ", \"gpu_kernels\": ", r->ops, 1);
        json_u64(o, ", \"kernels_per_replay\": ", r->ops / r->time.n, 1);
        json_u64(o, ", \"gpu_ns\": ", r->time.ns, 1);
        json_u64(o, ", \"gpu_replay_min_ns\": ", r->time.min, 1);
        json_u64(o, ", \"gpu_replay_max_ns\": ", r->time.max, 1);
        json_u64(o, ", \"gpu_replay_mean_ns\": ", r->time.ns / r->time.n, 1);
        json_u64(o, ", \"gpu_replay_p50_ns\": ", replay_pct(r, 500), 1);
        json_u64(o, ", \"gpu_replay_p99_ns\": ", replay_pct(r, 990), 1);
        nvtxcorr_out_str(o, ", \"gpu_replay_histogram\": [");
        int f = 1;
        for (unsigned b = 0; b < PROF_BUCKETS; b++)
            if (r->hist[b]) {
                nvtxcorr_out_str(o, f ? "[" : ", [");
                nvtxcorr_out_u64(o, b);
                nvtxcorr_out_str(o, ", ");
                nvtxcorr_out_u64(o, r->hist[b]);
                nvtxcorr_out_str(o, "]");
                f = 0;
            }
        nvtxcorr_out_str(o, "]}");
    }
    nvtxcorr_out_str(o, "]");
}

/* ---- CSV: gpu_ns,gpu_kernels,gpu_min_ns,gpu_max_ns,gpu_mean_ns,gpu_p50_ns,gpu_p99_ns ---- */
static void csv_u64s(prof_out_t *o, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i) nvtxcorr_out_str(o, ",");
        nvtxcorr_out_u64(o, v[i]);
    }
}

void nvtxcorr_prof_gpu_csv_stat(prof_out_t *o, const prof_gpu_stat_t *s)
{
    if (!nvtxcorr_prof_gpu_reported()) {
        nvtxcorr_out_str(o, ",,,,,,");
        return;
    }
    uint64_t v[] = {s->ns, s->n, s->min, s->max, s->n ? s->ns / s->n : 0, s->p50, s->p99};
    csv_u64s(o, v, have_percentiles(s) ? 7 : 5);
    if (!have_percentiles(s)) nvtxcorr_out_str(o, ",,");
}

/* kernel_label rows (CPU columns empty, `name` the kind) and graph rows (launches: replays;
 * the GPU columns per replay, gpu_kernels all of them). */
void nvtxcorr_prof_gpu_csv_sections(prof_out_t *o, uint32_t nsites)
{
    if (!nvtxcorr_prof_gpu_reported()) return;
    uint32_t n = kernel_labels(nsites);
    for (uint32_t i = 0; i < n; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        nvtxcorr_out_str(o, "kernel_label,");
        nvtxcorr_out_csv(o, l->text);
        nvtxcorr_out_str(o, ",");
        nvtxcorr_out_csv(o, l->category);
        nvtxcorr_out_str(o, ",");
        nvtxcorr_out_str(o, kind_of(l->text));
        nvtxcorr_out_str(o, ",,,,,,,,,,,,");
        prof_gpu_stat_t st; /* again, for its histogram (a scratch shared by all labels) */
        nvtxcorr_prof_gpu_label_stat(l, nsites, 1, &st);
        nvtxcorr_prof_gpu_csv_stat(o, &st);
        nvtxcorr_out_str(o, "\n");
    }
    for (uint32_t i = 0; i < nsites; i++) {
        const nvtxcorr_profile_site_t *s =
            atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
        const prof_gpu_replays_t *r = replays_of(s);
        if (r == NULL || r->time.n == 0) continue;
        nvtxcorr_out_str(o, "graph,");
        nvtxcorr_out_csv(o, s->name);
        nvtxcorr_out_str(o, ",");
        nvtxcorr_out_csv(o, category_of(s));
        nvtxcorr_out_str(o, ",,,");
        nvtxcorr_out_u64(o, r->time.n);
        nvtxcorr_out_str(o, ",,,,,,,,,,");
        uint64_t v[] = {r->time.ns,
                        r->ops,
                        r->time.min,
                        r->time.max,
                        r->time.ns / r->time.n,
                        replay_pct(r, 500),
                        replay_pct(r, 990)};
        csv_u64s(o, v, 7);
        nvtxcorr_out_str(o, "\n");
    }
}

/* ---- text ---- */
static void cell(prof_out_t *o, uint64_t v, int time, size_t width)
{
    char buf[32];
    if (time)
        nvtxcorr_prof_fmt_time(buf, v);
    else
        buf[nvtxcorr_fmt_u64(buf, v)] = 0;
    nvtxcorr_out_str(o, " ");
    nvtxcorr_prof_pad(o, buf, width, 1);
}

static prof_cols_t cols; /* both GPU tables share one layout */

static void text_row(prof_out_t *o, const char *label, const char *category,
                     const prof_gpu_stat_t *s, uint64_t whole)
{
    nvtxcorr_prof_pad(o, label, cols.first, 0);
    nvtxcorr_out_str(o, " ");
    nvtxcorr_prof_pad(o, category ? category : "-", cols.second, 0);
    cell(o, s->n, 0, 9);
    char share[16];
    uint64_t tenths = whole ? (s->ns * 1000 + whole / 2) / whole : 0;
    size_t k = nvtxcorr_fmt_u64(share, tenths / 10);
    share[k++] = '.';
    k += nvtxcorr_fmt_u64(share + k, tenths % 10);
    share[k++] = '%';
    share[k] = 0;
    nvtxcorr_out_str(o, " ");
    nvtxcorr_prof_pad(o, share, 6, 1);
    cell(o, s->ns, 1, 9);
    cell(o, s->n ? s->ns / s->n : 0, 1, 8);
    cell(o, s->min, 1, 8);
    cell(o, s->max, 1, 8);
    nvtxcorr_out_str(o, "\n");
}

static void header(prof_out_t *o)
{
    nvtxcorr_prof_pad(o, "label", cols.first, 0);
    nvtxcorr_out_str(o, " ");
    nvtxcorr_prof_pad(o, "category", cols.second, 0);
    nvtxcorr_out_str(o, "   kernels  share     total     mean      min      max\n");
}

/* The layout of the two GPU tables: every label either shows, and the uncorrelated row. */
static void fit_gpu_tables(uint32_t nsites)
{
    uint32_t nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    memset(&cols, 0, sizeof cols);
    nvtxcorr_prof_cols_need(&cols, "label", "category");
    if (nvtxcorr_prof_gpu.uncorrelated)
        nvtxcorr_prof_cols_need(&cols, "[not from a wrapped launch]", NULL);
    for (uint32_t i = 0; i < nlabels; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_acquire);
        prof_gpu_stat_t a, b;
        nvtxcorr_prof_gpu_label_stat(l, nsites, 0, &a);
        nvtxcorr_prof_gpu_label_stat(l, nsites, 1, &b);
        if (a.n || b.n) nvtxcorr_prof_cols_need(&cols, l->text, l->category);
    }
    nvtxcorr_prof_cols_fit(&cols, 54, 1); /* " kernels share total mean min max" */
}

void nvtxcorr_prof_gpu_text(prof_out_t *o, uint32_t nsites)
{
    if (!nvtxcorr_prof_gpu_reported()) return;
    nvtxcorr_prof_gpu_note_failures();
    const prof_gpu_t *g = &nvtxcorr_prof_gpu;
    char t[32];
    nvtxcorr_prof_fmt_time(t, g->ns);
    nvtxcorr_out_str(o, "\nGPU time: ");
    nvtxcorr_out_str(o, t);
    nvtxcorr_out_str(o, " in ");
    nvtxcorr_out_u64(o, g->ops);
    nvtxcorr_out_str(o, " kernels; ");
    nvtxcorr_out_u64(o, g->dropped);
    nvtxcorr_out_str(o, " records dropped by CUPTI");
    if (nvtxcorr_prof_gpu_note[0]) {
        nvtxcorr_out_str(o, "\n(");
        nvtxcorr_out_str(o, nvtxcorr_prof_gpu_note);
        nvtxcorr_out_str(o, ")");
    }
    fit_gpu_tables(nsites);
    nvtxcorr_out_str(o, "\nby launch label (a graph launch's label gets all its kernels)\n");
    header(o);
    uint32_t nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    for (uint32_t i = 0; i < nlabels; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_acquire);
        nvtxcorr_prof_gpu_label_stat(l, nsites, 0, &label_gpu[i]);
    }
    /* ordered by GPU time, as the by-kernel table below */
    uint32_t n = 0;
    for (uint32_t i = 0; i < nlabels; i++)
        if (label_gpu[i].n) order[n++] = i;
    nvtxcorr_prof_sort(order, n, before);
    for (uint32_t i = 0; i < n; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        text_row(o, l->text, l->category, &label_gpu[order[i]], g->ns);
    }
    if (g->uncorrelated) {
        prof_gpu_stat_t u = {.n = g->uncorrelated, .ns = g->uncorrelated_ns};
        text_row(o, "[not from a wrapped launch]", NULL, &u, g->ns);
    }
    nvtxcorr_out_str(o, "by kernel label (every kernel that ran, graph nodes included)\n");
    header(o);
    n = kernel_labels(nsites);
    for (uint32_t i = 0; i < n; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        text_row(o, l->text, l->category, &label_gpu[order[i]], g->ns);
    }
    int first = 1;
    for (uint32_t i = 0; i < nsites; i++) {
        const nvtxcorr_profile_site_t *s =
            atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
        const prof_gpu_replays_t *r = replays_of(s);
        if (r == NULL || r->time.n == 0) continue;
        prof_cols_t graph_cols = {0};
        nvtxcorr_prof_cols_fit(&graph_cols, 61, 0); /* " replays kernels/replay mean p50 p99" */
        if (first) {
            nvtxcorr_prof_pad(o, "graph", graph_cols.first, 0);
            nvtxcorr_out_str(o, "  replays  kernels/replay  per replay: mean      p50      p99\n");
        }
        first = 0;
        nvtxcorr_prof_pad(o, s->name, graph_cols.first, 0);
        cell(o, r->time.n, 0, 8);
        cell(o, r->ops / r->time.n, 0, 15);
        cell(o, r->time.ns / r->time.n, 1, 17);
        cell(o, replay_pct(r, 500), 1, 8);
        cell(o, replay_pct(r, 990), 1, 8);
        nvtxcorr_out_str(o, "\n");
    }
}
