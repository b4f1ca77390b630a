/* GPU time as the summary reports it (summary.h): gpu.c aggregates it; here it is read for the
 * rows, by label and by kernel, with percentiles. */
#include "profile/base/histogram.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/gpu/gpu.h"
#include "profile/gpu/session.h"
#include "summary.h"
int nvtxcorr_prof_gpu_reported(void)
{
    return nvtxcorr_prof_gpu_on == PROF_GPU_COLLECTING && nvtxcorr_prof_gpu.by_kernel != NULL;
}

/* The GPU counts a summary reads: a window's set while its summary is written (gpu.c), else
 * the whole run's. */
const prof_gpu_t *nvtxcorr_prof_gpu_view(void)
{
    return nvtxcorr_prof_gpu_out ? nvtxcorr_prof_gpu_out : &nvtxcorr_prof_gpu;
}

static void merge(prof_gpu_stat_t *a, const prof_gpu_stat_t *b)
{
    if (b->n == 0) return;
    if (a->n == 0 || b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
    a->n += b->n;
    a->ns += b->ns;
}

static void percentiles(prof_gpu_stat_t *s, const uint64_t *hist)
{
    s->hist = hist;
    s->p50 = hist ? nvtxcorr_prof_percentile(hist, s->n, s->min, s->max, 500) : 0;
    s->p99 = hist ? nvtxcorr_prof_percentile(hist, s->n, s->min, s->max, 990) : 0;
}

/* The label's sites merged; its histogram is a static scratch, valid until the next call. */
void nvtxcorr_prof_gpu_label_stat(const prof_label_t *l, uint32_t nsites, int by_kernel,
                                  prof_gpu_stat_t *st)
{
    static uint64_t hist[PROF_BUCKETS];
    int whole = 1;
    memset(st, 0, sizeof *st);
    if (!nvtxcorr_prof_gpu_reported()) return;
    const prof_gpu_stat_t *v =
        by_kernel ? nvtxcorr_prof_gpu_view()->by_kernel : nvtxcorr_prof_gpu_view()->by_launch;
    uint64_t *const *hists =
        by_kernel ? nvtxcorr_prof_gpu_view()->kernel_hist : nvtxcorr_prof_gpu_view()->launch_hist;
    memset(hist, 0, sizeof hist);
    for (const nvtxcorr_profile_site_t *s = atomic_load_explicit(&l->first, memory_order_acquire);
         s; s = atomic_load_explicit(&s->next_in_label, memory_order_relaxed)) {
        if (s->id >= nsites || v[s->id].n == 0) continue;
        merge(st, &v[s->id]);
        if (hists[s->id] == NULL) whole = 0;
        for (unsigned b = 0; whole && b < PROF_BUCKETS; b++)
            hist[b] += hists[s->id][b];
    }
    percentiles(st, whole ? hist : NULL);
}

void nvtxcorr_prof_gpu_site_stat(uint32_t id, prof_gpu_stat_t *st)
{
    memset(st, 0, sizeof *st);
    if (!nvtxcorr_prof_gpu_reported()) return;
    *st = nvtxcorr_prof_gpu_view()->by_kernel[id];
    percentiles(st, nvtxcorr_prof_gpu_view()->kernel_hist[id]);
}

/* Sites whose rule says "-": their kernels' time (by kernel) or the time their launches
 * caused (by launch) is in no label of that view. */
