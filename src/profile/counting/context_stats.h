/* Program context's counts (context_stats.c; docs/profile.md, Context). */
#ifndef NVTXCORR_PROF_CONTEXT_STATS_H
#define NVTXCORR_PROF_CONTEXT_STATS_H
#include "core/attributes.h"
#include "core/fork.h"
#include "launch.h"
#include "stats.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

prof_ctx_cell_t *nvtxcorr_prof_ctx_cell_slow(prof_thread_t *t, uint32_t ctx, uint32_t site);
static inline prof_ctx_cell_t *nvtxcorr_prof_ctx_cell(prof_thread_t *t, uint32_t ctx, uint32_t site)
{
    prof_ctx_cell_t *c = t->ctx_last;
    uint64_t key = (uint64_t)ctx << 32 | (site + 1u);
    if (NVTXCORR_LIKELY(c != NULL) && atomic_load_explicit(&c->key, memory_order_relaxed) == key)
        return c;
    c = nvtxcorr_prof_ctx_cell_slow(t, ctx, site);
    t->ctx_last = c;
    return c;
}
/* gpu.c, under its lock: one operation of `ns` under (context, kernel site); a replayed one's
 * context (the launch's live path, the graph label, its node's capture path). */
/* Table 0: the whole run; 1 + (window & 1): a window's (gpu.c, windows). */
void nvtxcorr_prof_ctx_gpu(int table, uint32_t ctx, uint32_t site, uint64_t ns);
void nvtxcorr_prof_ctx_gpu_clear(unsigned window);
uint32_t nvtxcorr_prof_ctx_replayed(uint32_t live, const nvtxcorr_profile_site_t *graph,
                                    uint64_t node, int has_node, uint64_t ns);
/* cupti_launch.c: a graph node's capture context (CUPTI's node ids), passed on to its clones. */
void nvtxcorr_prof_ctx_node_set(uint64_t node, uint32_t ctx);
int nvtxcorr_prof_ctx_node_get(uint64_t node, uint32_t *ctx);
void nvtxcorr_prof_ctx_node_clone(uint64_t original, uint64_t clone);
void nvtxcorr_prof_ctx_node_unavailable(const char *why);
void nvtxcorr_prof_ctx_fork(nvtxcorr_fork_t phase);
/* The summary's rows: one per (context, label), the launches' CPU side and the operations'
 * GPU side; `sorted` orders them by path, then label. site_launches/_ns: each site's own
 * counts; what the threads' context tables lack of them (launches made before an NVTX
 * instance took the tool, or without one) are rows of context []. */
#define PROF_CTX_ROWS_MAX (1 << 17) /* rows beyond it are not counted */
typedef struct prof_ctx_row {
    uint32_t ctx, label, site;
    uint64_t launches, cpu_ns, gpu_kernels, gpu_ns;
} prof_ctx_row_t;
size_t nvtxcorr_prof_ctx_rows(const prof_ctx_row_t **rows, const uint32_t **sorted,
                              const uint64_t *site_launches, const uint64_t *site_ns,
                              uint32_t nsites);
const char *nvtxcorr_prof_ctx_row_label(const prof_ctx_row_t *r);
/* Why there is no context, or how many graph operations lack their node's: NULL when none. */
const char *nvtxcorr_prof_ctx_note(void);
/* Windows (window.c, on its helper): every thread's (context, site) counts now, kept; their
 * difference with the previous cut is the window's, which nvtxcorr_prof_ctx_rows reads
 * instead of the threads' tables while `use` is set, and window's GPU table (0: the run's). */
void nvtxcorr_prof_ctx_cut(void);
void nvtxcorr_prof_ctx_use_cut(int use, unsigned window);
void nvtxcorr_prof_ctx_set_note(const char *why);

#endif
