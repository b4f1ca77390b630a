/* The duration histogram (histogram.c): fixed size, log scale. */
#ifndef NVTXCORR_PROF_HISTOGRAM_H
#define NVTXCORR_PROF_HISTOGRAM_H

#include <stdint.h>

/* Values below 8 ns have a bucket each; above, every power of two is split into 4 equal
 * buckets (relative width at most 25%), up to 2^40 ns (18 minutes); the last bucket holds
 * everything above. docs/profile.md gives the same edges: a merge is a sum of buckets. */
enum { PROF_EXACT = 8, PROF_SUB = 4, PROF_TOP_OCTAVE = 40 };
enum { PROF_BUCKETS = PROF_EXACT + PROF_SUB * (PROF_TOP_OCTAVE - 3) };

static inline unsigned prof_bucket(uint64_t ns)
{
    if (ns < PROF_EXACT) return (unsigned)ns;
    unsigned o = 63u - (unsigned)__builtin_clzll(ns); /* >= 3 */
    unsigned b = PROF_EXACT + (o - 3) * PROF_SUB + (unsigned)((ns >> (o - 2)) & 3);
    return b < PROF_BUCKETS ? b : PROF_BUCKETS - 1;
}
/* Lower edge of bucket b, in ns. */
uint64_t nvtxcorr_prof_bucket_low(unsigned b);

/* A percentile of a histogram of n values within [min, max] (histogram.c). */
uint64_t nvtxcorr_prof_percentile(const uint64_t *hist, uint64_t n, uint64_t min, uint64_t max,
                                  uint64_t per_mille);

#endif
