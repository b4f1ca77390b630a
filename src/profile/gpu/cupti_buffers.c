/* CUPTI's activity buffers (cupti_buffers.h): lent to CUPTI on request, their records handed to
 * gpu.c in its neutral form as each buffer completes, then kept for the next request or freed.
 *
 * A few given-back buffers are kept for the next request: a fresh 1 MiB buffer is an mmap,
 * 256 page faults and an munmap, a few hundred ns per launch at high launch rates.
 *
 * Every buffer handed to CUPTI is listed in `lent`, with the flush generation it was lent in:
 * - only a listed buffer is reused or freed, so a buffer of another CUPTI client that reaches
 *   our completion callback (it registered before us) is read but never taken;
 * - at most LENT_MAX are out at once (64 MiB): past that CUPTI gets no buffer and drops
 *   records, which the summary reports, rather than memory growing without bound;
 * - the exit flush waits only for buffers lent before it began, so other threads' API calls
 *   during exit do not keep it waiting. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/fork.h"
#include "core/state.h"
#include "cupti.h"
#include "cupti_buffers.h"
#include "cupti_load.h"
#include "gpu.h"
#include "profile/base/pages.h"
#include "profile/counting/stats.h"
#ifdef NVTXCORR_HAVE_CUPTI
enum { BUFFER_BYTES = 1 << 20 };
enum { SPARE_BUFFERS = 4, LENT_MAX = 64 };
static uint8_t *spare[SPARE_BUFFERS];
static struct {
    uint8_t *buffer;
    unsigned generation;
} lent[LENT_MAX];
static unsigned generation; /* under spare_lock */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
/* The process CUPTI was started in: a forked child lends nothing. Atomic: CUPTI may ask for a
 * buffer on any thread, with nothing between the start's store and that thread's load. */
static _Atomic pid_t cupti_pid;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint64_t own = prof_own_enter();
    uint8_t *b = NULL, *fresh = NULL;
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    if (getpid() != atomic_load_explicit(&cupti_pid, memory_order_relaxed))
        return;              /* CUPTI's state survived a fork: give it nothing */
    nvtxcorr_thread.depth++; /* our locks are held: an exit() on this thread must not wait */
    pthread_mutex_lock(&spare_lock);
    int slot = -1;
    for (int i = 0; i < LENT_MAX && slot < 0; i++)
        if (lent[i].buffer == NULL) slot = i;
    for (int i = 0; i < SPARE_BUFFERS && b == NULL && slot >= 0; i++)
        if (spare[i]) b = spare[i], spare[i] = NULL;
    if (b == NULL && slot >= 0) fresh = b = nvtxcorr_prof_zalloc(BUFFER_BYTES);
    if (b) lent[slot].buffer = b, lent[slot].generation = generation;
    pthread_mutex_unlock(&spare_lock);
    /* A fresh buffer's pages are touched here, while nvtxcorr's own time is counted, rather
     * than by CUPTI's writes into it inside later launch calls (256 page faults per buffer). */
    if (fresh) memset(fresh, 0, BUFFER_BYTES);
    nvtxcorr_thread.depth--;
    *buffer = b;
    *size = b ? BUFFER_BYTES : 0;
    prof_own_leave(own);
}

/* Takes a completed buffer back, if it is ours, and keeps or frees it. Another client's is
 * left alone. */
static void give_back(uint8_t *b)
{
    int ours = 0;
    pthread_mutex_lock(&spare_lock);
    for (int i = 0; i < LENT_MAX && !ours; i++)
        if (lent[i].buffer == b) lent[i].buffer = NULL, ours = 1;
    for (int i = 0; i < SPARE_BUFFERS && b && ours; i++)
        if (spare[i] == NULL) spare[i] = b, b = NULL;
    pthread_mutex_unlock(&spare_lock);
    if (ours && b) munmap(b, BUFFER_BYTES);
}

unsigned nvtxcorr_prof_cupti_next_generation(void)
{
    pthread_mutex_lock(&spare_lock);
    unsigned g = generation++;
    pthread_mutex_unlock(&spare_lock);
    return g;
}

int nvtxcorr_prof_cupti_lent_before(unsigned g)
{
    int out = 0;
    pthread_mutex_lock(&spare_lock);
    for (int i = 0; i < LENT_MAX && !out; i++)
        out = lent[i].buffer != NULL && (int)(lent[i].generation - g) <= 0;
    pthread_mutex_unlock(&spare_lock);
    return out;
}

/* One activity record, handed to gpu.c in its neutral form: a correlation, or an operation
 * (the record types are those of the CUPTI headers built against; CUPTI writes records of
 * the layout the client asked for by using those names). */
static void record(const CUpti_Activity *a)
{
    prof_gpu_op_t op;
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *e = (const void *)a;
        if (e->externalKind == NVTXCORR_CUPTI_EXTERNAL_KIND)
            nvtxcorr_prof_gpu_correlation(e->correlationId, e->externalId);
        return;
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)a;
        op = (prof_gpu_op_t){.kind = PROF_GPU_KERNEL,
                             .name = k->name,
                             .corr = k->correlationId,
                             .device = k->deviceId,
                             .stream = k->streamId,
                             .start = k->start,
                             .end = k->end};
        op.shape = (prof_gpu_shape_t){
            .grid = {(uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ},
            .block = {(uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ},
            .graph_id = k->graphId,
            .graph_node_id = k->graphNodeId};
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)a;
        op = (prof_gpu_op_t){.kind = PROF_GPU_MEMCPY,
                             .corr = m->correlationId,
                             .device = m->deviceId,
                             .stream = m->streamId,
                             .start = m->start,
                             .end = m->end};
        op.shape = (prof_gpu_shape_t){.graph_id = m->graphId, .graph_node_id = m->graphNodeId};
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)a;
        op = (prof_gpu_op_t){.kind = PROF_GPU_MEMSET,
                             .corr = m->correlationId,
                             .device = m->deviceId,
                             .stream = m->streamId,
                             .start = m->start,
                             .end = m->end};
        op.shape = (prof_gpu_shape_t){.graph_id = m->graphId, .graph_node_id = m->graphNodeId};
        break;
    }
    default:
        return;
    }
    nvtxcorr_prof_gpu_operation(&op);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)size;
    if (buffer == NULL) return;
    uint64_t own = prof_own_enter();
    nvtxcorr_thread.depth++; /* as in buffer_requested */
    size_t dropped = 0;
    if (nvtxcorr_prof_cupti_api.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) !=
        CUPTI_SUCCESS)
        dropped = 0;
    nvtxcorr_prof_gpu_begin_buffer(dropped);
    CUpti_Activity *rec = NULL;
    while (nvtxcorr_prof_cupti_api.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        record(rec);
    nvtxcorr_prof_gpu_end_buffer();
    give_back(buffer);
    prof_own_leave(own);
    nvtxcorr_thread.depth--;
}

CUptiResult nvtxcorr_prof_cupti_register_buffers(void)
{
    return nvtxcorr_prof_cupti_api.cuptiActivityRegisterCallbacks(buffer_requested,
                                                                  buffer_completed);
}

void nvtxcorr_prof_cupti_buffers_start(void)
{
    atomic_store_explicit(&cupti_pid, getpid(), memory_order_relaxed);
}
#endif

/* The fork step of the spare buffers' lock (its holders only move pointers). */
void nvtxcorr_prof_cupti_fork(nvtxcorr_fork_t phase)
{
#ifdef NVTXCORR_HAVE_CUPTI
    nvtxcorr_fork_mutex(&spare_lock, phase);
#else
    (void)phase;
#endif
}
