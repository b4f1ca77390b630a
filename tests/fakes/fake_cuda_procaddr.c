/*
 * Fake CUDA driver: cuGetProcAddress and cuGetProcAddress_v2 with the real driver's rules.
 *
 * fake_cuda_abi.inc (generated, see gen_tables.py) lists every ABI entry point of the driver:
 * (symbol, ABI version, per-thread-stream flavour).  A request (symbol, cudaVersion, flags)
 * resolves to the newest ABI version not newer than cudaVersion (capped by
 * FAKECUDA_DRIVER_VERSION: an older driver does not know newer entry points), in its _ptsz/_ptds
 * flavour when flags ask for the per-thread default stream and such a flavour exists.  The table
 * below maps the entry points this fake implements to their functions; every other entry point
 * resolves to a stub returning CUDA_ERROR_NOT_SUPPORTED, so that the real CUDA runtime, which
 * asks for ~440 of them, gets all it asks for.
 *
 * FAKECUDA_TRACE=<path>: one line per request, "<symbol> <version> <flags> <result>", the symbol
 * written "" when empty, as in the reference trace of the real runtime.
 */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fk_abi {
    const char *symbol;
    int version;
    int ptsz;
};

static const struct fk_abi fk_abi_table[] = {
#include "fake_cuda_abi.inc"
};
#define FK_ABI_COUNT (sizeof(fk_abi_table) / sizeof(fk_abi_table[0]))

struct fk_impl {
    const char *symbol;
    int version;
    int ptsz;
    void *fn;
};

#define IMPL(sym, ver, fn)                                                                         \
    {                                                                                              \
        sym, ver, 0, (void *)(fn)                                                                  \
    }
#define IMPL_PT(sym, ver, fn)                                                                      \
    {                                                                                              \
        sym, ver, 1, (void *)(fn)                                                                  \
    }

