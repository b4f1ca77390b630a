/* GPU time's aggregator (gpu.c): CUPTI's records, as the adapter (cupti.c) hands them over,
 * counted by launch, by kernel, by context and by graph replay, for the summary and the trace. */
#ifndef NVTXCORR_PROF_GPU_H
#define NVTXCORR_PROF_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "core/fork.h"
#include "profile/base/histogram.h"
#include "profile/counting/launch.h"
typedef struct prof_gpu_stat {
    uint64_t n, ns, min, max; /* operations (kernel executions), their total, extremes */
    /* Set for output only (nvtxcorr_prof_gpu_label_stat, _site_stat): the durations'
     * histogram (NULL when one of its sites could not get one) and its percentiles. */
    const uint64_t *hist;
    uint64_t p50, p99;
} prof_gpu_stat_t;
typedef struct prof_gpu_replays { /* one graph launch site: each replay's summed GPU time */
    prof_gpu_stat_t time;
    uint64_t ops;
    uint64_t hist[PROF_BUCKETS];
} prof_gpu_replays_t;
typedef struct prof_gpu {
    prof_gpu_stat_t *by_launch, *by_kernel; /* [PROF_MAX_SITES], by site id */
    prof_gpu_replays_t **replays;           /* [PROF_MAX_SITES], graph launch sites */
    uint64_t **launch_hist, **kernel_hist;  /* [PROF_MAX_SITES] of [PROF_BUCKETS] or NULL */
    uint64_t records, ops, ns, dropped, uncorrelated, uncorrelated_ns, incomplete;
    uint64_t not_hooked, not_hooked_ns; /* work of launches no hook saw ([not hooked]) */
} prof_gpu_t;
extern prof_gpu_t nvtxcorr_prof_gpu;
int nvtxcorr_prof_gpu_init(void);
void nvtxcorr_prof_gpu_fork(nvtxcorr_fork_t phase); /* the record lock */
/* The site of "[not hooked]": the launch label of work whose launch only CUPTI saw (the
 * adapter makes it before the callbacks start; the aggregator counts it in not_hooked). */
extern uint32_t nvtxcorr_prof_not_hooked_site;
/* gpu.c's input, from cupti.c's records: a buffer's correlations and operations, between
 * begin_buffer and end_buffer. */
typedef enum { PROF_GPU_KERNEL, PROF_GPU_MEMCPY, PROF_GPU_MEMSET } prof_gpu_op_kind_t;
/* What CUPTI's record says of an operation besides its time, kept for the trace's GPU events
 * (Kineto writes them: "grid", "block", "graph id", "graph node id"). In a graph replay
 * graph_node_id is the *executable* graph's node (CUPTI's graphNodeId). */
typedef struct prof_gpu_shape {
    uint32_t grid[3], block[3]; /* a kernel's; 0 for a memcpy or memset */
    uint32_t graph_id;          /* CUPTI's graphId: 0 outside a graph replay */
    uint64_t graph_node_id;
} prof_gpu_shape_t;
typedef struct prof_gpu_op {
    prof_gpu_op_kind_t kind;
    const char *name; /* a kernel's, as CUPTI gives it (NULL: unknown) */
    uint32_t corr, device, stream;
    uint64_t start, end;
    prof_gpu_shape_t shape; /* shape.graph_id != 0: a node of a graph replay */
} prof_gpu_op_t;
void nvtxcorr_prof_gpu_begin_buffer(size_t dropped);
/* CUPTI's correlation id corr is the launch whose id is ext. From CUPTI's launch callbacks,
 * on the launching thread, or from an external correlation record, in a buffer. */
void nvtxcorr_prof_gpu_correlation(uint32_t corr, uint64_t ext);
void nvtxcorr_prof_gpu_operation(const prof_gpu_op_t *op);
void nvtxcorr_prof_gpu_end_buffer(void);
int nvtxcorr_prof_gpu_finish(int from_signal); /* returns whether it holds the lock */
void nvtxcorr_prof_gpu_finished(int locked);
int nvtxcorr_prof_gpu_held_here(void); /* this thread holds the lock of gpu.c */
/* Windows (gpu.c): a window's GPU work settled and read (nvtxcorr_prof_gpu_out), then its
 * set emptied;. */
extern const prof_gpu_t *nvtxcorr_prof_gpu_out;
void nvtxcorr_prof_gpu_window_settle(unsigned index, int at_exit);
void nvtxcorr_prof_gpu_window_done(unsigned index);
const char *nvtxcorr_prof_gpu_window_note(void);
/* For the trace (output/trace.c): one GPU operation on its device/stream track, with the arrow from
 * its launch and its program context (args "context", when not []). */
typedef struct prof_trace_op {
    const nvtxcorr_profile_site_t *site;   /* its own site (a kernel's, "[memcpy]", "[memset]") */
    const nvtxcorr_profile_site_t *launch; /* its launch's site, or NULL when unknown */
    uint32_t device, stream;
    uint64_t start_ns, dur_ns; /* on the trace's clock */
    uint64_t ext;              /* the launch's external correlation id, or 0 */
    const prof_gpu_shape_t *shape;
    uint32_t ctx; /* its program context (context_stats.c); 0: [] */
} prof_trace_op_t;
/* The trace's taker of GPU operations, registered as it starts (the aggregator never calls up
 * into output). */
void nvtxcorr_prof_gpu_on_trace(void (*fn)(const prof_trace_op_t *op));

#endif
