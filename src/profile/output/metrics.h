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

/* One series' counts: a label's (graph replays: a graph label's). */
typedef struct prof_metrics_series {
    uint64_t launches, cpu_ns, gpu_launch_ns, gpu_kernel_ns, replays;
} prof_metrics_series_t;
/* The run's counts as last gathered: series[k] is label id k's (k < nlabels; [other] holds the
 * labels past the bound); gpu: the GPU fields have values. */
typedef struct prof_metrics {
    const prof_metrics_series_t *series;
    uint32_t nlabels;
    int gpu;
    uint64_t dropped, uncorrelated;
    const char *command; /* the program's file name, short */
} prof_metrics_t;

/* window.c, on the window helper (or the exiting thread) while a window's summary is being
 * written (its cut and its GPU set in place): the window's GPU time added to the run's, the
 * counts gathered (nvtxcorr_prof_metrics_last) and the file rewritten. 0: neither
 * NVTXCORR_METRICS nor NVTXCORR_OTLP_ENDPOINT is on (or another writer is busy). */
int nvtxcorr_prof_metrics_window(int at_exit);
const prof_metrics_t *nvtxcorr_prof_metrics_last(void);
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
