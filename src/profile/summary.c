/* The per-process summary, written once at exit (exit.c): per label and per kernel, the
 * launch counts and the CPU time spent inside launch calls. Format by the path's extension:
 * .json (the stable interface, docs/profile.md), .csv, anything else a text table sorted by
 * time. The name is claimed with O_CREAT|O_EXCL|O_NOFOLLOW (an existing file or a symlink is
 * never overwritten or followed), the summary written to a temporary name beside it and
 * renamed over the claim when whole. When the file cannot be created, or a write fails (a
 * full disk, the file-size limit, a descriptor the program closed), the part is removed and
 * the text table goes to stderr instead, after one line saying why, so nothing is lost.
 *
 * Everything here may run in a signal handler: records are read with relaxed loads while
 * other threads may still be launching (a count read a moment early is fine), nothing is
 * allocated (the tables below are static) and no lock is taken. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

typedef struct agg {
    uint64_t launches, graph_launches, errors, capture, total, min, max, p50, p99;
    uint64_t hist[PROF_BUCKETS];
} agg_t;

typedef struct summary {
    uint64_t launches, graph_launches, errors, capture, total, min, max, p50, p99;
} summary_t;

static summary_t label_sum[PROF_MAX_SITES], site_sum[PROF_MAX_SITES];
static uint32_t order[PROF_MAX_SITES];
static agg_t scratch;
static prof_out_t out;
static char cmdline[32768];

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

static void add_site(agg_t *a, const nvtxcorr_profile_site_t *s)
{
    unsigned gen = atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed);
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_acquire); t;
         t = t->next) {
        if (atomic_load_explicit(&t->gen, memory_order_acquire) != gen) continue; /* a parent's */
        prof_record_t *c =
            atomic_load_explicit(&t->chunks[s->id / PROF_CHUNK], memory_order_acquire);
        if (c == NULL) continue;
        prof_record_t *r = &c[s->id % PROF_CHUNK];
        uint64_t n = atomic_load_explicit(&r->launches, memory_order_relaxed);
        a->capture += atomic_load_explicit(&r->capture, memory_order_relaxed);
        a->errors += atomic_load_explicit(&r->errors, memory_order_relaxed); /* capture's too */
        if (n == 0) continue;
        uint64_t mn = atomic_load_explicit(&r->min_ns, memory_order_relaxed);
        uint64_t mx = atomic_load_explicit(&r->max_ns, memory_order_relaxed);
        if (a->launches == 0 || mn < a->min) a->min = mn;
        if (mx > a->max) a->max = mx;
        a->launches += n;
        if (s->graph) a->graph_launches += n;
        a->total += atomic_load_explicit(&r->total_ns, memory_order_relaxed);
        for (unsigned b = 0; b < PROF_BUCKETS; b++)
            a->hist[b] += atomic_load_explicit(&r->hist[b], memory_order_relaxed);
    }
    if (atomic_load_explicit(&s->spill_gen, memory_order_acquire) == gen) /* internal.h */
        for (unsigned b = 0; b < PROF_BUCKETS; b++)
            a->hist[b] += atomic_load_explicit(&s->spill[b], memory_order_relaxed);
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

/* ---- the three formats ---- */
typedef struct totals {
    uint64_t launches, graph_launches, errors, capture, total, skipped;
    uint64_t own;                 /* nvtxcorr's own work inside launch calls, not in `total` */
    uint64_t other, other_graphs; /* launches beyond the site bounds (internal.h) */
} totals_t;

