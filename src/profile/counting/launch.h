/* A launch as profile mode counts it: what its front door (profile.h) fills in around the real
 * call, and what counting, GPU time and the trace read of it. */
#ifndef NVTXCORR_PROF_LAUNCH_H
#define NVTXCORR_PROF_LAUNCH_H

#include <stdint.h>

/* The kinds of launch handle, each with its own statistics map. */
typedef enum {
    NVTXCORR_PROFILE_FUNCTION, /* CUfunction / CUkernel */
    NVTXCORR_PROFILE_HOST,     /* runtime host stub */
    NVTXCORR_PROFILE_GRAPH     /* CUgraphExec */
} nvtxcorr_profile_kind_t;

typedef struct nvtxcorr_profile_site nvtxcorr_profile_site_t;

typedef struct nvtxcorr_profile_launch {
    nvtxcorr_profile_site_t *site; /* NULL only when out of memory: the launch is not counted */
    const void *stream;
    uint64_t start; /* clock ticks (clock.c) */
    uint64_t ns;    /* CPU time inside the real call, set by nvtxcorr_profile_end */
    uint64_t ext;   /* GPU time: the external correlation id pushed to CUPTI, or 0 */
    uint32_t ctx;   /* program context: the node open on the thread (src/context/), or 0 */
    int pushed, capturing;
    int result; /* the stub's path: the call's result, kept here across profile mode's end */
} nvtxcorr_profile_launch_t;

#endif