/* Every ABI entry point this fake implements: (symbol as requested, ABI version, flavour). */
static const struct fk_impl fk_impls[] = {
    IMPL("cuInit", 2000, cuInit),
    IMPL("cuDriverGetVersion", 2020, cuDriverGetVersion),
    IMPL("cuGetProcAddress", 11030, cuGetProcAddress),
    IMPL("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    IMPL("cuGetExportTable", 3000, cuGetExportTable),
    IMPL("cuGetErrorName", 6000, cuGetErrorName),
    IMPL("cuGetErrorString", 6000, cuGetErrorString),
    IMPL("cuDeviceGet", 2000, cuDeviceGet),
    IMPL("cuDeviceGetCount", 2000, cuDeviceGetCount),
    IMPL("cuDeviceGetName", 2000, cuDeviceGetName),
    IMPL("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    IMPL("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    IMPL("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    IMPL("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    IMPL("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    IMPL("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    IMPL("cuCtxGetDevice", 2000, cuCtxGetDevice),
    IMPL("cuCtxSynchronize", 2000, cuCtxSynchronize),
    IMPL("cuProfilerStart", 4000, cuProfilerStart),
    IMPL("cuProfilerStop", 4000, cuProfilerStop),
    IMPL("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
    IMPL("cuMemAlloc", 3020, cuMemAlloc_v2),
    IMPL("cuMemFree", 3020, cuMemFree_v2),
    IMPL("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
    IMPL("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
    IMPL("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
    IMPL("cuMemsetD8", 3020, cuMemsetD8_v2),
    IMPL("cuStreamCreate", 2000, cuStreamCreate),
    IMPL("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    IMPL("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    IMPL("cuStreamSynchronize", 2000, cuStreamSynchronize),
    IMPL_PT("cuStreamSynchronize", 7000, cuStreamSynchronize_ptsz),
    IMPL("cuStreamQuery", 2000, cuStreamQuery),
    IMPL_PT("cuStreamQuery", 7000, cuStreamQuery_ptsz),
    IMPL("cuModuleLoadData", 2000, cuModuleLoadData),
    IMPL("cuModuleUnload", 2000, cuModuleUnload),
    IMPL("cuModuleGetFunction", 2000, cuModuleGetFunction),
    IMPL("cuLibraryLoadData", 12000, cuLibraryLoadData),
    IMPL("cuLibraryUnload", 12000, cuLibraryUnload),
    IMPL("cuLibraryGetKernel", 12000, cuLibraryGetKernel),
    IMPL("cuLibraryGetModule", 12000, cuLibraryGetModule),
    IMPL("cuKernelGetFunction", 12000, cuKernelGetFunction),
    IMPL("cuFuncGetName", 12030, cuFuncGetName),
    IMPL("cuKernelGetName", 12030, cuKernelGetName),
    IMPL("cuLaunchKernel", 4000, cuLaunchKernel),
    IMPL_PT("cuLaunchKernel", 7000, cuLaunchKernel_ptsz),
    IMPL("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    IMPL_PT("cuLaunchKernelEx", 11060, cuLaunchKernelEx_ptsz),
    IMPL("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel),
    IMPL_PT("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel_ptsz),
    IMPL("cuGraphLaunch", 10000, cuGraphLaunch),
    IMPL_PT("cuGraphLaunch", 10000, cuGraphLaunch_ptsz),
    IMPL("cuStreamBeginCapture", 10000, cuStreamBeginCapture),
    IMPL_PT("cuStreamBeginCapture", 10000, cuStreamBeginCapture_ptsz),
    IMPL("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
    IMPL_PT("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2_ptsz),
    IMPL("cuStreamBeginCaptureToGraph", 12030, cuStreamBeginCaptureToGraph),
    IMPL_PT("cuStreamBeginCaptureToGraph", 12030, cuStreamBeginCaptureToGraph_ptsz),
    IMPL("cuStreamEndCapture", 10000, cuStreamEndCapture),
    IMPL_PT("cuStreamEndCapture", 10000, cuStreamEndCapture_ptsz),
    IMPL("cuStreamIsCapturing", 10000, cuStreamIsCapturing),
    IMPL_PT("cuStreamIsCapturing", 10000, cuStreamIsCapturing_ptsz),
    IMPL("cuStreamGetCaptureInfo", 10010, cuStreamGetCaptureInfo),
    IMPL_PT("cuStreamGetCaptureInfo", 10010, cuStreamGetCaptureInfo_ptsz),
    IMPL("cuStreamGetCaptureInfo", 11030, cuStreamGetCaptureInfo_v2),
    IMPL_PT("cuStreamGetCaptureInfo", 11030, cuStreamGetCaptureInfo_v2_ptsz),
    IMPL("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3),
    IMPL_PT("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3_ptsz),
    IMPL("cuThreadExchangeStreamCaptureMode", 10010, cuThreadExchangeStreamCaptureMode),
    IMPL("cuGraphCreate", 10000, cuGraphCreate),
    IMPL("cuGraphDestroy", 10000, cuGraphDestroy),
    IMPL("cuGraphAddKernelNode", 10000, cuGraphAddKernelNode),
    IMPL("cuGraphAddKernelNode", 12000, cuGraphAddKernelNode_v2),
    IMPL("cuGraphGetNodes", 10000, cuGraphGetNodes),
    IMPL("cuGraphNodeGetType", 10000, cuGraphNodeGetType),
    IMPL("cuGraphKernelNodeGetParams", 10000, cuGraphKernelNodeGetParams),
    IMPL("cuGraphKernelNodeGetParams", 12000, cuGraphKernelNodeGetParams_v2),
    IMPL("cuGraphInstantiate", 10000, cuGraphInstantiate),
    IMPL("cuGraphInstantiate", 11000, cuGraphInstantiate_v2),
    IMPL("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    IMPL("cuGraphInstantiateWithParams", 12000, cuGraphInstantiateWithParams),
    IMPL_PT("cuGraphInstantiateWithParams", 12000, cuGraphInstantiateWithParams_ptsz),
    IMPL("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    IMPL("cuGraphExecUpdate", 10020, cuGraphExecUpdate),
    IMPL("cuGraphExecUpdate", 12000, cuGraphExecUpdate_v2),
};

/* What every entry point without an implementation resolves to. */
static CUresult fk_not_supported(void)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

int fk_version_ok(int first_version)
{
    return fk_cfg.driver_version >= first_version;
}

/* First ABI entry of `symbol` in the sorted table, or FK_ABI_COUNT. */
static size_t fk_abi_first(const char *symbol)
{
    size_t lo = 0, hi = FK_ABI_COUNT;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(fk_abi_table[mid].symbol, symbol) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < FK_ABI_COUNT && strcmp(fk_abi_table[lo].symbol, symbol) == 0 ? lo : FK_ABI_COUNT;
}

static void *fk_impl_for(const char *symbol, int version, int ptsz)
{
    for (size_t i = 0; i < sizeof(fk_impls) / sizeof(fk_impls[0]); i++)
        if (fk_impls[i].version == version && fk_impls[i].ptsz == ptsz &&
            strcmp(fk_impls[i].symbol, symbol) == 0)
            return fk_impls[i].fn;
    return (void *)fk_not_supported;
}

static CUresult fk_lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                          CUdriverProcAddressQueryResult *status)
{
    *pfn = NULL;
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    size_t first = fk_abi_first(symbol);
    if (*symbol == '\0' || first == FK_ABI_COUNT) return CUDA_ERROR_NOT_FOUND;
    /* An older driver (FAKECUDA_DRIVER_VERSION) knows nothing newer than itself. */
    if (!fk_version_ok(fk_abi_table[first].version)) return CUDA_ERROR_NOT_FOUND;
    int want = cudaVersion < fk_cfg.driver_version ? cudaVersion : fk_cfg.driver_version;
    const struct fk_abi *best = NULL, *best_pt = NULL;
    for (size_t i = first; i < FK_ABI_COUNT && strcmp(fk_abi_table[i].symbol, symbol) == 0; i++) {
        const struct fk_abi *a = &fk_abi_table[i];
        if (a->version > want) continue;
        if (!a->ptsz && (best == NULL || a->version > best->version)) best = a;
        if (a->ptsz && (best_pt == NULL || a->version > best_pt->version)) best_pt = a;
    }
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt != NULL) best = best_pt;
    if (best == NULL) {
        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = fk_impl_for(best->symbol, best->version, best->ptsz);
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

static int fk_trace_fd = -1;

static void fk_trace_open(void)
{
    const char *path = getenv("FAKECUDA_TRACE");
    if (path != NULL && *path)
        fk_trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static void fk_trace(const char *symbol, int cudaVersion, cuuint64_t flags, CUresult r)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fk_trace_open);
    int fd = fk_trace_fd;
    if (fd < 0) return;
    char line[512];
    int n = snprintf(line, sizeof(line), "%s %d %llu %d\n", *symbol ? symbol : "\"\"", cudaVersion,
                     (unsigned long long)flags, (int)r);
    /* One write per line: O_APPEND keeps lines whole across threads and processes. */
    if (n > 0 && (size_t)n < sizeof(line) && write(fd, line, (size_t)n) < 0) {
        /* Nothing useful to do: tracing is best effort. */
    }
}

FK_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    fk_count(FKC_PROC_REQUESTS, 1);
    if (symbol == NULL || pfn == NULL) {
        fk_trace(symbol ? symbol : "", cudaVersion, flags, CUDA_ERROR_INVALID_VALUE);
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUdriverProcAddressQueryResult status;
    CUresult r = fk_lookup(symbol, pfn, cudaVersion, flags, &status);
    if (symbolStatus != NULL) *symbolStatus = status;
    fk_trace(symbol, cudaVersion, flags, r);
    return r;
}

FK_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

/*
 * The real runtime asks for private export tables (by UUID) and checks them; the fake has none.
 * Static cudart then gives up with cudaErrorSoftwareValidityNotEstablished (103), cleanly.
 */
FK_API CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    if (ppExportTable != NULL) *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
