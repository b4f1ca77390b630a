/* NVTXCORR_OTLP_ENDPOINT (otlp.c): the run's counters pushed to an OpenTelemetry collector,
 * OTLP/HTTP with JSON encoding and cumulative temporality, at every window close, from the
 * window helper only (never a hook, a signal handler or the exit). docs/profile.md, "Fleet
 * metrics". */
#ifndef NVTXCORR_PROF_OTLP_H
#define NVTXCORR_PROF_OTLP_H

/* window.c's helper, after nvtxcorr_prof_metrics_window gathered the counts: one POST, at most
 * about 2 s in all (connect, send, the answer; one retry inside that), a failure said once.
 * Returns at once when nvtxcorr_prof_otlp_abort was called. */
void nvtxcorr_prof_otlp_push(void);
/* The exit, before it waits for the helper: a push in progress gives up within 20 ms. */
void nvtxcorr_prof_otlp_abort(void);

#endif
