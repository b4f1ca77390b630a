/* What windows (NVTXCORR_WINDOW, lifecycle/window.c) are as counts (windows.c): the state
 * the summary, the GPU aggregator and the CUPTI adapter read. */
#ifndef NVTXCORR_PROF_WINDOWS_H
#define NVTXCORR_PROF_WINDOWS_H

#include <stdatomic.h>
#include <stdint.h>
#include "profile/base/histogram.h"
/* A window's counts are the difference of two cuts of every site's records: the cut when it
 * closed minus the one before (summary.c reads through prof_snap_t while a window's summary is
 * written). Between windows launches are not recorded at all (NVTXCORR_MODE_PROFILE_IDLE). */
typedef struct prof_snap {
    uint64_t launches, errors, capture, total, min, max;
    uint64_t hist[PROF_BUCKETS];
} prof_snap_t;
typedef struct prof_window {
    unsigned index; /* 1-based */
    const char *reason;
    uint64_t start_ns, end_ns;
} prof_window_t;
/* While a window's summary is written: the window, and the cuts it is the difference of
 * (base NULL: the first window, from zero). NULL otherwise. */
extern const prof_window_t *nvtxcorr_prof_window_now;
extern const prof_snap_t *nvtxcorr_prof_snap_cur, *nvtxcorr_prof_snap_base;
extern uint64_t nvtxcorr_prof_window_own_base;
/* The index of the last window opened (1-based; 0: none yet). A launch in profile mode with
 * windows is in that window. */
extern _Atomic unsigned nvtxcorr_prof_windows_opened;
int nvtxcorr_prof_windows(void); /* NVTXCORR_WINDOW is on */

#endif
