/* The trace's part of profile mode (trace_api.h, trace.h): a launch's events, handed to the
 * writer thread (trace_writer.c) or formatted here; GPU operations on their device and stream
 * tracks; graph events; windows as spans; the start, the close (the pages' padding squeezed
 * out, the form's end appended) and a forked child's fresh start. The file and its buffers
 * are trace_file.c's. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/gpu/gpu.h"
#include "trace.h"
#include "trace_api.h"
#include "trace_file.h"
#include "trace_format.h"
#include "trace_writer.h"
/* A launch's events: handed to the writer thread when there is one with room for it
 * (trace_writer.c), else formatted here. */
void nvtxcorr_profile_trace(const nvtxcorr_profile_launch_t *pl, const char *api, unsigned gx,
                            unsigned gy, unsigned gz)
{
    if (pl->site->trace_prefix == NULL) return;
    if (prof_trace_hand_off(pl, api, gx, gy, gz)) return;
    nvtxcorr_prof_trace_launch(NULL, pl, api, gx, gy, gz);
}

/* GPU operations (gpu.c, on the thread CUPTI gives buffers back on): one track per device
 * and stream, named once; an arrow ("f", bound to the enclosing slice) from the launch. */
enum { GPU_TRACKS = 256 };
static uint64_t gpu_tracks[GPU_TRACKS]; /* device << 32 | stream, + 1; under gpu.c's lock */

static void gpu_track_name(uint32_t device, uint32_t stream)
{
    uint64_t key = ((uint64_t)device << 32 | stream) + 1;
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 56) % GPU_TRACKS, k;
    for (k = 0; k < GPU_TRACKS && gpu_tracks[i] && gpu_tracks[i] != key; k++)
        i = (i + 1) % GPU_TRACKS;
    if (k == GPU_TRACKS || gpu_tracks[i] == key) return; /* named, or too many to name */
    gpu_tracks[i] = key;
    prof_thread_t *t;
    char *p = nvtxcorr_prof_trace_reserve(&t, 256);
    if (p == NULL) return;
    size_t n = 0;
    PUT(",\n{\"ph\":\"M\",\"name\":\"thread_name\"");
    n += prof_fmt_gpu_where(p + n, device, stream);
    PUT("0,\"args\":{\"name\":\"GPU ");
    n += nvtxcorr_fmt_u64(p + n, device);
    PUT(" stream ");
    n += nvtxcorr_fmt_u64(p + n, stream);
    PUT("\"}}");
    nvtxcorr_prof_trace_commit(t, n);
}

static void trace_gpu(const prof_trace_op_t *op)
{
    if (op->site == NULL || !nvtxcorr_profile_tracing()) return;
    gpu_track_name(op->device, op->stream);
    /* Formatted here first and reserved at its length: the worst case (3,750 bytes, for names
     * escaped six bytes a character) would leave most of each page blank. */
    char p[PROF_TRACE_EVENT_MAX];
    prof_thread_t *t;
    size_t n = nvtxcorr_prof_trace_form()->gpu(p, op);
    char *room = nvtxcorr_prof_trace_reserve(&t, n);
    if (room == NULL) return;
    memcpy(room, p, n);
    nvtxcorr_prof_trace_commit(t, n);
}

void nvtxcorr_profile_graph_event(const char *text)
{
    if (!nvtxcorr_profile_tracing()) return;
    uint64_t now = prof_now();
    prof_thread_t *t;
    char *p = nvtxcorr_prof_trace_reserve(&t, 2048 + 128);
    if (p == NULL) return;
    size_t n = 0;
    PUT(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"graph\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 2048, text);
    p[n++] = '"';
    n += prof_fmt_where(p + n, t, now);
    p[n++] = '}';
    nvtxcorr_prof_trace_commit(t, n);
}

/* A window as a span named ProfilerStep#<index>, which HTA takes as an iteration: it finds the
 * steps by that name (hta/common/trace.py, add_iteration: names starting "ProfilerStep", the
 * number from "ProfilerStep\s*#\s*(\d+)"), gives a CPU event the step whose [ts, ts + dur)
 * holds its ts and a GPU event its launch's, by correlation; with more than one step it keeps
 * the last one's kernels only if asked (TraceAnalysis(include_last_profiler_step=True)).
 * PyTorch writes its steps with cat "user_annotation", as here. The track (the window helper's
 * thread, or the exiting one's for the window still open at exit) is named once. */
void nvtxcorr_prof_trace_window(unsigned index, const char *reason, uint64_t start_ticks,
                                uint64_t end_ticks)
{
    static unsigned named_tid;
    if (!nvtxcorr_profile_tracing()) return;
    prof_thread_t *t;
    char *p = nvtxcorr_prof_trace_reserve(&t, 512);
    if (p == NULL) return;
    size_t n = 0;
    if (named_tid != t->tid) {
        named_tid = t->tid;
        PUT(",\n{\"ph\":\"M\",\"name\":\"thread_name\"");
        n += prof_fmt_where(p + n, t, start_ticks);
        PUT(",\"args\":{\"name\":\"nvtxcorr windows\"}}");
    }
    PUT(",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#");
    n += nvtxcorr_fmt_u64(p + n, index);
    p[n++] = '"';
    n += prof_fmt_where(p + n, t, start_ticks);
    PUT(",\"dur\":");
    n += prof_fmt_us(p + n, end_ticks > start_ticks ? prof_ticks_ns(end_ticks - start_ticks) : 0);
    PUT(",\"args\":{\"window\":");
    n += nvtxcorr_fmt_u64(p + n, index);
    PUT(",\"reason\":\"");
    n += nvtxcorr_fmt_json(p + n, 64, reason);
    PUT("\"}}");
    nvtxcorr_prof_trace_commit(t, n);
}

int nvtxcorr_prof_trace_init(void)
{
    if (nvtxcorr_prof_trace_file_open() != 0) return -1;
    nvtxcorr_prof_stats_on_trace(nvtxcorr_prof_trace_prefix, nvtxcorr_prof_trace_flush_own);
    nvtxcorr_prof_gpu_on_trace(trace_gpu);
    return 0;
}

void nvtxcorr_prof_trace_finish(int from_signal)
{
    if (!nvtxcorr_prof_trace_file_stop()) return;
    /* The launches the writer thread has yet to format, into its buffer (written below). */
    nvtxcorr_prof_trace_writer_drain();
    nvtxcorr_prof_trace_file_close(from_signal);
}

void nvtxcorr_prof_trace_after_fork(void)
{
    nvtxcorr_prof_trace_file_after_fork();
    nvtxcorr_prof_trace_writer_after_fork();
    nvtxcorr_prof_trace_file_resume();
}
