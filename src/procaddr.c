/* The entry-point resolvers: cuGetProcAddress (the 4-argument ABI of CUDA 11.3) and
 * cuGetProcAddress_v2 (CUDA 12), through which cudart (static and shared), cuBLAS, cuDNN and
 * PyTorch get every driver function; and the runtime's cudaGetDriverEntryPoint family.
 * Each calls the real resolver first and wraps only what it returned, choosing the hook by
 * the requested name, cudaVersion and flags exactly as the driver chose the ABI, so the
 * caller's _ptsz / legacy variant and ABI version are never swapped. cudart also asks for
 * "cuGetProcAddress" through itself (at 11030 and 12000): those answers are wrapped too. */
#include "nvtxcorr.h"

NVTXCORR_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version,
                                                  cuuint64_t flags)
{
    __typeof__(&cuGetProcAddress) real = nvtxcorr_real(NVTXCORR_SLOT_cuGetProcAddress);
    if (real == NULL) return CUDA_ERROR_NOT_FOUND;
    CUresult r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn) *pfn = nvtxcorr_wrap_driver(symbol, version, flags, *pfn);
    return r;
}
NVTXCORR_LOCAL_ALIAS(cuGetProcAddress)

NVTXCORR_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                                     cuuint64_t flags,
                                                     CUdriverProcAddressQueryResult *status)
{
    __typeof__(&cuGetProcAddress_v2) real = nvtxcorr_real(NVTXCORR_SLOT_cuGetProcAddress_v2);
    if (real == NULL) return CUDA_ERROR_NOT_FOUND;
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn) *pfn = nvtxcorr_wrap_driver(symbol, version, flags, *pfn);
    return r;
}
NVTXCORR_LOCAL_ALIAS(cuGetProcAddress_v2)

/* cudaEnableDefault leaves the variant to how the runtime was compiled, which we cannot see:
 * ask the driver which variant this pointer is. */
static unsigned long long driver_flags(const char *symbol, int version, unsigned long long rt,
                                       int default_ptsz, void *fn)
{
    if ((rt & cudaEnablePerThreadDefaultStream) || (rt == cudaEnableDefault && default_ptsz))
        return CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if (rt & cudaEnableLegacyStream) return CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    if (version >= 0 && fn && nvtxcorr_active() && nvtxcorr_driver_entry(symbol, version, 1) == fn)
        return CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    return CU_GET_PROC_ADDRESS_LEGACY_STREAM;
}

/* The runtime resolves through a driver cuGetProcAddress that is usually already ours, so
 * most answers arrive wrapped; the version of the plain form is the runtime's own and unknown
 * here (-1): only pointers already held in a slot are wrapped then. */
#define ENTRY_POINT(sym, ptsz, params, args, version_expr)                                         \
    NVTXCORR_EXPORT cudaError_t CUDARTAPI sym params                                               \
    {                                                                                              \
        __typeof__(&sym) real = nvtxcorr_real(NVTXCORR_SLOT_##sym);                                \
        if (real == NULL) return cudaErrorSymbolNotFound;                                          \
        cudaError_t r = real args;                                                                 \
        if (r == cudaSuccess && pfn && *pfn) {                                                     \
            int v = (version_expr);                                                                \
            *pfn =                                                                                 \
                nvtxcorr_wrap_driver(symbol, v, driver_flags(symbol, v, flags, ptsz, *pfn), *pfn); \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

ENTRY_POINT(cudaGetDriverEntryPoint, 0,
            (const char *symbol, void **pfn, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *status),
            (symbol, pfn, flags, status), -1)
ENTRY_POINT(cudaGetDriverEntryPoint_ptsz, 1,
            (const char *symbol, void **pfn, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *status),
            (symbol, pfn, flags, status), -1)
ENTRY_POINT(cudaGetDriverEntryPointByVersion, 0,
            (const char *symbol, void **pfn, unsigned int version, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *status),
            (symbol, pfn, version, flags, status), (int)version)
ENTRY_POINT(cudaGetDriverEntryPointByVersion_ptsz, 1,
            (const char *symbol, void **pfn, unsigned int version, unsigned long long flags,
             enum cudaDriverEntryPointQueryResult *status),
            (symbol, pfn, version, flags, status), (int)version)