static void json_counters(const agg_t *a, const prof_gpu_stat_t *gpu)
{
    static const char *const keys[] = {
        "\"launches\": ",           ", \"graph_launches\": ", ", \"errors\": ",
        ", \"capture_launches\": ", ", \"cpu_ns\": ",         ", \"cpu_min_ns\": ",
        ", \"cpu_max_ns\": ",       ", \"cpu_mean_ns\": ",    ", \"cpu_p50_ns\": ",
        ", \"cpu_p99_ns\": "};
    uint64_t vals[] = {a->launches, a->graph_launches,
                       a->errors,   a->capture,
                       a->total,    a->launches ? a->min : 0,
                       a->max,      a->launches ? a->total / a->launches : 0,
                       a->p50,      a->p99};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        nvtxcorr_out_str(&out, keys[i]);
        nvtxcorr_out_u64(&out, vals[i]);
    }
    nvtxcorr_out_str(&out, ", ");
    nvtxcorr_prof_gpu_json_stat(&out, gpu);
    nvtxcorr_out_str(&out, ", \"cpu_histogram\": [");
    int first = 1;
    for (unsigned b = 0; b < PROF_BUCKETS; b++)
        if (a->hist[b]) {
            nvtxcorr_out_str(&out, first ? "[" : ", [");
            nvtxcorr_out_u64(&out, b);
            nvtxcorr_out_str(&out, ", ");
            nvtxcorr_out_u64(&out, a->hist[b]);
            nvtxcorr_out_str(&out, "]");
            first = 0;
        }
    nvtxcorr_out_str(&out, "]}");
}

static void json_command(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof cmdline - 1) : -1;
    if (fd >= 0) close(fd);
    nvtxcorr_out_str(&out, "[");
    for (ssize_t i = 0; n > 0 && i < n;) {
        cmdline[n] = 0;
        if (i) nvtxcorr_out_str(&out, ", ");
        nvtxcorr_out_json(&out, cmdline + i);
        i += (ssize_t)strlen(cmdline + i) + 1;
    }
    nvtxcorr_out_str(&out, "]");
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

/* Launches that passed through while nvtxcorr was starting (nvtxcorr.h). */
static uint64_t uncounted_at_start(void)
{
    return atomic_load_explicit(&nvtxcorr_launches_while_starting, memory_order_relaxed);
}

