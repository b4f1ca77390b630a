/*
 * Fake CUDA driver: initialisation, the single fake device and its primary context, memory and
 * streams.  "Device" memory is host malloc, so copies are memcpy and tests may inspect it; no
 * kernel ever writes it.  The checks mirror the real driver where tests could notice the
 * difference: cuInit first, device ordinal 0 only, handles validated, and the stream-capture
 * restrictions on allocation and synchronisation (see fake_cuda_capture.c).
 */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fk_ctx {
    uint32_t magic;
};
static struct fk_ctx fk_primary_ctx = {FK_MAGIC_CTX};

#define FK_REQUIRE_INIT()                                                                          \
    do {                                                                                           \
        if (!atomic_load_explicit(&fk_initialized, memory_order_acquire))                          \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
    } while (0)

static int fk_ctx_valid(CUcontext c)
{
    return c == (CUcontext)&fk_primary_ctx;
}

FK_API CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (fk_cfg.init_error != CUDA_SUCCESS) return fk_cfg.init_error;
    atomic_store_explicit(&fk_initialized, 1, memory_order_release);
    return CUDA_SUCCESS;
}

FK_API CUresult cuDriverGetVersion(int *driverVersion)
{
    /* Works before cuInit, as on the real driver. */
    if (driverVersion == NULL) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = fk_cfg.driver_version;
    return CUDA_SUCCESS;
}

/* ---- device ---------------------------------------------------------------------------------- */

