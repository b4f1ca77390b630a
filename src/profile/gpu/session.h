/* GPU time's session (session.c): whether CUPTI collects, its clock, and the window flush:
 * what the adapter (cupti*.c) sets and the aggregator (gpu.c) reads, so that calls go adapter ->
 * aggregator only. */
#ifndef NVTXCORR_PROF_GPU_SESSION_H
#define NVTXCORR_PROF_GPU_SESSION_H
#include "core/attributes.h"
#include <stdatomic.h>
#include <stdint.h>
/* PROF_GPU_AT_NEXT_LAUNCH: CUPTI still to start (at the first launch), or off in a forked
 * child that has not yet said so (its first launch warns). Set to PROF_GPU_COLLECTING by the
 * thread that started CUPTI, after everything the push needs is in place. */
typedef enum { PROF_GPU_OFF, PROF_GPU_COLLECTING, PROF_GPU_AT_NEXT_LAUNCH } prof_gpu_state_t;
extern _Atomic prof_gpu_state_t nvtxcorr_prof_gpu_on;
/* A CUPTI timestamp on the trace's clock; the adapter sets the offset when CUPTI keeps its own
 * clock (CUPTI time - trace time, mod 2^64). */
uint64_t nvtxcorr_prof_gpu_trace_ns(uint64_t cupti_ns);
void nvtxcorr_prof_gpu_set_clock_offset(uint64_t offset);
/* The exit's flush has begun: no launch pushes an id any more. Inline: a launch's push reads
 * it (relaxed, as the launch path reads every flag it does not synchronise with). */
extern _Atomic int nvtxcorr_prof_gpu_closed NVTXCORR_HIDDEN;
static inline int nvtxcorr_prof_gpu_closing(void)
{
    return atomic_load(&nvtxcorr_prof_gpu_closed);
}
static inline int nvtxcorr_prof_gpu_closing_relaxed(void)
{
    return atomic_load_explicit(&nvtxcorr_prof_gpu_closed, memory_order_relaxed);
}
void nvtxcorr_prof_gpu_close(void);
/* On the window helper: CUPTI's completed records delivered, waited for a bounded time; 0 when
 * they were, -1 without CUPTI. The adapter registers how, once CUPTI has started. */
int nvtxcorr_prof_gpu_flush_window(void);
void nvtxcorr_prof_gpu_on_flush_window(int (*fn)(void));

#endif