static void write_json(uint32_t nl, uint32_t nlabels, uint32_t nk, uint32_t nsites,
                       const totals_t *tot, uint64_t end_ns)
{
    static struct utsname u;
    nvtxcorr_out_str(&out, "{\"nvtxcorr_profile\": 1, \"pid\": ");
    nvtxcorr_out_u64(&out, (uint64_t)nvtxcorr_prof_process.pid);
    nvtxcorr_out_str(&out, ", \"host\": ");
    nvtxcorr_out_json(&out, uname(&u) == 0 ? u.nodename : NULL);
    nvtxcorr_out_str(&out, ",\n \"command\": ");
    json_command();
    nvtxcorr_out_str(&out, ",\n \"start_ns\": ");
    nvtxcorr_out_u64(&out, nvtxcorr_prof_process.start_ns);
    nvtxcorr_out_str(&out, ", \"end_ns\": ");
    nvtxcorr_out_u64(&out, end_ns);
    nvtxcorr_out_str(&out, ", \"clock\": ");
    nvtxcorr_out_json(&out, nvtxcorr_prof_clock.tsc ? "tsc" : "monotonic");
    nvtxcorr_out_str(&out, ", ");
    nvtxcorr_prof_gpu_json_head(&out);
    nvtxcorr_out_str(&out, ",\n \"histogram\": {\"exact_below_ns\": ");
    nvtxcorr_out_u64(&out, PROF_EXACT);
    nvtxcorr_out_str(&out, ", \"sub_buckets\": ");
    nvtxcorr_out_u64(&out, PROF_SUB);
    nvtxcorr_out_str(&out, ", \"buckets\": ");
    nvtxcorr_out_u64(&out, PROF_BUCKETS);
    nvtxcorr_out_str(&out, "},\n \"totals\": {\"launches\": ");
    nvtxcorr_out_u64(&out, tot->launches);
    nvtxcorr_out_str(&out, ", \"graph_launches\": ");
    nvtxcorr_out_u64(&out, tot->graph_launches);
    nvtxcorr_out_str(&out, ", \"errors\": ");
    nvtxcorr_out_u64(&out, tot->errors);
    nvtxcorr_out_str(&out, ", \"capture_launches\": ");
    nvtxcorr_out_u64(&out, tot->capture);
    nvtxcorr_out_str(&out, ", \"cpu_ns\": ");
    nvtxcorr_out_u64(&out, tot->total);
    nvtxcorr_out_str(&out, ", \"cpu_own_ns\": ");
    nvtxcorr_out_u64(&out, tot->own);
    nvtxcorr_out_str(&out, ", \"unlabelled_launches\": ");
    nvtxcorr_out_u64(&out, tot->skipped);
    nvtxcorr_out_str(&out, ", \"other_launches\": ");
    nvtxcorr_out_u64(&out, tot->other);
    nvtxcorr_out_str(&out, ", \"other_graph_launches\": ");
    nvtxcorr_out_u64(&out, tot->other_graphs);
    nvtxcorr_out_str(&out, ", \"uncounted_at_start\": ");
    nvtxcorr_out_u64(&out, uncounted_at_start());
    nvtxcorr_prof_gpu_json_totals(&out);
    nvtxcorr_out_str(&out, "},\n \"labels\": [");
    for (uint32_t i = 0; i < nl; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        aggregate_label(l, nsites, &scratch);
        nvtxcorr_out_str(&out, i ? ",\n  {\"label\": " : "\n  {\"label\": ");
        nvtxcorr_out_json(&out, l->text);
        nvtxcorr_out_str(&out, ", \"category\": ");
        nvtxcorr_out_json(&out, l->category);
        nvtxcorr_out_str(&out, ", ");
        prof_gpu_stat_t gpu;
        nvtxcorr_prof_gpu_label_stat(l, nsites, 0, &gpu);
        json_counters(&scratch, &gpu);
    }
    (void)nlabels;
    nvtxcorr_out_str(&out, "],\n \"kernels\": [");
    for (uint32_t i = 0; i < nk; i++) {
        const nvtxcorr_profile_site_t *s = atomic_load_explicit(
            &nvtxcorr_prof_sites[order[PROF_MAX_SITES - 1 - i]], memory_order_relaxed);
        aggregate_site(s, &scratch);
        nvtxcorr_out_str(&out, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        nvtxcorr_out_json(&out, s->name);
        nvtxcorr_out_str(&out, ", \"function\": ");
        nvtxcorr_out_json(&out, s->function);
        nvtxcorr_out_str(&out, ", \"label\": ");
        nvtxcorr_out_json(&out, label_text(s->label_id));
        nvtxcorr_out_str(&out, ", \"category\": ");
        nvtxcorr_out_json(&out, label_category(s->label_id));
        nvtxcorr_out_str(&out, ", ");
        json_counters(&scratch, site_gpu(s->id));
    }
    nvtxcorr_out_str(&out, "]");
    nvtxcorr_prof_gpu_json_sections(&out, nsites);
    nvtxcorr_out_str(&out, "}\n");
}

static void csv_row(const char *section, const char *label, const char *category, const char *name,
                    const char *function, const summary_t *s, const prof_gpu_stat_t *gpu)
{
    nvtxcorr_out_str(&out, section);
    const char *text[] = {label, category, name, function};
    for (int i = 0; i < 4; i++) {
        nvtxcorr_out_str(&out, ",");
        nvtxcorr_out_csv(&out, text[i]);
    }
    uint64_t vals[] = {s->launches, s->graph_launches,
                       s->errors,   s->capture,
                       s->total,    s->launches ? s->min : 0,
                       s->max,      s->launches ? s->total / s->launches : 0,
                       s->p50,      s->p99};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        nvtxcorr_out_str(&out, ",");
        nvtxcorr_out_u64(&out, vals[i]);
    }
    nvtxcorr_out_str(&out, ",");
    nvtxcorr_prof_gpu_csv_stat(&out, gpu);
    nvtxcorr_out_str(&out, "\n");
}

