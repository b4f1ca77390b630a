/* GPU time's adapter (cupti.c and its cupti_*.c): CUPTI, loaded at run time, started at the
 * first launch, its launch callbacks or external ids around each launch, and its flushes. */
#ifndef NVTXCORR_PROF_CUPTI_H
#define NVTXCORR_PROF_CUPTI_H

#include <stdint.h>
#include "core/fork.h"
#include "profile/counting/launch.h"
/* Why there is no (or only partial) GPU time, NULL when nothing is to be said; cupti_note.c
 * owns it. set_partial: the first reason given stands (async-signal-safe). */
const char *nvtxcorr_prof_gpu_note(void);
void nvtxcorr_prof_gpu_set_partial(const char *why);
void nvtxcorr_prof_gpu_start(void);
void nvtxcorr_prof_gpu_after_fork(void);
void nvtxcorr_prof_gpu_first_launch(void);
/* Around a launch's real call: its id made (site PROF_NO_LABEL: a launch whose work is not
 * counted, a captured one) and handed to CUPTI's launch callbacks, or pushed as an external
 * correlation id (NVTXCORR_GPU_CORRELATION=external); then taken back. */
void nvtxcorr_prof_gpu_push(nvtxcorr_profile_launch_t *pl, uint32_t site);
void nvtxcorr_prof_gpu_pop(nvtxcorr_profile_launch_t *pl);
/* How this process ties kernels to launches: "callbacks" or "external" (the summary's
 * gpu_correlation), NULL before CUPTI started. */
const char *nvtxcorr_prof_gpu_correlation_mode(void);
/* Before the summary's GPU note is written: adds the launches whose push failed, if any. */
void nvtxcorr_prof_gpu_note_failures(void);
void nvtxcorr_prof_gpu_flush(int from_signal);
/* A CUPTI call did not return within its bound (the start or the exit flush): the records
 * CUPTI still holds are given up, and the summary is written without waiting for them. */
int nvtxcorr_prof_gpu_abandoned(void);
void nvtxcorr_prof_cupti_fork(nvtxcorr_fork_t phase); /* the spare buffers' lock */
/* Called once CUPTI has started (libcupti just loaded): the exit registers its flush then
 * (lifecycle/exit.c), so that it runs while libcupti is intact. */
void nvtxcorr_prof_cupti_on_start(void (*fn)(void));

#endif
