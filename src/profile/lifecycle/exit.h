/* The process's end (exit.c): the summary and the trace written once, at exit, at a fatal
 * signal, at _exit. */
#ifndef NVTXCORR_PROF_EXIT_H
#define NVTXCORR_PROF_EXIT_H

void nvtxcorr_prof_exit_init(void);
/* At start-up and in a forked child: this process's facts, and nothing written yet. */
void nvtxcorr_prof_process_reset(void);

#endif
