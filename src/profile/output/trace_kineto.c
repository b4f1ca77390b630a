/* The trace's Kineto form (the default for a path ending .json; NVTXCORR_TRACE_FORMAT=kineto):
 * the dialect of PyTorch's profiler (Kineto), which Holistic Trace Analysis reads and nothing
 * else: a JSON object, its top-level fields in trace_meta.c, its events in "traceEvents". A
 * launch is a "user_annotation" slice named by its label, around a "cuda_runtime" or
 * "cuda_driver" slice named by the entry point called (cudaLaunchKernel, cuGraphLaunch, ...);
 * each GPU operation a "kernel" (or "gpu_memcpy", "gpu_memset") slice on its device and
 * stream's track and a "gpu_user_annotation" slice of exactly its span named by its launch's
 * label; an "ac2g" arrow from launch to operation. Written "{...,"traceEvents": [", events,
 * and at a normal close "]", deviceProperties and "}": a file cut short by SIGKILL reads as
 * strict JSON with "]}" appended. trace.c writes the events out (trace.h).
 *
 * Facts about HTA (hta/ in facebookresearch/HolisticTraceAnalysis) this relies on, besides
 * trace_meta.c's:
 * - A GPU operation is an event whose args have "stream" (breakdown_analysis.py keeps
 *   `stream != -1`, the default when absent): only GPU operations carry "stream" (the CPU
 *   side has no stream, as in Kineto).
 * - get_gpu_kernel_breakdown sums "dur" per "name" of those; kernels are told from memory
 *   operations by name (utils.py, is_memory_kernel: "Memcpy", "Memset").
 * - get_gpu_user_annotation_breakdown sums "dur" per "name" of cat "gpu_user_annotation"
 *   (with use_gpu_annotation=False, of cat "user_annotation").
 * - trace.py joins CPU and GPU events on args "correlation"; "External id" is Kineto's link
 *   to the operator: both are the launch's external correlation id (gpu/cupti_launch.c), kept below
 *   2^63 (pandas reads int64).
 * - trace_parser.py rounds fractional microseconds (ts up, end down) unless
 *   HTA_DISABLE_NS_ROUNDING=1. */
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/gpu/gpu.h"
#include "trace.h"
#include "trace_format.h"
#include "trace_meta.h"
/* Kineto's correlation: the external correlation id, as a JSON number pandas reads (int64). */
static size_t fmt_corr(char *p, uint64_t ext)
{
    return nvtxcorr_fmt_u64(p, ext & 0x7fffffffffffffffull);
}

static size_t kineto_head(char *p)
{
    size_t n = nvtxcorr_prof_kineto_head(p);
    p[n++] = '\n';
    return n;
}

/* A site's user_annotation up to its "pid", args only for a label's category; the raw kernel
 * name is on the kernel's GPU event, as in Kineto (on the CPU side it was a third of the bytes
 * per launch, and writing the file is most of the trace's cost). */
