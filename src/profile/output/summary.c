/* The per-process summary, written once at exit (exit.c): per label and per kernel, the
 * launch counts and the CPU time spent inside launch calls. Format by the path's extension:
 * .json (the stable interface, docs/profile.md), .csv, .html (the JSON in the report's page),
 * anything else a text table sorted by
 * time. The name is claimed with O_CREAT|O_EXCL|O_NOFOLLOW (an existing file or a symlink is
 * never overwritten or followed), the summary written to a temporary name beside it and
 * renamed over the claim when whole. When the file cannot be created, or a write fails (a
 * full disk, the file-size limit, a descriptor the program closed), the part is removed and
 * the text table goes to stderr instead, after one line saying why, so nothing is lost.
 *
 * This file gathers the numbers into rows (summary_writer.h) and hands them to the format's writer
 * (summary_json.c, summary_csv.c, summary_text.c), each behind the same small ops struct.
 *
 * Everything here may run in a signal handler: records are read with relaxed loads while
 * other threads may still be launching (a count read a moment early is fine), nothing is
 * allocated (the tables below are static) and no lock is taken. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "context/context.h"
#include "core/state.h"
#include "profile/base/clock.h"
#include "profile/base/histogram.h"
#include "profile/base/out.h"
#include "profile/base/process.h"
#include "profile/counting/context_stats.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/counting/windows.h"
#include "profile/gpu/cupti.h"
#include "profile/gpu/gpu.h"
#include "summary.h"
typedef struct agg {
    uint64_t launches, graph_launches, errors, capture, total, min, max, p50, p99;
    uint64_t hist[PROF_BUCKETS];
} agg_t;

typedef struct summary {
    uint64_t launches, graph_launches, errors, capture, total, min, max, p50, p99;
} summary_t;

static summary_t label_sum[PROF_MAX_SITES], site_sum[PROF_MAX_SITES];
/* The labels and the kernel sites to list, each in its order: two arrays, since a full site
 * table holds more labels and kernel sites together than one array of PROF_MAX_SITES. */
static uint32_t order[PROF_MAX_SITES], kernels[PROF_MAX_SITES];
static agg_t scratch;
static prof_out_t out;

static uint64_t percentile(const agg_t *a, uint64_t per_mille)
{
    return nvtxcorr_prof_percentile(a->hist, a->launches, a->min, a->max, per_mille);
}

/* A site's own GPU operations (the by-kernel view); none when there is no GPU time. */
static const prof_gpu_stat_t *site_gpu(uint32_t id)
{
    static prof_gpu_stat_t one; /* valid until the next call */
    nvtxcorr_prof_gpu_site_stat(id, &one);
    return &one;
}

void nvtxcorr_prof_site_read(const nvtxcorr_profile_site_t *s, prof_snap_t *o)
{
    memset(o, 0, sizeof *o);
    if (s == NULL) return;
    unsigned gen = atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed);
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_acquire); t;
         t = t->next) {
        if (atomic_load_explicit(&t->gen, memory_order_acquire) != gen) continue; /* a parent's */
        prof_record_t *c =
            atomic_load_explicit(&t->chunks[s->id / PROF_CHUNK], memory_order_acquire);
        if (c == NULL) continue;
        prof_record_t *r = &c[s->id % PROF_CHUNK];
        uint64_t n = atomic_load_explicit(&r->launches, memory_order_relaxed);
        o->capture += atomic_load_explicit(&r->capture, memory_order_relaxed);
        o->errors += atomic_load_explicit(&r->errors, memory_order_relaxed); /* capture's too */
        if (n == 0) continue;
        uint64_t mn = atomic_load_explicit(&r->min_ns, memory_order_relaxed);
        uint64_t mx = atomic_load_explicit(&r->max_ns, memory_order_relaxed);
        if (o->launches == 0 || mn < o->min) o->min = mn;
        if (mx > o->max) o->max = mx;
        o->launches += n;
        o->total += atomic_load_explicit(&r->total_ns, memory_order_relaxed);
        for (unsigned b = 0; b < PROF_BUCKETS; b++)
            o->hist[b] += atomic_load_explicit(&r->hist[b], memory_order_relaxed);
    }
    if (atomic_load_explicit(&s->spill_gen, memory_order_acquire) == gen) /* counting/stats.h */
        for (unsigned b = 0; b < PROF_BUCKETS; b++)
            o->hist[b] += atomic_load_explicit(&s->spill[b], memory_order_relaxed);
}