static void write_csv(uint32_t nl, uint32_t nk, uint32_t nsites)
{
    nvtxcorr_out_str(&out, "section,label,category,name,function,launches,graph_launches,errors,"
                           "capture_launches,cpu_ns,cpu_min_ns,cpu_max_ns,cpu_mean_ns,"
                           "cpu_p50_ns,cpu_p99_ns,gpu_ns,gpu_kernels,gpu_min_ns,gpu_max_ns,"
                           "gpu_mean_ns,gpu_p50_ns,gpu_p99_ns\n");
    for (uint32_t i = 0; i < nl; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        prof_gpu_stat_t gpu;
        nvtxcorr_prof_gpu_label_stat(l, nsites, 0, &gpu);
        csv_row("label", l->text, l->category, NULL, NULL, &label_sum[order[i]], &gpu);
    }
    for (uint32_t i = 0; i < nk; i++) {
        uint32_t id = order[PROF_MAX_SITES - 1 - i];
        const nvtxcorr_profile_site_t *s =
            atomic_load_explicit(&nvtxcorr_prof_sites[id], memory_order_relaxed);
        csv_row("kernel", label_text(s->label_id), label_category(s->label_id), s->name,
                s->function, &site_sum[id], site_gpu(id));
    }
    if (uncounted_at_start()) { /* a row of its own: its launches column, nothing else */
        nvtxcorr_out_str(&out, "uncounted_at_start,,,,,");
        nvtxcorr_out_u64(&out, uncounted_at_start());
        nvtxcorr_out_str(&out, ",,,,,,,,,,,,,,,,\n");
    }
    nvtxcorr_prof_gpu_csv_sections(&out, nsites);
}

/* ---- text: at most 100 columns ---- */
static void pad(const char *s, size_t width, int right)
{
    nvtxcorr_prof_pad(&out, s, width, right);
}

/* Columns are UTF-8 code points. */
static size_t text_cols(const char *s)
{
    size_t cols = 0;
    for (; *s; s++)
        cols += ((unsigned char)*s & 0xC0) != 0x80;
    return cols;
}

/* The byte offset of code point `col` of s. */
static size_t col_offset(const char *s, size_t col)
{
    size_t i = 0;
    for (size_t seen = 0; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && seen++ == col) break;
    return i;
}

void nvtxcorr_prof_pad(prof_out_t *o, const char *text, size_t width, int right)
{
    char s[1024]; /* control bytes and bytes that are not UTF-8 shown as '?' */
    size_t bytes = nvtxcorr_text_safe(s, sizeof s, text), cols = text_cols(s);
    if (cols > width) { /* cut in the middle: names that differ at the end stay apart */
        size_t head = width >= 2 ? (width - 2) / 2 : 0, tail = width >= 3 ? (width - 3) / 2 : 0;
        nvtxcorr_out_mem(o, s, col_offset(s, head));
        nvtxcorr_out_str(o, "...");
        size_t from = col_offset(s, cols - tail);
        nvtxcorr_out_mem(o, s + from, bytes - from);
        return;
    }
    for (size_t i = cols; right && i < width; i++)
        nvtxcorr_out_str(o, " ");
    nvtxcorr_out_mem(o, s, bytes);
    for (size_t i = cols; !right && i < width; i++)
        nvtxcorr_out_str(o, " ");
}

void nvtxcorr_prof_cols_need(prof_cols_t *c, const char *first, const char *second)
{
    size_t a = text_cols(first), b = text_cols(second ? second : "-");
    if (a > c->need1) c->need1 = a;
    if (b > c->need2) c->need2 = b;
}

/* The second column gets what its longest value needs, but no more than leaves the first what
 * its longest needs unless that would leave the second under PROF_SECOND_MIN; the first takes
 * everything left. */
