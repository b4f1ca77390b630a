/* The CUDA calls nvtxcorr makes for itself: naming kernels, asking whether a stream captures,
 * reading a graph's nodes, keeping the runtime's last error. They are one table
 * (NVTXCORR_CUDA_CALLS in cuda_calls.h), resolved here, each row once.
 *
 * Driver functions come from the real cuGetProcAddress_v2 (our hooks' slot, never our own
 * hook), asked for the row's ABI version and stream variant, exactly as cudart asks. Runtime
 * functions are found by name with nvtxcorr_find_real, which never returns one of ours.
 *
 * A row is remembered once its library answered, found or not: a driver older than 12.3 has
 * no cuFuncGetName, a runtime older than 12.3 no cudaFuncGetName, and asking again on every
 * first launch of a kernel would cost four symbol searches each (dladdr and dlopen under the
 * loader lock). While the library is not loaded yet (a program that dlopens libcuda or
 * libcudart later) nothing is remembered, so the row is asked again when it is. Nothing here
 * waits for initialisation or takes a lock of ours: two threads that resolve the same row at
 * once store the same answer. */
#include "cuda_abi.h"
#include "cuda_calls.h"
#include "resolve.h"
static const struct {
    const char *name;
    int version; /* 0: a runtime function */
    int ptsz;
} rows[NVTXCORR_CUDA_COUNT] = {
#define NVTXCORR_CUDA_ROW(id, pub, version, ptsz) {#pub, version, ptsz},
    NVTXCORR_CUDA_CALLS(NVTXCORR_CUDA_ROW)
#undef NVTXCORR_CUDA_ROW
};

static void *_Atomic fns[NVTXCORR_CUDA_COUNT];
static _Atomic unsigned char known[NVTXCORR_CUDA_COUNT];

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t,
                              CUdriverProcAddressQueryResult *);

/* Through the real resolver, as cudart asks: the same name gives the legacy or the per-thread
 * variant by flag. `loaded` says whether a driver is loaded, whether it answered or not. */
static void *driver_lookup(const char *public_name, int version, int ptsz, int *loaded)
{
    gpa_v2_fn gpa = (gpa_v2_fn)nvtxcorr_real(NVTXCORR_SLOT_cuGetProcAddress_v2);
    void *p = NULL;
    CUdriverProcAddressQueryResult status;
    cuuint64_t flags =
        ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    /* A driver before 12.0 has no cuGetProcAddress_v2 and never will: loaded, lacking all. */
    *loaded = gpa != NULL || nvtxcorr_find_real("cuInit") != NULL;
    if (gpa == NULL || gpa(public_name, &p, version, flags, &status) != CUDA_SUCCESS) return NULL;
    return p;
}

void *nvtxcorr_driver_lookup(const char *public_name, int version, int ptsz)
{
    int loaded;
    return driver_lookup(public_name, version, ptsz, &loaded);
}

void *nvtxcorr_cuda_fn(nvtxcorr_cuda_id_t id)
{
    if (atomic_load_explicit(&known[id], memory_order_acquire))
        return atomic_load_explicit(&fns[id], memory_order_relaxed);
    int loaded;
    void *p;
    if (rows[id].version) {
        p = driver_lookup(rows[id].name, rows[id].version, rows[id].ptsz, &loaded);
    } else {
        p = nvtxcorr_find_real(rows[id].name);
        /* Every runtime has cudaGetLastError: without it no runtime is loaded yet. */
        loaded = p != NULL || (id != NVTXCORR_CUDA_cudaGetLastError &&
                               nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaGetLastError) != NULL);
    }
    if (loaded) {
        atomic_store_explicit(&fns[id], p, memory_order_relaxed);
        atomic_store_explicit(&known[id], 1, memory_order_release);
    }
    return p;
}