/* A window's part of a site: this cut minus the previous one. Minimum and maximum are not
 * differences: they are the edges of the window's lowest and highest histogram buckets, kept
 * within the whole run's extremes (exact below 8 ns, within a quarter octave above). */
static void window_part(uint32_t id, prof_snap_t *o)
{
    const prof_snap_t *c = &nvtxcorr_prof_snap_cur[id];
    const prof_snap_t *b = nvtxcorr_prof_snap_base ? &nvtxcorr_prof_snap_base[id] : NULL;
    *o = *c;
    if (b) {
        o->errors -= b->errors, o->capture -= b->capture, o->total -= b->total;
        for (unsigned k = 0; k < PROF_BUCKETS; k++)
            o->hist[k] -= b->hist[k];
    }
    /* A launch is in the window whose cut first saw it in the histogram, its record's last
     * write: a cut made while it was being recorded may have seen its count already (the
     * exit summary reads records once the threads are done; a window's cut does not). */
    int lo = -1, hi = -1;
    o->launches = 0;
    for (unsigned k = 0; k < PROF_BUCKETS; k++)
        if (o->hist[k] != 0) {
            o->launches += o->hist[k];
            if (lo < 0) lo = (int)k;
            hi = (int)k;
        }
    if (lo < 0 || b == NULL) return;
    uint64_t low = nvtxcorr_prof_bucket_low((unsigned)lo);
    uint64_t high = hi + 1 < PROF_BUCKETS ? nvtxcorr_prof_bucket_low((unsigned)hi + 1) - 1 : c->max;
    o->min = low > c->min ? low : c->min;
    o->max = high < c->max ? high : c->max;
}

static void add_site(agg_t *a, const nvtxcorr_profile_site_t *s)
{
    static prof_snap_t r;
    if (nvtxcorr_prof_snap_cur)
        window_part(s->id, &r);
    else
        nvtxcorr_prof_site_read(s, &r);
    a->capture += r.capture;
    a->errors += r.errors;
    if (r.launches) {
        if (a->launches == 0 || r.min < a->min) a->min = r.min;
        if (r.max > a->max) a->max = r.max;
        a->launches += r.launches;
        if (s->graph) a->graph_launches += r.launches;
        a->total += r.total;
    }
    for (unsigned b = 0; b < PROF_BUCKETS; b++)
        a->hist[b] += r.hist[b];
}

static void finish_agg(agg_t *a, summary_t *s)
{
    a->p50 = percentile(a, 500);
    a->p99 = percentile(a, 990);
    if (s)
        *s = (summary_t){
            a->launches, a->graph_launches, a->errors, a->capture, a->total, a->min, a->max, a->p50,
            a->p99};
}

static void aggregate_label(const prof_label_t *l, uint32_t nsites, agg_t *a)
{
    memset(a, 0, sizeof *a);
    for (const nvtxcorr_profile_site_t *s = atomic_load_explicit(&l->first, memory_order_acquire);
         s; s = atomic_load_explicit(&s->next_in_label, memory_order_relaxed))
        if (s->id < nsites) add_site(a, s);
    finish_agg(a, NULL);
}

static void aggregate_site(const nvtxcorr_profile_site_t *s, agg_t *a)
{
    memset(a, 0, sizeof *a);
    add_site(a, s);
    finish_agg(a, NULL);
}

