/* CUPTI's activity buffers (cupti_buffers.c): lent to CUPTI, their records handed to gpu.c as
 * they complete, kept or freed when given back, and the flush generations they were lent in. */
#ifndef NVTXCORR_PROF_CUPTI_BUFFERS_H
#define NVTXCORR_PROF_CUPTI_BUFFERS_H

#ifdef NVTXCORR_HAVE_CUPTI
#include <cupti.h>

/* CUPTI started in this process: buffers are lent here, never in a forked child. */
void nvtxcorr_prof_cupti_buffers_start(void);
/* cuptiActivityRegisterCallbacks with the buffers' request and completion callbacks. */
CUptiResult nvtxcorr_prof_cupti_register_buffers(void);
/* Starts a flush generation; returns it. */
unsigned nvtxcorr_prof_cupti_next_generation(void);
/* Whether a buffer lent in generation <= g is still out. */
int nvtxcorr_prof_cupti_lent_before(unsigned g);
#endif

#endif
