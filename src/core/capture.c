/* Stream capture. A launch made while its stream captures is recorded into a graph and does
 * not run; NVTXCORR_CAPTURE decides what its range looks like (mark: " [capture]" suffix and
 * the "capture" category; skip: no range; plain: as any launch).
 *
 * Cheap by construction: the capture begin/end hooks count captures in progress, and a launch
 * asks the driver only while that count is non-zero. The answer is cached per thread and
 * stream until any capture begins or ends (a global generation number). The query is
 * cuStreamIsCapturing of the launch's own variant (_ptsz for per-thread launches, where
 * stream 0 is this thread's default stream); it is allowed in every capture mode and is not
 * itself captured. An error (the legacy stream during another stream's global capture)
 * counts as "not capturing": the launch then fails or proceeds exactly as without us. */
#include <stdatomic.h>
#include "capture.h"
#include "config.h"
#include "cuda_abi.h"
#include "cuda_calls.h"
#include "emit.h"
#include "routes.h"
#include "state.h"
static _Atomic unsigned generation = 1;

void nvtxcorr_capture_changed(int delta)
{
    /* Profile mode counts captured launches apart in every capture mode. */
    if (nvtxcorr_config.capture == NVTXCORR_CAPTURE_PLAIN && !nvtxcorr_profiling) return;
    atomic_fetch_add_explicit(&generation, 1, memory_order_acq_rel);
    if (delta > 0) {
        atomic_fetch_add_explicit(&nvtxcorr_captures_open, 1, memory_order_acq_rel);
    } else {
        unsigned open = atomic_load_explicit(&nvtxcorr_captures_open, memory_order_acquire);
        while (open > 0 && !atomic_compare_exchange_weak(&nvtxcorr_captures_open, &open, open - 1))
            ;
    }
    nvtxcorr_routes_refresh(); /* the entry stubs send launches to the C body while one is open */
}

typedef CUresult (*is_capturing_fn)(CUstream, CUstreamCaptureStatus *);

static int stream_capturing(const void *stream, int ptsz)
{
    is_capturing_fn fn = (is_capturing_fn)nvtxcorr_cuda_fn(
        ptsz ? NVTXCORR_CUDA_cuStreamIsCapturing_ptsz : NVTXCORR_CUDA_cuStreamIsCapturing);
    if (fn == NULL) return 0;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return fn((CUstream)stream, &status) == CUDA_SUCCESS &&
           status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

int nvtxcorr_capture_active(const void *stream, int ptsz)
{
    unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
    nvtxcorr_thread_t *t = &nvtxcorr_thread;
    int capturing = -1;
    for (int i = 0; i < NVTXCORR_CAPTURE_CACHE; i++) {
        nvtxcorr_capture_entry_t *e = &t->capture[i];
        if (e->generation == gen && e->stream == stream && e->ptsz == ptsz) {
            capturing = e->capturing;
            break;
        }
    }
    if (capturing < 0) {
        capturing = stream_capturing(stream, ptsz);
        nvtxcorr_capture_entry_t *e = &t->capture[t->capture_next++ % NVTXCORR_CAPTURE_CACHE];
        *e = (nvtxcorr_capture_entry_t){stream, gen, (unsigned char)ptsz, (unsigned char)capturing};
    }
    return capturing;
}

const nvtxcorr_label_t *nvtxcorr_capture_adjust(const nvtxcorr_label_t *l, const void *stream,
                                                int ptsz)
{
    if (nvtxcorr_config.capture == NVTXCORR_CAPTURE_PLAIN || !nvtxcorr_capture_active(stream, ptsz))
        return l;
    if (nvtxcorr_config.capture == NVTXCORR_CAPTURE_SKIP) return NULL;
    return nvtxcorr_label_capture_variant(l);
}