/* ---- ordering: by CPU time, then by name ---- */
static const summary_t *sort_sums;
static const char *sort_name(uint32_t i, int labels)
{
    if (labels) return atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_relaxed)->text;
    return atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_relaxed)->name;
}
static int sort_labels;
static int before(uint32_t a, uint32_t b) /* a sorts before b */
{
    if (sort_sums[a].total != sort_sums[b].total) return sort_sums[a].total > sort_sums[b].total;
    if (sort_sums[a].launches != sort_sums[b].launches)
        return sort_sums[a].launches > sort_sums[b].launches;
    int d = strcmp(sort_name(a, sort_labels), sort_name(b, sort_labels));
    return d != 0 ? d < 0 : a < b;
}
static void sort(uint32_t *v, size_t n, const summary_t *sums, int labels)
{
    sort_sums = sums, sort_labels = labels;
    nvtxcorr_prof_sort(v, n, before);
}

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

/* Labels with GPU operations in one view, into gpu_order, most time first. */
static prof_gpu_stat_t label_gpu[PROF_MAX_SITES];
static uint32_t gpu_order[PROF_MAX_SITES];
/* Equal times by label and category, as a summary's JSON can order them again (nvtxcorr-tool
 * render), then by creation. */
static int before_gpu(uint32_t a, uint32_t b)
{
    if (label_gpu[a].ns != label_gpu[b].ns) return label_gpu[a].ns > label_gpu[b].ns;
    const prof_label_t *x = atomic_load_explicit(&nvtxcorr_prof_labels[a], memory_order_relaxed);
    const prof_label_t *y = atomic_load_explicit(&nvtxcorr_prof_labels[b], memory_order_relaxed);
    int d = strcmp(x->text, y->text);
    if (d == 0 && x->category != y->category)
        d = !x->category ? -1 : !y->category ? 1 : strcmp(x->category, y->category);
    return d != 0 ? d < 0 : a < b;
}
static uint32_t gpu_labels(uint32_t nsites, int by_kernel)
{
    uint32_t n = 0,
             nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    for (uint32_t i = 0; i < nlabels; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_acquire);
        nvtxcorr_prof_gpu_label_stat(l, nsites, by_kernel, &label_gpu[i]);
        if (label_gpu[i].n) gpu_order[n++] = i;
    }
    nvtxcorr_prof_sort(gpu_order, n, before_gpu);
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
    return s->graph && s->label_id != PROF_NO_LABEL ? nvtxcorr_prof_gpu_view()->replays[s->id]
                                                    : NULL;
}

static const char *label_category(uint32_t label_id)
{
    return label_id == PROF_NO_LABEL
               ? NULL
               : atomic_load_explicit(&nvtxcorr_prof_labels[label_id], memory_order_relaxed)
                     ->category;
}
static const char *label_text(uint32_t label_id)
{
    return label_id == PROF_NO_LABEL
               ? NULL
               : atomic_load_explicit(&nvtxcorr_prof_labels[label_id], memory_order_relaxed)->text;
}

/* Launches that passed through while nvtxcorr was starting (core/state.h). */
static uint64_t uncounted_at_start(void)
{
    return atomic_load_explicit(&nvtxcorr_launches_while_starting, memory_order_relaxed);
}

/* ---- rows ---- */
#define BIT(f) (1u << (f))
#define CPU_FIELDS                                                                                 \
    (BIT(PROF_F_LAUNCHES) | BIT(PROF_F_GRAPH_LAUNCHES) | BIT(PROF_F_ERRORS) |                      \
     BIT(PROF_F_CAPTURE) | BIT(PROF_F_CPU_NS) | BIT(PROF_F_CPU_MIN) | BIT(PROF_F_CPU_MAX) |        \
     BIT(PROF_F_CPU_MEAN) | BIT(PROF_F_CPU_P50) | BIT(PROF_F_CPU_P99) | BIT(PROF_F_CPU_HIST))