FK_API CUresult cuDeviceGetCount(int *count)
{
    FK_REQUIRE_INIT();
    if (count == NULL) return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    FK_REQUIRE_INIT();
    if (device == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    FK_REQUIRE_INIT();
    if (name == NULL || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", "nvtxcorr fake device");
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    FK_REQUIRE_INIT();
    if (bytes == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    FK_REQUIRE_INIT();
    if (pi == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    /* A plausible Hopper-class device for the attributes programs commonly ask; 0 otherwise. */
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *pi = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *pi = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *pi = 132;
        break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        *pi = 32;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *pi = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        *pi = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        *pi = 64;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        *pi = 0x7fffffff;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        *pi = 65535;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        *pi = 48 << 10;
        break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
        *pi = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
        *pi = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        *pi = 1;
        break;
    default:
        *pi = 0;
        break;
    }
    return CUDA_SUCCESS;
}

/* ---- context --------------------------------------------------------------------------------- */

FK_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FK_REQUIRE_INIT();
    if (pctx == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *pctx = (CUcontext)&fk_primary_ctx;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FK_REQUIRE_INIT();
    return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult fk_cuCtxGetCurrent(CUcontext *pctx)
{
    FK_REQUIRE_INIT();
    if (pctx == NULL) return CUDA_ERROR_INVALID_VALUE;
    *pctx = fk_self()->ctx;
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    return FK_FRAMED("cuCtxGetCurrent", fk_cuCtxGetCurrent(pctx));
}

static CUresult fk_cuCtxSetCurrent(CUcontext ctx)
{
    FK_REQUIRE_INIT();
    if (ctx != NULL && !fk_ctx_valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    fk_self()->ctx = ctx;
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
    return FK_FRAMED("cuCtxSetCurrent", fk_cuCtxSetCurrent(ctx));
}

static CUresult fk_cuCtxGetDevice(CUdevice *device)
{
    FK_REQUIRE_INIT();
    if (device == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (fk_self()->ctx == NULL) return CUDA_ERROR_INVALID_CONTEXT;
    *device = 0;
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxGetDevice(CUdevice *device)
{
    return FK_FRAMED("cuCtxGetDevice", fk_cuCtxGetDevice(device));
}

FK_API CUresult cuCtxSynchronize(void)
{
    FK_REQUIRE_INIT();
    /* Waits for every stream, capturing ones included: an unsafe call during capture. */
    return fk_check_unsafe_call();
}

FK_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    FK_REQUIRE_INIT();
    if (ctx != NULL && !fk_ctx_valid(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    return fk_check_unsafe_call();
}

/* The profiler API: counted, so tests see that the real functions are still reached. */
FK_API CUresult cuProfilerStart(void)
{
    FK_REQUIRE_INIT();
    fk_count(FKC_PROFILER_START, 1);
    return CUDA_SUCCESS;
}

FK_API CUresult cuProfilerStop(void)
{
    FK_REQUIRE_INIT();
    fk_count(FKC_PROFILER_STOP, 1);
    return CUDA_SUCCESS;
}

/* ---- memory ---------------------------------------------------------------------------------- */

/*
 * Allocations carry a list node in front (256 bytes, so the pointer keeps cudaMalloc's 256-byte
 * alignment): the list makes memory a program never frees reachable, as device memory would be
 * for leak checkers, and lets cuMemFree reject pointers it did not hand out.
 */
#define FK_ALLOC_HEADER 256
struct fk_alloc {
    struct fk_alloc *prev, *next;
};
static struct fk_alloc fk_allocs = {&fk_allocs, &fk_allocs};
static pthread_mutex_t fk_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

FK_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    FK_REQUIRE_INIT();
    if (dptr == NULL || bytesize == 0 || bytesize > SIZE_MAX - FK_ALLOC_HEADER)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_check_unsafe_call();
    if (r != CUDA_SUCCESS) return r;
    struct fk_alloc *a =
        aligned_alloc(FK_ALLOC_HEADER, FK_ALLOC_HEADER + (bytesize + FK_ALLOC_HEADER - 1) /
                                                             FK_ALLOC_HEADER * FK_ALLOC_HEADER);
    if (a == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fk_alloc_lock);
    a->next = fk_allocs.next;
    a->prev = &fk_allocs;
    a->next->prev = a;
    fk_allocs.next = a;
    pthread_mutex_unlock(&fk_alloc_lock);
    *dptr = (CUdeviceptr)(uintptr_t)((char *)a + FK_ALLOC_HEADER);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    FK_REQUIRE_INIT();
    CUresult r = fk_check_unsafe_call();
    if (r != CUDA_SUCCESS) return r;
    if (dptr == 0) return CUDA_SUCCESS;
    struct fk_alloc *want = (struct fk_alloc *)((char *)(uintptr_t)dptr - FK_ALLOC_HEADER), *a;
    pthread_mutex_lock(&fk_alloc_lock);
    for (a = fk_allocs.next; a != &fk_allocs && a != want; a = a->next)
        ;
    if (a == want) {
        a->prev->next = a->next;
        a->next->prev = a->prev;
    }
    pthread_mutex_unlock(&fk_alloc_lock);
    if (a != want) return CUDA_ERROR_INVALID_VALUE;
    free(a);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    FK_REQUIRE_INIT();
    memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    FK_REQUIRE_INIT();
    memcpy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    FK_REQUIRE_INIT();
    memmove((void *)(uintptr_t)dstDevice, (const void *)(uintptr_t)srcDevice, ByteCount);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    FK_REQUIRE_INIT();
    memset((void *)(uintptr_t)dstDevice, uc, N);
    return CUDA_SUCCESS;
}

/* ---- streams --------------------------------------------------------------------------------- */

static CUresult fk_stream_create(CUstream *phStream, unsigned int Flags)
{
    FK_REQUIRE_INIT();
    if (phStream == NULL || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_stream *s = calloc(1, sizeof(*s));
    if (s == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = FK_MAGIC_STREAM;
    s->kind = FK_STREAM_USER;
    s->flags = Flags;
    fk_keep(s);
    *phStream = (CUstream)s;
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return fk_stream_create(phStream, Flags);
}

FK_API CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    return fk_stream_create(phStream, flags);
}

FK_API CUresult cuStreamDestroy_v2(CUstream hStream)
{
    FK_REQUIRE_INIT();
    struct fk_stream *s = fk_stream_resolve(hStream, 0);
    if (s == NULL || s->kind != FK_STREAM_USER) return CUDA_ERROR_INVALID_HANDLE;
    if (atomic_load_explicit(&s->cap, memory_order_acquire) != NULL) fk_capture_abandon(s);
    /* Cleared, not freed: a stale handle then fails the magic check instead of reading junk. */
    s->magic = 0;
    return CUDA_SUCCESS;
}

static CUresult fk_stream_sync(CUstream hStream, int ptsz)
{
    FK_REQUIRE_INIT();
    struct fk_stream *s = fk_stream_resolve(hStream, ptsz);
    if (s == NULL) return CUDA_ERROR_INVALID_HANDLE;
    return fk_stream_sync_check(s);
}

FK_API CUresult cuStreamSynchronize(CUstream hStream)
{
    return FK_FRAMED("cuStreamSynchronize", fk_stream_sync(hStream, 0));
}

FK_API CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    return FK_FRAMED("cuStreamSynchronize_ptsz", fk_stream_sync(hStream, 1));
}

FK_API CUresult cuStreamQuery(CUstream hStream)
{
    return FK_FRAMED("cuStreamQuery", fk_stream_sync(hStream, 0));
}

FK_API CUresult cuStreamQuery_ptsz(CUstream hStream)
{
    return FK_FRAMED("cuStreamQuery_ptsz", fk_stream_sync(hStream, 1));
}

/* ---- errors ---------------------------------------------------------------------------------- */

static const struct {
    int value;
    const char *name;
} fk_errors[] = {
#include "fake_cuda_errors.inc"
};

FK_API CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (pStr == NULL) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof(fk_errors) / sizeof(fk_errors[0]); i++) {
        if (fk_errors[i].value == (int)error) {
            *pStr = fk_errors[i].name;
            return CUDA_SUCCESS;
        }
    }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

FK_API CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    /* The fake has no prose descriptions; the enumerator name is unambiguous for tests. */
    return cuGetErrorName(error, pStr);
}