void nvtxcorr_prof_cols_fit(prof_cols_t *c, size_t numbers, int two)
{
    size_t room = PROF_TEXT_WIDTH - numbers;
    if (!two) {
        c->first = room, c->second = 0;
        return;
    }
    size_t left = room - 1 > c->need1 ? room - 1 - c->need1 : 0;
    size_t w2 = left > PROF_SECOND_MIN ? left : PROF_SECOND_MIN;
    if (c->need2 < w2) w2 = c->need2;
    c->second = w2;
    c->first = room - 1 - w2;
}

/* 3 significant digits: "812 ns", "4.07 us", "12.3 ms", "1.50 s". */
void nvtxcorr_prof_fmt_time(char *buf, uint64_t ns)
{
    static const char *const units[] = {" ns", " us", " ms", " s"};
    uint64_t scale = 1;
    int u = 0;
    while (u < 3 && ns >= scale * 1000)
        scale *= 1000, u++;
    size_t n;
    if (u == 0) {
        n = nvtxcorr_fmt_u64(buf, ns);
    } else {
        uint64_t hundredths = (ns * 100 + scale / 2) / scale; /* x.yz */
        if (hundredths >= 100000 && u < 3) {
            scale *= 1000, u++;
            hundredths = (ns * 100 + scale / 2) / scale;
        }
        int decimals = hundredths < 1000 ? 2 : hundredths < 10000 ? 1 : 0;
        uint64_t v = decimals == 2   ? hundredths
                     : decimals == 1 ? (hundredths + 5) / 10
                                     : (hundredths + 50) / 100;
        uint64_t div = decimals == 2 ? 100 : decimals == 1 ? 10 : 1;
        n = nvtxcorr_fmt_u64(buf, v / div);
        if (decimals) {
            buf[n++] = '.';
            uint64_t frac = v % div;
            if (decimals == 2 && frac < 10) buf[n++] = '0';
            n += nvtxcorr_fmt_u64(buf + n, frac);
        }
    }
    strcpy(buf + n, units[u]);
}

static void cell_time(uint64_t ns, size_t width)
{
    char buf[32];
    nvtxcorr_prof_fmt_time(buf, ns);
    nvtxcorr_out_str(&out, " ");
    pad(buf, width, 1);
}

static void cell_u64(uint64_t v, size_t width)
{
    char buf[24];
    buf[nvtxcorr_fmt_u64(buf, v)] = 0;
    nvtxcorr_out_str(&out, " ");
    pad(buf, width, 1);
}

static void cell_share(uint64_t part, uint64_t whole, size_t width)
{
    char buf[16];
    uint64_t tenths = whole ? (part * 1000 + whole / 2) / whole : 0;
    size_t n = nvtxcorr_fmt_u64(buf, tenths / 10);
    buf[n++] = '.';
    n += nvtxcorr_fmt_u64(buf + n, tenths % 10);
    buf[n++] = '%';
    buf[n] = 0;
    nvtxcorr_out_str(&out, " ");
    pad(buf, width, 1);
}

