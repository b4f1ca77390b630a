/* NVTXCORR_METRICS (metrics.h): the run's counts so far as Prometheus counters, one file per
 * process for node_exporter's textfile collector. The file is written to a temporary name
 * beside it (summary_file.c's, which does not end in .prom, so the collector never reads a
 * part) and renamed over the previous one, so a scrape sees the last whole file.
 *
 * Cumulative, not per window: the CPU side is read from the cut (a window's) or from the
 * records themselves (the exit's without windows); both are the run's totals, since a launch
 * between windows is recorded nowhere. GPU time is per window in the aggregator (its window
 * sets are emptied once written), so each window's set is added here to the run's own sums as
 * the window is written; without windows the aggregator's whole-run counts are read.
 *
 * Series are bounded: a label with an id below PROF_METRICS_LABELS has its own, the others
 * count under the "[other]" label (the site table's own, which every run makes first), said
 * once. Label ids never change, so no series ever shrinks. Sites whose rule says "-" are in no
 * label and no series.
 *
 * Everything here may run in a signal handler at exit: static state, out.c's writer, and a
 * flag that lets only one writer in (a stuck helper and the exit never share the buffers). */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "core/config.h"
#include "labels/utf8.h"
#include "metrics.h"
#include "profile/base/histogram.h"
#include "profile/base/out.h"
#include "profile/base/process.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/counting/windows.h"
#include "profile/gpu/gpu.h"
#include "summary.h"
typedef prof_metrics_series_t series_t;

/* The run's GPU sums with windows (added window by window), by label id below the bound. */
static series_t run_gpu[PROF_METRICS_LABELS];
static uint64_t run_uncorrelated, run_dropped;
static series_t now[PROF_METRICS_LABELS]; /* the last gathered: the file, the push */
static prof_metrics_t last = {now, 0, 0, 0, 0, NULL};
static _Atomic int busy, exit_written, fold_said, fail_said;
static prof_out_t out;
static prof_snap_t snap;

void nvtxcorr_prof_metrics_reset(void)
{
    memset(run_gpu, 0, sizeof run_gpu);
    run_uncorrelated = run_dropped = 0;
    atomic_store(&exit_written, 0);
    atomic_store(&busy, 0);
}

size_t nvtxcorr_prom_label_value(char *buf, size_t size, const char *s)
{
    size_t n = 0;
    if (size == 0) return 0;
    for (const char *p = s ? s : ""; *p;) {
        unsigned char c = (unsigned char)*p;
        size_t len = c < 0x80 ? 1 : nvtxcorr_utf8_len(p);
        const char *put = p;
        size_t put_len = len;
        if (c == '\\' || c == '"' || c == '\n') {
            put = c == '\\' ? "\\\\" : c == '"' ? "\\\"" : "\\n";
            put_len = 2;
        } else if (len == 0 || c < 0x20 || c == 0x7f) {
            put = "?", put_len = 1, len = len ? len : 1;
        }
        if (n + put_len + 1 > size) break;
        memcpy(buf + n, put, put_len);
        n += put_len, p += len;
    }
    buf[n] = 0;
    return n;
}

size_t nvtxcorr_prom_seconds(char *buf, uint64_t ns)
{
    size_t n = nvtxcorr_fmt_u64(buf, ns / 1000000000u);
    uint64_t frac = ns % 1000000000u;
    buf[n++] = '.';
    for (int i = 8; i >= 0; i--, frac /= 10)
        buf[n + (size_t)i] = (char)('0' + frac % 10);
    return n + 9;
}

/* The series a label id counts in, or -1 (no label, or no room even for "[other]"). */
static int slot_of(uint32_t label_id, int say)
{
    if (label_id == PROF_NO_LABEL) return -1;
    if (label_id < PROF_METRICS_LABELS) return (int)label_id;
    const nvtxcorr_profile_site_t *other =
        atomic_load_explicit(&nvtxcorr_prof_sites[PROF_OTHER_SITE], memory_order_acquire);
    if (other == NULL || other->label_id >= PROF_METRICS_LABELS) return -1;
    if (say && !atomic_exchange(&fold_said, 1)) {
        char num[24];
        num[nvtxcorr_fmt_u64(num, PROF_METRICS_LABELS)] = 0;
        nvtxcorr_prof_say("note", "NVTXCORR_METRICS: more than ", num,
                          " labels; the later ones are counted under the label [other]",
                          (char *)NULL);
    }
    return (int)other->label_id;
}

static const nvtxcorr_profile_site_t *site_at(uint32_t i)
{
    return atomic_load_explicit(&nvtxcorr_prof_sites[i], memory_order_acquire);
}

