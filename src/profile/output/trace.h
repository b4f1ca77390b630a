/* Between trace.c (the file, its pages and the per-thread buffers) and the two forms of its
 * events, trace_kineto.c and trace_chrome.c: each form is a table of formatters (head, a
 * site's constant part, a launch, a GPU operation, tail), none knowing the others or the
 * file. A form formats into memory trace.c gives it and returns the bytes written; trace.c
 * reserves, commits, writes and closes. The small formatters both forms use on the hot path
 * are here, inline (a call across files per field cost instructions per launch).
 *
 * An event that is neither a launch nor a GPU operation (an iteration's span, a marker) is
 * written by its own function with nvtxcorr_prof_trace_reserve and _commit: on the calling
 * thread's track, after the events it already wrote. */
#ifndef NVTXCORR_PROFILE_TRACE_H
#define NVTXCORR_PROFILE_TRACE_H

#include <string.h>
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/gpu/gpu.h"
typedef struct prof_trace_form {
    /* The file's start, up to where the first event goes (at most 512 bytes). */
    size_t (*head)(char *p);
    /* A site's constant part (at most 3,200 bytes), copied at the start of each launch. */
    size_t (*prefix)(char *p, const nvtxcorr_profile_site_t *s, const char *label,
                     const char *category);
    /* A launch's events after its site's prefix (at most 800 bytes). */
    size_t (*launch)(char *p, prof_thread_t *t, const nvtxcorr_profile_launch_t *pl,
                     const char *api, unsigned gx, unsigned gy, unsigned gz);
    /* A GPU operation's events (at most PROF_TRACE_EVENT_MAX bytes); its track is named
     * already. */
    size_t (*gpu)(char *p, const prof_trace_op_t *op);
    /* What follows the events at a normal close (at most `size` bytes). */
    size_t (*tail)(char *p, size_t size);
} prof_trace_form_t;

extern const prof_trace_form_t nvtxcorr_prof_trace_kineto, nvtxcorr_prof_trace_chrome;

/* Room for `need` more bytes (at most PROF_TRACE_EVENT_MAX) in the calling thread's buffer,
 * within one page, or NULL; then commit what was written there. */
char *nvtxcorr_prof_trace_reserve(prof_thread_t **out, size_t need);
void nvtxcorr_prof_trace_commit(prof_thread_t *t, size_t len);

/* The trace, to the rest of profile mode. */
int nvtxcorr_prof_trace_init(void);
/* A launch's events, formatted into the calling thread's buffer with `fmt`'s caches (the
 * launching thread's own block, or the shadow the writer keeps for it). */
void nvtxcorr_prof_trace_launch(prof_thread_t *fmt, const nvtxcorr_profile_launch_t *pl,
                                const char *api, unsigned gx, unsigned gy, unsigned gz);
void nvtxcorr_prof_trace_finish(int from_signal);
/* A window (NVTXCORR_WINDOW) as a ProfilerStep#<index> span on the calling thread's track,
 * from start to end (prof_now ticks). */
void nvtxcorr_prof_trace_window(unsigned index, const char *reason, uint64_t start_ticks,
                                uint64_t end_ticks);
void nvtxcorr_prof_trace_after_fork(void);
/* Trace mode: an instant event on the calling thread (graph instantiations and updates), the
 * core's graph event (registered by nvtxcorr_profile_init). */
int nvtxcorr_profile_tracing(void);
void nvtxcorr_profile_graph_event(const char *text);

#endif