static void write_text(uint32_t nl, const totals_t *tot, uint32_t nsites)
{
    char t[32];
    nvtxcorr_out_str(&out, "nvtxcorr: profile of pid ");
    nvtxcorr_out_u64(&out, (uint64_t)nvtxcorr_prof_process.pid);
    nvtxcorr_out_str(&out, ": ");
    nvtxcorr_out_u64(&out, tot->launches);
    nvtxcorr_out_str(&out, " launches (");
    nvtxcorr_out_u64(&out, tot->graph_launches);
    nvtxcorr_out_str(&out, " graph), ");
    nvtxcorr_out_u64(&out, tot->errors);
    nvtxcorr_out_str(&out, " errors, ");
    nvtxcorr_prof_fmt_time(t, tot->total);
    nvtxcorr_out_str(&out, t);
    nvtxcorr_out_str(&out, " CPU in launch calls\n");
    prof_cols_t cols = {0};
    nvtxcorr_prof_cols_need(&cols, "label", "category");
    for (uint32_t i = 0; i < nl; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        if (label_sum[order[i]].launches) nvtxcorr_prof_cols_need(&cols, l->text, l->category);
    }
    nvtxcorr_prof_cols_fit(&cols, 54, 1); /* " launches share total mean p50 p99" */
    pad("label", cols.first, 0);
    nvtxcorr_out_str(&out, " ");
    pad("category", cols.second, 0);
    nvtxcorr_out_str(&out, "  launches  share     total     mean      p50      p99\n");
    for (uint32_t i = 0; i < nl; i++) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[order[i]], memory_order_relaxed);
        const summary_t *s = &label_sum[order[i]];
        if (s->launches == 0) continue;
        pad(l->text, cols.first, 0);
        nvtxcorr_out_str(&out, " ");
        pad(l->category ? l->category : "-", cols.second, 0);
        cell_u64(s->launches, 9);
        cell_share(s->total, tot->total, 6);
        cell_time(s->total, 9);
        cell_time(s->total / s->launches, 8);
        cell_time(s->p50, 8);
        cell_time(s->p99, 8);
        nvtxcorr_out_str(&out, "\n");
    }
    if (tot->skipped) {
        nvtxcorr_out_u64(&out, tot->skipped);
        nvtxcorr_out_str(&out, " launches of kernels whose rule says \"-\" are in no label "
                               "(see the kernels list)\n");
    }
    if (tot->other) {
        nvtxcorr_out_u64(&out, tot->other);
        nvtxcorr_out_str(&out, " launches of kernels beyond the 32766 distinct kernels and graph "
                               "labels kept are counted under [other]\n");
    }
    if (tot->other_graphs) {
        nvtxcorr_out_u64(&out, tot->other_graphs);
        nvtxcorr_out_str(&out, " launches of graphs beyond the 8191 distinct graph labels kept "
                               "are counted under [other graphs]\n");
    }
    if (tot->capture) {
        nvtxcorr_out_u64(&out, tot->capture);
        nvtxcorr_out_str(&out,
                         " launches made during stream capture (recorded, not run) not counted\n");
    }
    if (tot->own) { /* CUPTI's callbacks into nvtxcorr: its time, not the launches' */
        nvtxcorr_prof_fmt_time(t, tot->own);
        nvtxcorr_out_str(&out, "nvtxcorr's own work inside the launch calls (CUPTI callbacks), "
                               "not in the times above: ");
        nvtxcorr_out_str(&out, t);
        nvtxcorr_out_str(&out, "\n");
    }
    if (uncounted_at_start()) {
        nvtxcorr_out_u64(&out, uncounted_at_start());
        nvtxcorr_out_str(&out, " launches made while nvtxcorr was starting passed through "
                               "uncounted\n");
    }
    nvtxcorr_prof_gpu_text(&out, nsites);
}

typedef enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV } format_t;

static format_t format_of(const char *path)
{
    size_t n = strlen(path);
    if (n >= 5 && !strcmp(path + n - 5, ".json")) return FORMAT_JSON;
    if (n >= 4 && !strcmp(path + n - 4, ".csv")) return FORMAT_CSV;
    return FORMAT_TEXT;
}