/* One view of the aggregator (a window's set, or the whole run's) added into s. */
static void add_gpu(series_t *s, const prof_gpu_t *g, uint32_t nsites)
{
    for (uint32_t i = 0; i < nsites; i++) {
        const nvtxcorr_profile_site_t *site = site_at(i);
        int k = site ? slot_of(site->label_id, 1) : -1;
        if (k < 0) continue;
        s[k].gpu_launch_ns += g->by_launch[i].ns;
        s[k].gpu_kernel_ns += g->by_kernel[i].ns;
        if (site->graph && g->replays[i]) s[k].replays += g->replays[i]->time.n;
    }
}

/* The CPU side of every series, and the GPU side, into `now`. */
static void gather(uint32_t nsites, int gpu)
{
    memset(now, 0, sizeof now);
    for (uint32_t i = 0; i < nsites; i++) {
        const nvtxcorr_profile_site_t *site = site_at(i);
        int k = site ? slot_of(site->label_id, 1) : -1;
        if (k < 0) continue;
        uint64_t launches = 0;
        if (nvtxcorr_prof_snap_cur) { /* a window's cut: launches as the windows count them */
            snap = nvtxcorr_prof_snap_cur[i];
            for (unsigned b = 0; b < PROF_BUCKETS; b++)
                launches += snap.hist[b];
        } else {
            nvtxcorr_prof_site_read(site, &snap); /* the exit's: every launch is done */
            launches = snap.launches;
        }
        now[k].launches += launches;
        now[k].cpu_ns += snap.total;
    }
    if (!gpu) return;
    if (nvtxcorr_prof_windows()) {
        for (int k = 0; k < PROF_METRICS_LABELS; k++) {
            now[k].gpu_launch_ns = run_gpu[k].gpu_launch_ns;
            now[k].gpu_kernel_ns = run_gpu[k].gpu_kernel_ns;
            now[k].replays = run_gpu[k].replays;
        }
    } else {
        add_gpu(now, &nvtxcorr_prof_gpu, nsites);
    }
}

/* ---- the text ---- */
static char common[1024]; /* pid="..",rank="..",host="..",command=".." */

static void put_label(const char *name, const char *value, int first)
{
    char buf[1024];
    if (!first) nvtxcorr_out_str(&out, ",");
    nvtxcorr_out_str(&out, name);
    nvtxcorr_out_str(&out, "=\"");
    nvtxcorr_out_mem(&out, buf, nvtxcorr_prom_label_value(buf, sizeof buf, value));
    nvtxcorr_out_str(&out, "\"");
}

static void make_common(void)
{
    static char cmd[4096];
    char num[24], *base = cmd;
    nvtxcorr_prof_cmdline(cmd, sizeof cmd); /* the program: its first argument */
    for (char *p = cmd; *p; p++)
        if (*p == '/' && p[1]) base = p + 1;
    if (strlen(base) > 64) base[64] = 0; /* short: a series label, not an identity */
    last.command = base;
    struct utsname u;
    num[nvtxcorr_fmt_u64(num, (uint64_t)nvtxcorr_prof_process.pid)] = 0;
    const char *parts[] = {"pid",     num,
                           "rank",    nvtxcorr_config.rank ? nvtxcorr_config.rank : "",
                           "host",    uname(&u) == 0 ? u.nodename : "",
                           "command", base};
    size_t len = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i += 2) {
        char v[300];
        nvtxcorr_prom_label_value(v, sizeof v, parts[i + 1]);
        const char *piece[] = {i ? "," : "", parts[i], "=\"", v, "\""};
        len = nvtxcorr_prof_join(common, sizeof common, len, piece, 5);
    }
}

