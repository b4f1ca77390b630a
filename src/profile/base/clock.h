/* Profile mode's clock (clock.c). */
#ifndef NVTXCORR_PROF_CLOCK_H
#define NVTXCORR_PROF_CLOCK_H

#include <stdint.h>

/* rdtsc where the CPU reports an invariant TSC and the kernel itself keeps time with it (so
 * it is synchronised across CPUs), calibrated against CLOCK_MONOTONIC at start-up;
 * otherwise clock_gettime(CLOCK_MONOTONIC), which the vDSO answers without a system call. */
typedef struct prof_clock {
    int tsc;
    uint64_t mult; /* ns = ticks * mult >> 32 */
    uint64_t origin;
} prof_clock_t;
extern prof_clock_t nvtxcorr_prof_clock;
void nvtxcorr_prof_clock_init(void);
uint64_t nvtxcorr_prof_now_slow(void);
static inline uint64_t prof_now(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(nvtxcorr_prof_clock.tsc, 1)) return __builtin_ia32_rdtsc();
#endif
    return nvtxcorr_prof_now_slow();
}
static inline uint64_t prof_ticks_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * nvtxcorr_prof_clock.mult) >> 32);
}
uint64_t nvtxcorr_prof_realtime_ns(void);

#endif