void nvtxcorr_prof_summary_write(void)
{
    uint64_t end_ns = nvtxcorr_prof_realtime_ns();
    uint32_t nsites = atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_acquire);
    uint32_t nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    totals_t tot = {0};
    tot.own = atomic_load_explicit(&nvtxcorr_prof_own_ns, memory_order_relaxed);
    /* Labels (front of `order`) and kernels (back of `order`) that saw anything. */
    uint32_t nl = 0, nk = 0;
    for (uint32_t i = 0; i < nlabels; i++) {
        prof_label_t *l = atomic_load_explicit(&nvtxcorr_prof_labels[i], memory_order_acquire);
        aggregate_label(l, nsites, &scratch);
        finish_agg(&scratch, &label_sum[i]);
        if (scratch.launches || scratch.capture) order[nl++] = i;
    }
    static uint32_t kernels[PROF_MAX_SITES];
    for (uint32_t i = 0; i < nsites; i++) {
        nvtxcorr_profile_site_t *s =
            atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
        aggregate_site(s, &scratch);
        finish_agg(&scratch, &site_sum[i]);
        tot.launches += scratch.launches;
        tot.graph_launches += scratch.graph_launches;
        tot.errors += scratch.errors;
        tot.capture += scratch.capture;
        tot.total += scratch.total;
        if (s->label_id == PROF_NO_LABEL) tot.skipped += scratch.launches;
        if (i == PROF_OTHER_SITE) tot.other = scratch.launches;
        if (i == PROF_OTHER_GRAPHS_SITE) tot.other_graphs = scratch.launches;
        if (!s->graph && (scratch.launches || scratch.capture || site_gpu(i)->n)) kernels[nk++] = i;
    }
    sort(order, nl, label_sum, 1);
    sort(kernels, nk, site_sum, 0);
    for (uint32_t i = 0; i < nk; i++) /* kernels at the back, so labels keep the front */
        order[PROF_MAX_SITES - 1 - i] = kernels[i];

    const char *path = nvtxcorr_prof_process.profile_path;
    format_t format = format_of(path);
    /* The file comes into being whole or not at all: the name is claimed (O_EXCL: an
     * existing file is never overwritten), the summary written to a temporary name beside
     * it and renamed over the claim. A failed write (a full disk, the file-size limit, a
     * descriptor the program closed) removes both and prints the table to stderr instead. */
    int claim = path[0] ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)
                        : (errno = ENAMETOOLONG, -1);
    if (claim < 0) {
        int err = errno;
        if (path[0]) /* a path too long after expansion was reported at start-up */
            nvtxcorr_prof_say("error", path, ": ", nvtxcorr_prof_strerror(err),
                              err == EEXIST ? "; not overwritten, summary printed to stderr instead"
                                            : "; summary printed to stderr instead",
                              NULL);
        nvtxcorr_out_open(&out, STDERR_FILENO, 0);
        write_text(nl, &tot, nsites);
        nvtxcorr_out_flush(&out);
        return;
    }
    struct stat claimed;
    int claim_known = fstat(claim, &claimed) == 0;
    static char tmp[sizeof nvtxcorr_prof_process.profile_path + 32];
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0, n = strlen(path);
    int fd = -1;
    if (n + 16 < sizeof tmp) { /* "dir/.base.nvtxcorr-tmp" */
        memcpy(tmp, path, dir);
        tmp[dir] = '.';
        memcpy(tmp + dir + 1, path + dir, n - dir);
        memcpy(tmp + n + 1, ".nvtxcorr-tmp", sizeof ".nvtxcorr-tmp");
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    /* No temporary name (too long, or left behind by a killed run): the claim itself. */
    nvtxcorr_out_open(&out, fd >= 0 ? fd : claim, 1);
    if (format == FORMAT_JSON)
        write_json(nl, nlabels, nk, nsites, &tot, end_ns);
    else if (format == FORMAT_CSV)
        write_csv(nl, nk, nsites);
    else
        write_text(nl, &tot, nsites);
    nvtxcorr_out_flush(&out);
    int err = out.err;
    if (fd >= 0) {
        if (err != EBADF && close(fd) != 0 && !err) err = errno; /* NFS: a full disk at close */
        if (!err && rename(tmp, path) != 0) err = errno;
        if (err) unlink(tmp);
    }
    if (claim_known &&
        nvtxcorr_prof_fd_is(claim, (uint64_t)claimed.st_dev, (uint64_t)claimed.st_ino))
        close(claim); /* unless the program closed it and has the number for its own file */
    if (err) {
        unlink(path);
        nvtxcorr_prof_say("error", path, ": write failed: ", nvtxcorr_prof_strerror(err),
                          "; the part written was removed, summary printed to stderr instead",
                          NULL);
        nvtxcorr_out_open(&out, STDERR_FILENO, 0);
        write_text(nl, &tot, nsites);
        nvtxcorr_out_flush(&out);
    }
}