static void fill_cpu(prof_row_t *r, const agg_t *a)
{
    uint64_t *v = r->v;
    v[PROF_F_LAUNCHES] = a->launches;
    v[PROF_F_GRAPH_LAUNCHES] = a->graph_launches;
    v[PROF_F_ERRORS] = a->errors;
    v[PROF_F_CAPTURE] = a->capture;
    v[PROF_F_CPU_NS] = a->total;
    v[PROF_F_CPU_MIN] = a->launches ? a->min : 0;
    v[PROF_F_CPU_MAX] = a->max;
    v[PROF_F_CPU_MEAN] = a->launches ? a->total / a->launches : 0;
    v[PROF_F_CPU_P50] = a->p50;
    v[PROF_F_CPU_P99] = a->p99;
    r->hist[PROF_F_CPU_HIST] = a->hist;
    r->have |= CPU_FIELDS;
}

/* Without GPU time every GPU field is null; percentiles and the histogram exist for a row
 * without operations, or one whose histogram is whole. */
static void fill_gpu(prof_row_t *r, const prof_gpu_stat_t *s)
{
    if (!nvtxcorr_prof_gpu_reported()) return;
    uint64_t *v = r->v;
    v[PROF_F_GPU_NS] = s->ns;
    v[PROF_F_GPU_KERNELS] = s->n;
    v[PROF_F_GPU_MIN] = s->min;
    v[PROF_F_GPU_MAX] = s->max;
    v[PROF_F_GPU_MEAN] = s->n ? s->ns / s->n : 0;
    r->have |= BIT(PROF_F_GPU_NS) | BIT(PROF_F_GPU_KERNELS) | BIT(PROF_F_GPU_MIN) |
               BIT(PROF_F_GPU_MAX) | BIT(PROF_F_GPU_MEAN);
    if (s->n != 0 && s->hist == NULL) return;
    v[PROF_F_GPU_P50] = s->n ? s->p50 : 0;
    v[PROF_F_GPU_P99] = s->n ? s->p99 : 0;
    r->hist[PROF_F_GPU_HIST] = s->n ? s->hist : NULL;
    r->have |= BIT(PROF_F_GPU_P50) | BIT(PROF_F_GPU_P99) | BIT(PROF_F_GPU_HIST);
}

static void fill_graph(prof_row_t *r, const prof_gpu_replays_t *g)
{
    uint64_t *v = r->v, n = g->time.n;
    v[PROF_G_REPLAYS] = n;
    v[PROF_G_KERNELS] = g->ops;
    v[PROF_G_PER_REPLAY] = g->ops / n;
    v[PROF_G_NS] = g->time.ns;
    v[PROF_G_MIN] = g->time.min;
    v[PROF_G_MAX] = g->time.max;
    v[PROF_G_MEAN] = g->time.ns / n;
    v[PROF_G_P50] = nvtxcorr_prof_percentile(g->hist, n, g->time.min, g->time.max, 500);
    v[PROF_G_P99] = nvtxcorr_prof_percentile(g->hist, n, g->time.min, g->time.max, 990);
    r->hist[PROF_G_HIST] = g->hist;
    r->have = (1u << PROF_GRAPH_N) - 1;
}

static void row_texts(prof_row_t *r, const char *label, const char *category, const char *name,
                      const char *function)
{
    memset(r, 0, sizeof *r);
    r->text[PROF_T_LABEL] = label, r->text[PROF_T_CATEGORY] = category;
    r->text[PROF_T_NAME] = name, r->text[PROF_T_FUNCTION] = function;
}

/* ---- the walk: every section's records, each made just before the writer sees it (a
 * label's GPU histogram is a scratch that the next label's reuses) ---- */
static prof_row_t row;

static void deliver(const prof_writer_t *w, prof_out_t *o, const prof_summary_t *sum, int sec,
                    int measuring)
{
    if (measuring)
        w->measure(sum, sec, &row);
    else
        w->record(o, sum, sec, &row);
}

