/* Private to the summary: the walk (summary.c) and what it reads of the library (site
 * records, GPU time as reported, the files). The writers' interface is summary_writer.h. */
#ifndef NVTXCORR_PROFILE_SUMMARY_H
#define NVTXCORR_PROFILE_SUMMARY_H
#include "profile/base/out.h"
#include "profile/counting/context_stats.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/counting/windows.h"
#include "profile/gpu/gpu.h"
#include "summary_writer.h"

/* summary_context.c: program context's rows as the text tree reads them, or NULL. */
const prof_ctx_view_t *nvtxcorr_prof_ctx_view(const prof_summary_t *s);
/* The summary at exit (the process's path), and to `path` (a window's). */
void nvtxcorr_prof_summary_write(void);
void nvtxcorr_prof_summary_write_to(const char *path);
/* Site s's records now, summed over threads (spills included). */
void nvtxcorr_prof_site_read(const nvtxcorr_profile_site_t *s, prof_snap_t *out);
/* GPU time as the summary reports it. */
int nvtxcorr_prof_gpu_reported(void); /* GPU time is in this summary */
void nvtxcorr_prof_gpu_label_stat(const prof_label_t *l, uint32_t nsites, int by_kernel,
                                  prof_gpu_stat_t *out);
/* A site's own GPU operations (the by-kernel view), percentiles included. */
void nvtxcorr_prof_gpu_site_stat(uint32_t id, prof_gpu_stat_t *out);

/* The aggregator's view the summary reads: the window's while a window's summary is written
 * (summary_gpu.c). */
const prof_gpu_t *nvtxcorr_prof_gpu_view(void);
/* summary_file.c: the path of window `index`'s summary (%w, or ".<index>" before the
 * extension); a temporary file beside path, open for writing (its name in tmp), or -1; and
 * tmp published as path (0, or the errno). */
const char *nvtxcorr_prof_window_path(const char *path, unsigned index);
int nvtxcorr_prof_temp_beside(const char *path, char *tmp, size_t size);
int nvtxcorr_prof_publish(const char *tmp, const char *path);

#endif
