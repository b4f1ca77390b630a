/* GPU time's session (session.h): the state both the adapter (cupti*.c) and the aggregator
 * (gpu.c) read. */
#include <stdatomic.h>
#include <stddef.h>
#include "session.h"
_Atomic prof_gpu_state_t nvtxcorr_prof_gpu_on;
static uint64_t ts_offset; /* CUPTI time - trace time (mod 2^64), when CUPTI keeps its own clock */
_Atomic int nvtxcorr_prof_gpu_closed;
static int (*_Atomic flush_window)(void);

void nvtxcorr_prof_gpu_set_clock_offset(uint64_t offset)
{
    ts_offset = offset;
}

uint64_t nvtxcorr_prof_gpu_trace_ns(uint64_t cupti_ns)
{
    /* Modulo 2^64, so an offset that wrapped (CUPTI's clock behind ours) still subtracts
     * right; a time before the trace's origin comes out 0. */
    uint64_t t = cupti_ns - ts_offset;
    return t < (UINT64_C(1) << 63) ? t : 0;
}

void nvtxcorr_prof_gpu_close(void)
{
    atomic_store(&nvtxcorr_prof_gpu_closed, 1);
}

void nvtxcorr_prof_gpu_on_flush_window(int (*fn)(void))
{
    atomic_store_explicit(&flush_window, fn, memory_order_release);
}

int nvtxcorr_prof_gpu_flush_window(void)
{
    int (*fn)(void) = atomic_load_explicit(&flush_window, memory_order_acquire);
    return fn ? fn() : -1;
}