static void walk_section(const prof_writer_t *w, prof_out_t *o, const prof_summary_t *sum, int sec,
                         uint32_t nl, uint32_t nk, uint32_t nsites, int measuring)
{
    prof_gpu_stat_t gpu;
    if (sec == PROF_SEC_LABELS) {
        for (uint32_t i = 0; i < nl; i++) {
            const prof_label_t *l =
                atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
            aggregate_label(l, nsites, &scratch);
            row_texts(&row, l->text, l->category, NULL, NULL);
            fill_cpu(&row, &scratch);
            nvtxcorr_prof_gpu_label_stat(l, nsites, 0, &gpu);
            fill_gpu(&row, &gpu);
            deliver(w, o, sum, sec, measuring);
        }
    } else if (sec == PROF_SEC_KERNELS) {
        for (uint32_t i = 0; i < nk; i++) {
            const nvtxcorr_profile_site_t *s =
                atomic_load_explicit(&nvtxcorr_prof_sites[kernels[i]], memory_order_relaxed);
            aggregate_site(s, &scratch);
            row_texts(&row, label_text(s->label_id), label_category(s->label_id), s->name,
                      s->function);
            fill_cpu(&row, &scratch);
            fill_gpu(&row, site_gpu(s->id));
            deliver(w, o, sum, sec, measuring);
        }
    } else if (sum->gpu && (sec == PROF_SEC_LAUNCH_GPU || sec == PROF_SEC_KERNEL_LABELS)) {
        int by_kernel = sec == PROF_SEC_KERNEL_LABELS;
        uint32_t n = gpu_labels(nsites, by_kernel);
        for (uint32_t i = 0; i < n; i++) {
            const prof_label_t *l =
                atomic_load_explicit(&nvtxcorr_prof_labels[gpu_order[i]], memory_order_relaxed);
            row_texts(&row, l->text, l->category, by_kernel ? kind_of(l->text) : NULL, NULL);
            nvtxcorr_prof_gpu_label_stat(l, nsites, by_kernel, &gpu); /* again, for its histogram */
            fill_gpu(&row, &gpu);
            deliver(w, o, sum, sec, measuring);
        }
    } else if (sum->gpu && sec == PROF_SEC_GRAPHS) {
        for (uint32_t i = 0; i < nsites; i++) {
            const nvtxcorr_profile_site_t *s =
                atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
            const prof_gpu_replays_t *r = replays_of(s);
            if (r == NULL || r->time.n == 0) continue;
            row_texts(&row, s->name, label_category(s->label_id), NULL, NULL);
            fill_graph(&row, r);
            deliver(w, o, sum, sec, measuring);
        }
    }
}

static void write_summary(const prof_writer_t *w, prof_out_t *o, const prof_summary_t *sum,
                          uint32_t nl, uint32_t nk, uint32_t nsites)
{
    w->begin(o, sum);
    for (int sec = 0; w->measure && sec < PROF_SECTION_N; sec++)
        walk_section(w, o, sum, sec, nl, nk, nsites, 1);
    for (int sec = 0; sec < PROF_SECTION_N; sec++) {
        w->section(o, sum, sec, 0);
        walk_section(w, o, sum, sec, nl, nk, nsites, 0);
        w->section(o, sum, sec, 1);
    }
    if (w->contexts) w->contexts(o, sum);
    w->end(o, sum);
}

static const prof_writer_t *format_of(const char *path)
{
    size_t n = strlen(path);
    if (n >= 5 && !strcmp(path + n - 5, ".json")) return &nvtxcorr_prof_json_writer;
    if (n >= 4 && !strcmp(path + n - 4, ".csv")) return &nvtxcorr_prof_csv_writer;
    if (n >= 5 && !strcmp(path + n - 5, ".html")) return &nvtxcorr_prof_html_writer;
    if (n >= 7 && !strcmp(path + n - 7, ".folded")) return &nvtxcorr_prof_folded_writer;
    return &nvtxcorr_prof_text_writer;
}

void nvtxcorr_prof_summary_write(void)
{
    nvtxcorr_prof_summary_write_to(nvtxcorr_prof_process.profile_path);
}

