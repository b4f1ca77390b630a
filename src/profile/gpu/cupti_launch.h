/* CUPTI's launch side (cupti_launch.c): each launch's id, tied to CUPTI's correlation id by the
 * launch callbacks or pushed as an external correlation id, and the graph node callbacks. */
#ifndef NVTXCORR_PROF_CUPTI_LAUNCH_H
#define NVTXCORR_PROF_CUPTI_LAUNCH_H

#ifdef NVTXCORR_HAVE_CUPTI
/* At CUPTI's start, before the first id is made: whether ids carry their launch's window. */
void nvtxcorr_prof_cupti_ids_start(void);
/* On the CUPTI thread, before the activity kinds of correlation are enabled: the one
 * subscriber, and how kernels are tied to launches in this process; returns 1 for the launch
 * callbacks, 0 for external correlation. */
int nvtxcorr_prof_cupti_correlate(void);
/* External correlation's API records for the launch entry points alone: returns whether they
 * are enabled so (else every call's records are wanted). */
int nvtxcorr_prof_cupti_launch_api_records(void);
#endif

#endif
