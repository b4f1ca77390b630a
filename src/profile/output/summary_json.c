/* The summary as JSON, the stable interface (docs/profile.md): the process's facts and totals,
 * then one array per section, each record an object of its text keys and the fields of
 * summary.h's tables. Same constraints as summary.c: may run in a signal handler. */
#include <string.h>
#include <sys/utsname.h>
#include "context/context.h"
#include "core/config.h"
#include "profile/base/clock.h"
#include "profile/base/devices.h"
#include "profile/base/histogram.h"
#include "profile/base/out.h"
#include "profile/base/process.h"
#include "profile/counting/context_stats.h"
#include "profile/gpu/cupti.h"
#include "profile/gpu/gpu.h"
#include "summary_writer.h"
static char cmdline[32768];
static uint32_t records; /* in the section being written */

static void command(prof_out_t *o)
{
    size_t n = nvtxcorr_prof_cmdline(cmdline, sizeof cmdline);
    nvtxcorr_out_str(o, "[");
    for (size_t i = 0; i < n;) {
        if (i) nvtxcorr_out_str(o, ", ");
        nvtxcorr_out_json(o, cmdline + i);
        i += strlen(cmdline + i) + 1;
    }
    nvtxcorr_out_str(o, "]");
}

/* `"key": value`, null when there is none; a histogram as [[bucket, count], ...]. */
static void field(prof_out_t *o, const prof_field_t *f, int have, uint64_t v, const uint64_t *hist)
{
    nvtxcorr_out_str(o, "\"");
    nvtxcorr_out_str(o, f->key);
    nvtxcorr_out_str(o, "\": ");
    if (!have) {
        nvtxcorr_out_str(o, "null");
        return;
    }
    if (!PROF_KIND_IS_HIST(f->kind)) {
        nvtxcorr_out_u64(o, v);
        return;
    }
    nvtxcorr_out_str(o, "[");
    int first = 1;
    for (unsigned b = 0; hist && b < PROF_BUCKETS; b++)
        if (hist[b]) {
            nvtxcorr_out_str(o, first ? "[" : ", [");
            nvtxcorr_out_u64(o, b);
            nvtxcorr_out_str(o, ", ");
            nvtxcorr_out_u64(o, hist[b]);
            nvtxcorr_out_str(o, "]");
            first = 0;
        }
    nvtxcorr_out_str(o, "]");
}

static void begin(prof_out_t *o, const prof_summary_t *s)
{
    static struct utsname u;
    nvtxcorr_out_str(o, "{\"nvtxcorr_profile\": 1, \"pid\": ");
    nvtxcorr_out_u64(o, (uint64_t)nvtxcorr_prof_process.pid);
    nvtxcorr_out_str(o, ", \"host\": ");
    nvtxcorr_out_json(o, uname(&u) == 0 ? u.nodename : NULL);
    nvtxcorr_out_str(o, ",\n \"command\": ");
    command(o);
    nvtxcorr_out_str(o, ",\n \"start_ns\": ");
    nvtxcorr_out_u64(o, nvtxcorr_prof_process.start_ns);
    nvtxcorr_out_str(o, ", \"end_ns\": ");
    nvtxcorr_out_u64(o, s->end_ns);
    if (s->window) { /* NVTXCORR_WINDOW: this summary is one window's */
        nvtxcorr_out_str(o, ",\n \"window\": {\"index\": ");
        nvtxcorr_out_u64(o, s->window->index);
        nvtxcorr_out_str(o, ", \"reason\": ");
        nvtxcorr_out_json(o, s->window->reason);
        nvtxcorr_out_str(o, ", \"start_ns\": ");
        nvtxcorr_out_u64(o, s->window->start_ns);
        nvtxcorr_out_str(o, ", \"end_ns\": ");
        nvtxcorr_out_u64(o, s->window->end_ns);
        nvtxcorr_out_str(o, "}");
    }
    nvtxcorr_out_str(o, ",\n \"gpus\": ");
    const char *gpus = nvtxcorr_prof_devices_json();
    nvtxcorr_out_str(o, gpus ? gpus : "null");
    nvtxcorr_out_str(o, ",\n \"label_table\": ");
    if (nvtxcorr_prof_label_hash) {
        static const char hex[] = "0123456789abcdef";
        char h[19] = "\"";
        for (int i = 0; i < 16; i++)
            h[1 + i] = hex[(nvtxcorr_prof_label_hash >> (60 - 4 * i)) & 15];
        h[17] = '"';
        nvtxcorr_out_str(o, h);
    } else {
        nvtxcorr_out_str(o, "null");
    }
    nvtxcorr_out_str(o, ", \"rank\": ");
    nvtxcorr_out_json(o, nvtxcorr_config.rank);
    nvtxcorr_out_str(o, ", \"clock\": ");
    nvtxcorr_out_json(o, nvtxcorr_prof_clock.tsc ? "tsc" : "monotonic");
    nvtxcorr_out_str(o, s->gpu ? ", \"gpu_time\": true, \"gpu_time_note\": "
                               : ", \"gpu_time\": false, \"gpu_time_note\": ");
    nvtxcorr_out_json(o, s->window && nvtxcorr_prof_gpu_window_note()
                             ? nvtxcorr_prof_gpu_window_note()
                             : nvtxcorr_prof_gpu_note());
    nvtxcorr_out_str(o, ", \"gpu_correlation\": ");
    nvtxcorr_out_json(o, s->gpu ? nvtxcorr_prof_gpu_correlation_mode() : NULL);
    nvtxcorr_out_str(o, ", \"context_note\": ");
    nvtxcorr_out_json(o, nvtxcorr_prof_ctx_note());
    nvtxcorr_out_str(o, ",\n \"histogram\": {\"exact_below_ns\": ");
    nvtxcorr_out_u64(o, PROF_EXACT);
    nvtxcorr_out_str(o, ", \"sub_buckets\": ");
    nvtxcorr_out_u64(o, PROF_SUB);
    nvtxcorr_out_str(o, ", \"buckets\": ");
    nvtxcorr_out_u64(o, PROF_BUCKETS);
    nvtxcorr_out_str(o, "},\n \"totals\": {");
    for (int i = 0; i < PROF_TOTAL_N; i++) {
        const prof_field_t *f = &nvtxcorr_prof_total_fields[i];
        if (i) nvtxcorr_out_str(o, ", ");
        field(o, f, s->gpu || !PROF_KIND_IS_GPU(f->kind), s->total[i], NULL);
    }
    nvtxcorr_out_str(o, "}");
}