void nvtxcorr_prof_summary_write_to(const char *path)
{
    const prof_window_t *win = nvtxcorr_prof_window_now;
    uint64_t end_ns = nvtxcorr_prof_realtime_ns();
    uint32_t nsites = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_acquire);
    uint32_t nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    static prof_summary_t sum;
    memset(&sum, 0, sizeof sum);
    uint64_t *tot = sum.total;
    sum.end_ns = end_ns;
    sum.window = win;
    sum.pid = (uint64_t)nvtxcorr_prof_process.pid;
    tot[PROF_TOT_OWN_NS] = atomic_load_explicit(&nvtxcorr_prof_own_ns, memory_order_relaxed);
    tot[PROF_TOT_UNCOUNTED] = uncounted_at_start();
    if (win) {
        sum.end_ns = win->end_ns;
        tot[PROF_TOT_OWN_NS] -= nvtxcorr_prof_window_own_base;
        tot[PROF_TOT_UNCOUNTED] = 0; /* before any window */
    }
    /* Labels (`order`) and kernels (`kernels`) that saw anything. */
    uint32_t nl = 0, nk = 0;
    static uint8_t listed[PROF_MAX_SITES];
    for (uint32_t i = 0; i < nlabels; i++) {
        prof_label_t *l = atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_acquire);
        aggregate_label(l, nsites, &scratch);
        finish_agg(&scratch, &label_sum[i]);
        listed[i] = scratch.launches || scratch.capture;
        if (listed[i]) order[nl++] = i;
    }
    static uint64_t site_launches[PROF_MAX_SITES], site_ns[PROF_MAX_SITES];
    for (uint32_t i = 0; i < nsites; i++) {
        nvtxcorr_profile_site_t *s =
            atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
        aggregate_site(s, &scratch);
        finish_agg(&scratch, &site_sum[i]);
        site_launches[i] = scratch.launches, site_ns[i] = scratch.total;
        tot[PROF_TOT_LAUNCHES] += scratch.launches;
        tot[PROF_TOT_GRAPH_LAUNCHES] += scratch.graph_launches;
        tot[PROF_TOT_ERRORS] += scratch.errors;
        tot[PROF_TOT_CAPTURE] += scratch.capture;
        tot[PROF_TOT_CPU_NS] += scratch.total;
        if (s->label_id == PROF_NO_LABEL) tot[PROF_TOT_UNLABELLED] += scratch.launches;
        if (i == PROF_OTHER_SITE) tot[PROF_TOT_OTHER] = scratch.launches;
        if (i == PROF_OTHER_GRAPHS_SITE) tot[PROF_TOT_OTHER_GRAPHS] = scratch.launches;
        if (!s->graph && (scratch.launches || scratch.capture ||
                          ((!win || nvtxcorr_prof_gpu_out) && site_gpu(i)->n)))
            kernels[nk++] = i;
    }
    /* A window's GPU time: its set, once settled (gpu.c). */
    sum.gpu = nvtxcorr_prof_gpu_reported() && (!win || nvtxcorr_prof_gpu_out != NULL);
    /* A label with GPU time by launch and no launch of its own: [not hooked]. */
    for (uint32_t i = 0; sum.gpu && i < nlabels; i++) {
        prof_label_t *l = atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_acquire);
        prof_gpu_stat_t g;
        if (listed[i]) continue;
        nvtxcorr_prof_gpu_label_stat(l, nsites, 0, &g);
        if (g.n) order[nl++] = i;
    }
    if (sum.gpu) {
        const prof_gpu_t *g = nvtxcorr_prof_gpu_view();
        nvtxcorr_prof_gpu_note_failures(); /* before the note is written */
        sum.gpu_note = nvtxcorr_prof_gpu_note();
        tot[PROF_TOT_GPU_NS] = g->ns;
        tot[PROF_TOT_GPU_KERNELS] = g->ops;
        tot[PROF_TOT_GPU_DROPPED] = g->dropped;
        tot[PROF_TOT_GPU_INCOMPLETE] = g->incomplete;
        tot[PROF_TOT_GPU_UNCORRELATED] = g->uncorrelated;
        tot[PROF_TOT_GPU_UNCORRELATED_NS] = g->uncorrelated_ns;
        tot[PROF_TOT_GPU_NOT_HOOKED] = g->not_hooked;
        tot[PROF_TOT_GPU_NOT_HOOKED_NS] = g->not_hooked_ns;
        tot[PROF_TOT_GPU_UNLABELLED_NS] = unlabelled_ns(nsites, g->by_kernel);
        tot[PROF_TOT_GPU_UNLABELLED_LAUNCH_NS] = unlabelled_ns(nsites, g->by_launch);
    }
    const nvtxcorr_context_counts_t *cc = &nvtxcorr_context_counts;
    tot[PROF_TOT_CTX_TRUNCATED] = atomic_load_explicit(&cc->truncated, memory_order_relaxed);
    tot[PROF_TOT_CTX_OTHER] = atomic_load_explicit(&cc->other, memory_order_relaxed);
    tot[PROF_TOT_CTX_UNBALANCED] = atomic_load_explicit(&cc->unbalanced, memory_order_relaxed);
    tot[PROF_TOT_CTX_LONG] = atomic_load_explicit(&cc->long_messages, memory_order_relaxed);
    tot[PROF_TOT_CTX_INVALID_UTF8] = atomic_load_explicit(&cc->invalid_utf8, memory_order_relaxed);
    sum.nctx =
        nvtxcorr_prof_ctx_rows(&sum.ctx_rows, &sum.ctx_order, site_launches, site_ns, nsites);
    sum.ctx_view = nvtxcorr_prof_ctx_view(&sum);
    sort(order, nl, label_sum, 1);
    sort(kernels, nk, site_sum, 0);

    /* A summary that is no window (a forked child's, or the whole run's when windows were
     * refused) is window 0 where the path names one (%w). */
    if (win)
        path = nvtxcorr_prof_window_path(path, win->index);
    else if (strstr(path, "%w"))
        path = nvtxcorr_prof_window_path(path, 0);
    const prof_writer_t *writer = format_of(path);
    /* The file comes into being whole or not at all, and never over an existing one: the
     * summary is written to a temporary name of this process's beside it, which is then given
     * the summary's name (publish). A process killed meanwhile leaves the temporary file, never
     * a part of a summary under its name. A failed write (a full disk, the file-size limit, a
     * descriptor the program closed) removes it and prints the table to stderr instead. */
    struct stat st;
    int err = !path[0] ? ENAMETOOLONG : lstat(path, &st) == 0 ? EEXIST : 0;
    static char tmp[sizeof nvtxcorr_prof_process.profile_path + 48];
    int fd = err ? -1 : nvtxcorr_prof_temp_beside(path, tmp, sizeof tmp);
    if (fd < 0 && !err) err = errno;
    if (err) {
        if (path[0]) /* a path too long after expansion was reported at start-up */
            nvtxcorr_prof_say("error", path, ": ", nvtxcorr_prof_strerror(err),
                              err == EEXIST ? "; not overwritten, summary printed to stderr instead"
                                            : "; summary printed to stderr instead",
                              (char *)NULL);
        nvtxcorr_out_open(&out, STDERR_FILENO, 0);
        write_summary(&nvtxcorr_prof_text_writer, &out, &sum, nl, nk, nsites);
        nvtxcorr_out_flush(&out);
        return;
    }
    nvtxcorr_out_open(&out, fd, 1);
    write_summary(writer, &out, &sum, nl, nk, nsites);
    nvtxcorr_out_flush(&out);
    err = out.err;
    if (err != EBADF && close(fd) != 0 && !err) err = errno; /* NFS: a full disk at close */
    if (!err) err = nvtxcorr_prof_publish(tmp, path);
    if (err) {
        unlink(tmp);
        nvtxcorr_prof_say("error", path,
                          err == EEXIST ? ": " : ": write failed: ", nvtxcorr_prof_strerror(err),
                          err == EEXIST ? "; not overwritten, summary printed to stderr instead"
                                        : "; the part written was removed, summary printed to "
                                          "stderr instead",
                          (char *)NULL);
        nvtxcorr_out_open(&out, STDERR_FILENO, 0);
        write_summary(&nvtxcorr_prof_text_writer, &out, &sum, nl, nk, nsites);
        nvtxcorr_out_flush(&out);
    }
}
