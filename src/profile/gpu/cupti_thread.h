/* The CUPTI thread (cupti_thread.c): CUPTI's enable and every flush, off the program's threads,
 * each waited for a bounded time. */
#ifndef NVTXCORR_PROF_CUPTI_THREAD_H
#define NVTXCORR_PROF_CUPTI_THREAD_H

#ifdef NVTXCORR_HAVE_CUPTI
/* Once libcupti is loaded (cupti.c): the thread started and CUPTI enabled there; 0, or -1
 * with why (a string that stays) in *why. */
int nvtxcorr_prof_cupti_thread_start(const char **why);
#endif

#endif