static void section(prof_out_t *o, const prof_summary_t *s, int sec, int end)
{
    (void)s;
    const char *key = nvtxcorr_prof_section_json[sec];
    if (key == NULL) return;
    if (end) {
        nvtxcorr_out_str(o, "]");
        return;
    }
    records = 0;
    nvtxcorr_out_str(o, ",\n \"");
    nvtxcorr_out_str(o, key);
    nvtxcorr_out_str(o, "\": [");
}

/* Each section's text keys, in order: {key, PROF_T_*}, up to a NULL key. */
typedef struct text_key {
    const char *key;
    int text;
} text_key_t;
static const text_key_t label_keys[] = {
    {"label", PROF_T_LABEL}, {"category", PROF_T_CATEGORY}, {NULL, 0}};
static const text_key_t kernel_keys[] = {{"name", PROF_T_NAME},
                                         {"function", PROF_T_FUNCTION},
                                         {"label", PROF_T_LABEL},
                                         {"category", PROF_T_CATEGORY},
                                         {NULL, 0}};
static const text_key_t kernel_label_keys[] = {
    {"label", PROF_T_LABEL}, {"category", PROF_T_CATEGORY}, {"kind", PROF_T_NAME}, {NULL, 0}};

static void record(prof_out_t *o, const prof_summary_t *s, int sec, const prof_row_t *r)
{
    (void)s;
    const text_key_t *keys = sec == PROF_SEC_KERNELS         ? kernel_keys
                             : sec == PROF_SEC_KERNEL_LABELS ? kernel_label_keys
                                                             : label_keys;
    if (nvtxcorr_prof_section_json[sec] == NULL) return;
    nvtxcorr_out_str(o, records++ ? ",\n  {" : "\n  {");
    for (size_t i = 0; keys[i].key; i++) {
        nvtxcorr_out_str(o, i ? ", \"" : "\"");
        nvtxcorr_out_str(o, keys[i].key);
        nvtxcorr_out_str(o, "\": ");
        nvtxcorr_out_json(o, r->text[keys[i].text]);
    }
    /* The graphs section has its own fields; kernel_labels only the GPU ones. */
    int graphs = sec == PROF_SEC_GRAPHS;
    const prof_field_t *fields = graphs ? nvtxcorr_prof_graph_fields : nvtxcorr_prof_row_fields;
    int n = graphs ? PROF_GRAPH_N : PROF_ROW_N;
    for (int i = 0; i < n; i++) {
        if (sec == PROF_SEC_KERNEL_LABELS && !PROF_KIND_IS_GPU(fields[i].kind)) continue;
        nvtxcorr_out_str(o, ", ");
        field(o, &fields[i], (r->have >> i) & 1, r->v[i], r->hist[i]);
    }
    nvtxcorr_out_str(o, "}");
}

/* One row per (context path, label), docs/profile.md: "contexts". GPU values are null without
 * GPU time. */
static void contexts(prof_out_t *o, const prof_summary_t *s)
{
    nvtxcorr_out_str(o, ",\n \"contexts\": [");
    for (size_t i = 0; i < s->nctx; i++) {
        const prof_ctx_row_t *r = &s->ctx_rows[s->ctx_order[i]];
        uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
        unsigned n = nvtxcorr_context_path(r->ctx, path, NVTXCORR_CONTEXT_PATH_MAX);
        nvtxcorr_out_str(o, i ? ",\n  {\"context\": [" : "\n  {\"context\": [");
        for (unsigned e = 0; e < n; e++) {
            if (e) nvtxcorr_out_str(o, ", ");
            nvtxcorr_out_json(o, nvtxcorr_context_name(path[e]));
        }
        nvtxcorr_out_str(o, "], \"label\": ");
        nvtxcorr_out_json(o, nvtxcorr_prof_ctx_row_label(r));
        nvtxcorr_out_str(o, ", \"launches\": ");
        nvtxcorr_out_u64(o, r->launches);
        nvtxcorr_out_str(o, ", \"gpu_kernels\": ");
        if (s->gpu)
            nvtxcorr_out_u64(o, r->gpu_kernels);
        else
            nvtxcorr_out_str(o, "null");
        nvtxcorr_out_str(o, ", \"gpu_ns\": ");
        if (s->gpu)
            nvtxcorr_out_u64(o, r->gpu_ns);
        else
            nvtxcorr_out_str(o, "null");
        nvtxcorr_out_str(o, ", \"cpu_ns\": ");
        nvtxcorr_out_u64(o, r->cpu_ns);
        nvtxcorr_out_str(o, "}");
    }
    nvtxcorr_out_str(o, "]");
}

static void end(prof_out_t *o, const prof_summary_t *s)
{
    (void)s;
    nvtxcorr_out_str(o, "}\n");
}

const prof_writer_t nvtxcorr_prof_json_writer = {NULL, begin, section, record, end, contexts};
