/* The trace's part of the launch path (trace.c), for the front door (profile.h). */
#ifndef NVTXCORR_PROF_TRACE_API_H
#define NVTXCORR_PROF_TRACE_API_H
#include "profile/counting/launch.h"
/* `api`: the entry point called (cuLaunchKernel, cudaGraphLaunch, ...), a string literal. */
void nvtxcorr_profile_trace(const nvtxcorr_profile_launch_t *pl, const char *api, unsigned gx,
                            unsigned gy, unsigned gz);

#endif
