/* The histogram's edges and percentiles (the bucket of a value is prof_bucket, histogram.h):
 * pure functions of their arguments, shared by the summary's CPU and GPU columns and tested
 * on their own (tests/unit). */
#include "histogram.h"
uint64_t nvtxcorr_prof_bucket_low(unsigned b)
{
    if (b < PROF_EXACT) return b;
    unsigned o = 3 + (b - PROF_EXACT) / PROF_SUB, s = (b - PROF_EXACT) % PROF_SUB;
    return (1ull << o) + (uint64_t)s * (1ull << (o - 2));
}

/* A percentile from the histogram: the midpoint of the bucket that holds it, kept within the
 * record's exact min and max. */
uint64_t nvtxcorr_prof_percentile(const uint64_t *hist, uint64_t n, uint64_t min, uint64_t max,
                                  uint64_t per_mille)
{
    if (n == 0) return 0;
    uint64_t want = (n * per_mille + 999) / 1000, seen = 0;
    for (unsigned b = 0; b < PROF_BUCKETS; b++) {
        seen += hist[b];
        if (seen >= want && hist[b]) {
            uint64_t lo = nvtxcorr_prof_bucket_low(b);
            uint64_t hi = b + 1 < PROF_BUCKETS ? nvtxcorr_prof_bucket_low(b + 1) : max + 1;
            uint64_t v = b < PROF_EXACT ? lo : lo + (hi - lo) / 2;
            return v < min ? min : v > max ? max : v;
        }
    }
    return max;
}
