/* The program's signal handlers, as nvtxcorr stands in for some (sigaction.c). */
#ifndef NVTXCORR_PROF_SIGACTION_H
#define NVTXCORR_PROF_SIGACTION_H

/* The real sigaction (never ours), and the signals whose SIG_DFL `handler`
 * stands in for (the program is told SIG_DFL wherever it is installed). */
struct sigaction;
int nvtxcorr_prof_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
void nvtxcorr_prof_stand_in(unsigned signals, void (*handler)(int));
/* A window signal's handler (window.c), reported as SIG_DFL to the program. */
void nvtxcorr_prof_stand_in_toggle(int sig, void (*handler)(int));

#endif