static void family(const char *name, const char *help)
{
    const char *parts[] = {"# HELP ", name, " ", help, "\n# TYPE ", name, " counter\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        nvtxcorr_out_str(&out, parts[i]);
}

static void sample_head(const char *name)
{
    nvtxcorr_out_str(&out, name);
    nvtxcorr_out_str(&out, "{");
    nvtxcorr_out_str(&out, common);
}

static void sample_end(uint64_t v, int seconds)
{
    char buf[40];
    nvtxcorr_out_str(&out, "} ");
    if (seconds)
        nvtxcorr_out_mem(&out, buf, nvtxcorr_prom_seconds(buf, v));
    else
        nvtxcorr_out_u64(&out, v);
    nvtxcorr_out_str(&out, "\n");
}

static const prof_label_t *label_at(int k)
{
    return atomic_load_explicit(&nvtxcorr_prof_labels[k], memory_order_acquire);
}

/* One sample per series with something counted; field: which of series_t. */
static void label_samples(const char *name, size_t field, const char *view, const char *key,
                          int seconds, int category)
{
    uint32_t nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    for (uint32_t k = 0; k < nlabels && k < PROF_METRICS_LABELS; k++) {
        uint64_t v = *(const uint64_t *)((const char *)&now[k] + field);
        const prof_label_t *l = label_at((int)k);
        if (v == 0 || l == NULL) continue;
        sample_head(name);
        put_label(key, l->text, 0);
        if (category) put_label("category", l->category, 0);
        if (view) put_label("view", view, 0);
        sample_end(v, seconds);
    }
}

static void single(const char *name, const char *help, uint64_t v)
{
    family(name, help);
    nvtxcorr_out_str(&out, name);
    nvtxcorr_out_str(&out, "{");
    nvtxcorr_out_str(&out, common);
    sample_end(v, 0);
}

static void write_text(int gpu)
{
    const char *gs = "nvtxcorr_gpu_seconds_total";
    if (gpu) {
        family(gs, "GPU time by nvtxcorr label: view=launch, of the work each label's launches "
                   "caused; view=kernel, of the kernels, memcpys and memsets the label names.");
        label_samples(gs, offsetof(series_t, gpu_launch_ns), "launch", "label", 1, 1);
        label_samples(gs, offsetof(series_t, gpu_kernel_ns), "kernel", "label", 1, 1);
    }
    const char *ln = "nvtxcorr_launches_total";
    family(ln, "Kernel and graph launches by nvtxcorr label.");
    label_samples(ln, offsetof(series_t, launches), NULL, "label", 0, 1);
    const char *cs = "nvtxcorr_cpu_seconds_total";
    family(cs, "CPU time spent inside launch calls by nvtxcorr label.");
    label_samples(cs, offsetof(series_t, cpu_ns), NULL, "label", 1, 1);
    if (!gpu) return;
    const char *gr = "nvtxcorr_graph_replays_total";
    family(gr, "CUDA graph replays with GPU time, by graph label.");
    label_samples(gr, offsetof(series_t, replays), NULL, "graph", 0, 1);
    single("nvtxcorr_dropped_records_total", "GPU activity records CUPTI dropped.", last.dropped);
    single("nvtxcorr_uncorrelated_total",
           "GPU operations tied to no launch nvtxcorr saw (in no label).", last.uncorrelated);
}

/* The run's counts as of now, into `last` (and the labels every series carries). */
static void gather_all(void)
{
    last.gpu = nvtxcorr_prof_gpu_reported();
    gather(atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_acquire), last.gpu);
    last.nlabels = atomic_load_explicit(&nvtxcorr_prof_label_count, memory_order_acquire);
    if (last.nlabels > PROF_METRICS_LABELS) last.nlabels = PROF_METRICS_LABELS;
    /* With windows, the run's from the windows' sets (made under the record lock as each
     * window settled), as the summaries have them; the whole run's are the exit's. */
    last.dropped = !last.gpu                 ? 0
                   : nvtxcorr_prof_windows() ? run_dropped
                                             : nvtxcorr_prof_gpu.dropped;
    last.uncorrelated = !last.gpu                 ? 0
                        : nvtxcorr_prof_windows() ? run_uncorrelated
                                                  : nvtxcorr_prof_gpu.uncorrelated;
    make_common();
}

const prof_metrics_t *nvtxcorr_prof_metrics_last(void)
{
    return &last;
}

static void write_file(void)
{
    const char *path = nvtxcorr_prof_process.metrics_path;
    static char tmp[sizeof nvtxcorr_prof_process.metrics_path + 48];
    int fd = nvtxcorr_prof_temp_beside(path, tmp, sizeof tmp), err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        nvtxcorr_out_open(&out, fd, 1);
        write_text(last.gpu);
        nvtxcorr_out_flush(&out);
        err = out.err;
        if (err != EBADF && close(fd) != 0 && !err) err = errno;
        if (!err && rename(tmp, path) != 0) err = errno;
        if (err) unlink(tmp);
    }
    if (err && !atomic_exchange(&fail_said, 1))
        nvtxcorr_prof_say("error", path, ": ", nvtxcorr_prof_strerror(err),
                          "; metrics not written (said once)", (char *)NULL);
}

int nvtxcorr_prof_metrics_window(int at_exit)
{
    int file = nvtxcorr_prof_process.metrics_path[0] != 0;
    if ((!file && !nvtxcorr_config.otlp_endpoint) || atomic_exchange(&busy, 1)) return 0;
    const prof_gpu_t *g = nvtxcorr_prof_gpu_out; /* the window's set, once settled */
    if (g && nvtxcorr_prof_gpu_reported()) {
        add_gpu(run_gpu, g, atomic_load_explicit(&nvtxcorr_prof_site_count, memory_order_acquire));
        run_uncorrelated += g->uncorrelated;
        run_dropped += g->dropped;
    }
    gather_all();
    if (file) write_file();
    if (at_exit) atomic_store(&exit_written, 1);
    atomic_store(&busy, 0);
    return 1;
}

void nvtxcorr_prof_metrics_exit(void)
{
    if (!nvtxcorr_prof_process.metrics_path[0] || atomic_load(&exit_written) ||
        atomic_exchange(&busy, 1))
        return;
    gather_all();
    write_file();
    atomic_store(&exit_written, 1);
    atomic_store(&busy, 0);
}
