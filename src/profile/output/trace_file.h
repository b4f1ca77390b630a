/* The trace file and the per-thread buffers (trace_file.c), for the rest of the trace:
 * trace.c starts and closes it around the writer thread (trace_writer.c), which formats into
 * the buffers too. */
#ifndef NVTXCORR_PROF_TRACE_FILE_H
#define NVTXCORR_PROF_TRACE_FILE_H
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "trace.h"
/* The cap and form chosen, the file opened and recording on; -1 when it could not open. */
int nvtxcorr_prof_trace_file_open(void);
/* The form chosen at the start (kineto or chrome). */
const prof_trace_form_t *nvtxcorr_prof_trace_form(void);
/* A site's constant part, and a retired thread's buffer written out: the steps counting
 * takes (nvtxcorr_prof_stats_on_trace). */
void nvtxcorr_prof_trace_prefix(nvtxcorr_profile_site_t *s, const char *label,
                                const char *category);
void nvtxcorr_prof_trace_flush_own(prof_thread_t *t);
/* The close in two steps, the writer thread drained between them: recording stops (0: there
 * was nothing to stop), then every buffer is written and the file ended. */
int nvtxcorr_prof_trace_file_stop(void);
void nvtxcorr_prof_trace_file_close(int from_signal);
/* A forked child: the parent's file left alone, the state reset; then recording resumes (to
 * the child's own file, opened at its first write). */
void nvtxcorr_prof_trace_file_after_fork(void);
void nvtxcorr_prof_trace_file_resume(void);

#endif
