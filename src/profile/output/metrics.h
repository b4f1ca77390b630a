/* Profile mode's fleet metrics (metrics.c): NVTXCORR_METRICS, a Prometheus text-format file for
 * node_exporter's textfile collector, rewritten whole (temporary file + rename) at every window
 * close and at exit, with counters that only grow over the process's life. docs/profile.md,
 * "Fleet metrics". Everything here may run in a signal handler (the exit's). */
#ifndef NVTXCORR_PROF_METRICS_H
#define NVTXCORR_PROF_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Labels with a series of their own: the first PROF_METRICS_LABELS the process makes (label
 * ids below it); later ones count under "[other]", so the series never move and every counter
 * only grows. */
enum { PROF_METRICS_LABELS = 100 };

/* window.c, on the window helper (or the exiting thread) while window `index`'s summary is
 * being written (its cut and its GPU set in place): the window's GPU time added to the run's,
 * and the file rewritten. */
void nvtxcorr_prof_metrics_window(int at_exit);
/* exit.c, after the summary: the file as of the exit, unless the exit's window wrote it. */
void nvtxcorr_prof_metrics_exit(void);
/* At start-up and in a forked child: nothing counted yet. */
void nvtxcorr_prof_metrics_reset(void);

/* Pure pieces: a Prometheus label value (backslash, double quote and
 * newline escaped; other control characters and bytes that are not UTF-8 made '?') into buf,
 * NUL-terminated, cut at a character to fit size; its length. And ns as seconds, exactly
 * ("1.500000000"). */
size_t nvtxcorr_prom_label_value(char *buf, size_t size, const char *s);
size_t nvtxcorr_prom_seconds(char *buf, uint64_t ns);

#endif