static size_t kineto_prefix(char *p, const nvtxcorr_profile_site_t *s, const char *label,
                            const char *category)
{
    size_t n = 0;
    PUT(",\n{\"ph\":\"X\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 1000, label ? label : s->function);
    PUT("\",\"cat\":\"user_annotation\"");
    if (category) {
        PUT(",\"args\":{\"category\":\"");
        n += nvtxcorr_fmt_json(p + n, 100, category);
        PUT("\"}");
    }
    return n;
}

/* The call event up to its "ts", for the entry point `api`: category cuda_runtime or
 * cuda_driver (HTA's symbol table tells CPU-side launches by these), named by the entry
 * point. Kept per thread with `where`, which prof_fmt_where has just made. */
static void call_head(prof_thread_t *t, const char *api)
{
    char *p = t->call_head;
    size_t n = 0, len = strnlen(api, 64);
    PUT(",\n{\"ph\":\"X\",\"cat\":\"");
    if (strncmp(api + strspn(api, "_"), "cuda", 4) == 0) /* __cudaLaunchKernel too */
        PUT("cuda_runtime");
    else
        PUT("cuda_driver");
    PUT("\",\"name\":\"");
    memcpy(p + n, api, len), n += len;
    p[n++] = '"';
    memcpy(p + n, t->where, t->where_len), n += t->where_len;
    t->call_head_len = n;
    t->call_api = api;
}

/* The label's user_annotation (after the site's prefix), then the call, at the same start and
 * duration (their text copied), then the arrow's start. */
static size_t kineto_launch(char *p, prof_thread_t *t, const nvtxcorr_profile_launch_t *pl,
                            const char *api, unsigned gx, unsigned gy, unsigned gz)
{
    size_t n = 0;
    n += prof_fmt_where(p + n, t, pl->start);
    size_t ts = t->where_len, ts_len = n - ts; /* where_len: as prof_fmt_where made it */
    PUT(",\"dur\":");
    size_t dur = n;
    n += prof_fmt_us(p + n, pl->ns);
    size_t dur_len = n - dur;
    p[n++] = '}';
    if (t->call_api != api) call_head(t, api);
    memcpy(p + n, t->call_head, t->call_head_len), n += t->call_head_len;
    memcpy(p + n, p + ts, ts_len), n += ts_len;
    PUT(",\"dur\":");
    memcpy(p + n, p + dur, dur_len), n += dur_len;
    PUT(",\"args\":{");
    n += prof_fmt_launch_args(p + n, t, pl, 0, gx, gy, gz);
    if (pl->ext) {
        if (p[n - 1] != '{') p[n++] = ',';
        PUT("\"correlation\":");
        n += fmt_corr(p + n, pl->ext);
        PUT(",\"External id\":");
        n += fmt_corr(p + n, pl->ext);
    }
    if (p[n - 1] == '{') /* no args: none written (10 bytes a graph launch) */
        n -= sizeof(",\"args\":{") - 1, p[n++] = '}';
    else
        PUT("}}");
    if (pl->ext) { /* Kineto's arrow start: id the correlation, cat and name "ac2g" */
        PUT(",\n{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
        n += fmt_corr(p + n, pl->ext);
        memcpy(p + n, t->where, t->where_len), n += t->where_len;
        n += prof_fmt_us(p + n, prof_ticks_ns(pl->start - nvtxcorr_prof_clock.origin) + pl->ns / 2);
        p[n++] = '}';
    }
    return n;
}

static size_t fmt_dim3(char *p, const uint32_t v[3])
{
    size_t n = 0;
    p[n++] = '[';
    n += nvtxcorr_fmt_u64(p + n, v[0]);
    p[n++] = ',';
    n += nvtxcorr_fmt_u64(p + n, v[1]);
    p[n++] = ',';
    n += nvtxcorr_fmt_u64(p + n, v[2]);
    p[n++] = ']';
    return n;
}

/* A GPU operation's own args after its ids, as Kineto names them (libkineto/src/
 * CuptiActivity.h, the names in libkineto/include/MetadataFieldCatalog.h): a kernel's "grid"
 * and "block" as [x, y, z] arrays, and on a kernel, memcpy or memset of a graph replay
 * "graph id" and "graph node id" (Kineto writes these 0 outside a graph: left out here). HTA
 * reads "grid" and "block" as objects (hta/configs/event_args_formats/event_args_1.0.0.yaml,
 * threads::grid and threads::block, in ParserConfig's ARGS_COMPLETE); Perfetto shows every
 * arg. Another arg of the GPU operations goes here (an operation's events, names escaped at
 * their limits, take at most about 3,750 of the PROF_TRACE_EVENT_MAX bytes they may). */
static size_t fmt_op_args(char *p, const prof_trace_op_t *op)
{
    const prof_gpu_shape_t *s = op->shape;
    size_t n = 0;
    if (s->grid[0]) {
        PUT(",\"grid\":");
        n += fmt_dim3(p + n, s->grid);
        PUT(",\"block\":");
        n += fmt_dim3(p + n, s->block);
    }
    if (s->graph_id) {
        PUT(",\"graph id\":");
        n += nvtxcorr_fmt_u64(p + n, s->graph_id);
        PUT(",\"graph node id\":");
        n += nvtxcorr_fmt_u64(p + n, s->graph_node_id);
    }
    return n;
}

/* Kineto's GPU operation: a "kernel", "gpu_memcpy" or "gpu_memset" slice with args device,
 * stream, correlation, External id and fmt_op_args's (the memory operations named as CUPTI's
 * records are in Kineto, "Memcpy ..."/"Memset ...", which HTA tells from kernels by); then the
 * launch's label as a gpu_user_annotation of exactly its span, and the arrow's end. */
static size_t kineto_gpu(char *p, const prof_trace_op_t *op)
{
    const nvtxcorr_profile_site_t *s = op->site;
    uint64_t ext = op->ext;
    nvtxcorr_prof_kineto_devices(); /* once, while the driver is known to be up */
    size_t n = 0;
    int memcpy_op = strcmp(s->name, "[memcpy]") == 0, memset_op = strcmp(s->name, "[memset]") == 0;
    PUT(",\n{\"ph\":\"X\",\"cat\":\"");
    if (memcpy_op)
        PUT("gpu_memcpy\",\"name\":\"Memcpy (graph node)");
    else if (memset_op)
        PUT("gpu_memset\",\"name\":\"Memset (graph node)");
    else
        PUT("kernel\",\"name\":\""), n += nvtxcorr_fmt_json(p + n, 2000, s->name);
    p[n++] = '"';
    size_t where = n;
    n += prof_fmt_gpu_where(p + n, op->device, op->stream);
    n += prof_fmt_us(p + n, op->start_ns);
    PUT(",\"dur\":");
    n += prof_fmt_us(p + n, op->dur_ns);
    size_t span_len = n - where;
    PUT(",\"args\":{\"device\":");
    n += nvtxcorr_fmt_u64(p + n, op->device);
    PUT(",\"stream\":");
    n += nvtxcorr_fmt_u64(p + n, op->stream);
    if (ext) {
        PUT(",\"correlation\":");
        n += fmt_corr(p + n, ext);
    }
    size_t ext_at = n;
    if (ext) {
        PUT(",\"External id\":");
        n += fmt_corr(p + n, ext);
    }
    size_t ids_end = n;
    n += fmt_op_args(p + n, op);
    n += prof_fmt_context(p + n, op->ctx);
    PUT("}}");
    if (op->launch == NULL) return n; /* an operation whose launch is not known has no label */
    PUT(",\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 1000, prof_label_of(op->launch));
    p[n++] = '"';
    memmove(p + n, p + where, span_len), n += span_len;
    PUT(",\"args\":{");
    memmove(p + n, p + ext_at + 1, ids_end - ext_at - 1), n += ids_end - ext_at - 1;
    PUT("}}");
    if (ext) {
        PUT(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
        n += fmt_corr(p + n, ext);
        n += prof_fmt_gpu_where(p + n, op->device, op->stream);
        n += prof_fmt_us(p + n, op->start_ns + op->dur_ns / 2);
        p[n++] = '}';
    }
    return n;
}

/* "]", then deviceProperties and "}" (trace_meta.c). */
static size_t kineto_tail(char *p, size_t size)
{
    p[0] = '\n', p[1] = ']';
    return 2 + nvtxcorr_prof_kineto_tail(p + 2, size - 2);
}

const prof_trace_form_t nvtxcorr_prof_trace_kineto = {kineto_head, kineto_prefix, kineto_launch,
                                                      kineto_gpu, kineto_tail};
