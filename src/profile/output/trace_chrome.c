/* The trace's chrome form (NVTXCORR_TRACE_FORMAT=chrome, the default for a path that does not
 * end .json): the trace-event array Perfetto and chrome://tracing read. One complete ("X")
 * event per launch on its thread, named by its label, its args the kernel's name (or
 * "graph":true), the stream handle, the grid and whether it was captured; each GPU operation
 * an "X" event on its device and stream's track named by the kernel's label, with an arrow
 * ("s" inside the launch, "f" bound to the operation) whose id is the launch's external
 * correlation id. The file starts "[" and ends "]" at a normal close; append "]" to a file
 * cut short. trace.c writes the events out (trace.h). */
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/gpu/gpu.h"
#include "trace.h"
#include "trace_format.h"
static size_t chrome_head(char *p)
{
    p[0] = '[';
    return 1;
}

/* A site's launch event up to inside its args. */
static size_t chrome_prefix(char *p, const nvtxcorr_profile_site_t *s, const char *label,
                            const char *category)
{
    size_t n = 0;
    PUT(",\n{\"ph\":\"X\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 1000, label ? label : s->function);
    PUT("\",\"cat\":\"");
    n += nvtxcorr_fmt_json(p + n, 100, category ? category : s->graph ? "graph" : "kernel");
    PUT("\",\"args\":{");
    if (s->graph) {
        PUT("\"graph\":true");
    } else {
        PUT("\"kernel\":\"");
        n += nvtxcorr_fmt_json(p + n, 2000, s->name);
        p[n++] = '"';
    }
    return n;
}

static size_t chrome_launch(char *p, prof_thread_t *t, const nvtxcorr_profile_launch_t *pl,
                            const char *api, unsigned gx, unsigned gy, unsigned gz)
{
    (void)api;
    size_t n = 0;
    PUT(",\"stream\":\"0x");
    n += prof_fmt_launch_args(p + n, t, pl, 1, gx, gy, gz);
    p[n++] = '}';
    n += prof_fmt_where(p + n, t, pl->start);
    PUT(",\"dur\":");
    n += prof_fmt_us(p + n, pl->ns);
    p[n++] = '}';
    if (pl->ext) { /* GPU time: where the arrows to its kernels start, inside the launch */
        PUT(",\n{\"ph\":\"s\",\"cat\":\"gpu\",\"name\":\"launch\",\"id\":\"0x");
        n += prof_fmt_hex(p + n, pl->ext);
        p[n++] = '"';
        memcpy(p + n, t->where, t->where_len);
        n += t->where_len;
        n += prof_fmt_us(p + n, prof_ticks_ns(pl->start - nvtxcorr_prof_clock.origin) + pl->ns / 2);
        p[n++] = '}';
    }
    return n;
}

static size_t chrome_gpu(char *p, const prof_trace_op_t *op)
{
    size_t n = 0;
    PUT(",\n{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 1000, prof_label_of(op->site));
    PUT("\",\"args\":{\"kernel\":\"");
    n += nvtxcorr_fmt_json(p + n, 2000, op->site->name);
    p[n++] = '"';
    n += prof_fmt_context(p + n, op->ctx);
    p[n++] = '}';
    size_t where = n;
    n += prof_fmt_gpu_where(p + n, op->device, op->stream);
    size_t where_len = n - where;
    n += prof_fmt_us(p + n, op->start_ns);
    PUT(",\"dur\":");
    n += prof_fmt_us(p + n, op->dur_ns);
    p[n++] = '}';
    if (op->ext) {
        PUT(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"gpu\",\"name\":\"launch\",\"id\":\"0x");
        n += prof_fmt_hex(p + n, op->ext);
        p[n++] = '"';
        memmove(p + n, p + where, where_len);
        n += where_len;
        n += prof_fmt_us(p + n, op->start_ns + op->dur_ns / 2);
        p[n++] = '}';
    }
    return n;
}

static size_t chrome_tail(char *p, size_t size)
{
    (void)size;
    memcpy(p, "\n]\n", 3);
    return 3;
}

const prof_trace_form_t nvtxcorr_prof_trace_chrome = {chrome_head, chrome_prefix, chrome_launch,
                                                      chrome_gpu, chrome_tail};
