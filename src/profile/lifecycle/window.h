/* Windows (window.c; NVTXCORR_WINDOW): opened and closed by the program's markers, a signal
 * or a period, each closed window's summary written on a helper thread. */
#ifndef NVTXCORR_PROF_WINDOW_H
#define NVTXCORR_PROF_WINDOW_H

int nvtxcorr_prof_window_mode(int tool);
void nvtxcorr_prof_window_start(void);
void nvtxcorr_prof_window_exit(int from_signal);
void nvtxcorr_prof_window_after_fork(void);

/* The cuProfilerStart (start 1) and cuProfilerStop (0) hooks, after the real call. */
void nvtxcorr_profile_profiler_api(int start);

#endif
