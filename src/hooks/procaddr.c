/* The entry-point resolvers: cuGetProcAddress (the 4-argument ABI of CUDA 11.3) and
 * cuGetProcAddress_v2 (CUDA 12), through which cudart (static and shared), cuBLAS, cuDNN and
 * PyTorch get every driver function; and the runtime's cudaGetDriverEntryPoint family. Their
 * wrappers are generated from hooks.def (kinds PROC_ADDRESS and ENTRY_POINT, hook_bodies.h):
 * each calls the real resolver first and hands what it returned to nvtxcorr_wrap_driver,
 * which chooses the hook by the requested name, cudaVersion and flags exactly as the driver
 * chose the ABI, so the caller's _ptsz / legacy variant and ABI version are never swapped.
 * cudart also asks for "cuGetProcAddress" through itself (at 11030 and 12000): those answers
 * are wrapped too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "core/cuda_abi.h"
#include "core/cuda_calls.h"
#include "core/log.h"
#include "core/resolve.h"
#include "hooks.h"
#include "init.h"
void *nvtxcorr_wrap_driver(const char *public_name, int version, unsigned long long flags, void *fn)
{
    if (fn == NULL || public_name == NULL || nvtxcorr_slot_of_hook(fn) >= 0) return fn;
    int ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    int best = -1, any_ptsz = 0, known = 0;
    for (int i = 0; i < NVTXCORR_SLOT_COUNT; i++) {
        const nvtxcorr_hook_t *h = &nvtxcorr_hooks[i];
        if (h->public_name == NULL || strcmp(h->public_name, public_name)) continue;
        known = 1;
        any_ptsz |= h->ptsz;
        /* The driver already chose; a pointer we hold in a slot is that slot's ABI. */
        if (atomic_load_explicit(&nvtxcorr_real_fn[i], memory_order_acquire) == fn)
            return nvtxcorr_hand_out_hooks() ? h->hook : fn;
    }
    if (!known) return fn;
    /* The driver exports each ABI under its own name: when the pointer is exactly such a
     * symbol, that name says which signature it has, whatever was asked for (a driver could
     * answer "cuGraphInstantiate" at 12000 with cuGraphInstantiateWithFlags). */
    Dl_info info;
    if (dladdr(fn, &info) && info.dli_saddr == fn && info.dli_sname) {
        int id = nvtxcorr_slot_of_symbol(info.dli_sname);
        if (id >= 0 && nvtxcorr_hooks[id].public_name) {
            void *w = nvtxcorr_claim((nvtxcorr_slot_id_t)id, fn);
            nvtxcorr_log(NVTXCORR_LOG_DEBUG, "%s (version %d, flags %llu) -> %s%s", public_name,
                         version, flags, w == fn ? "unwrapped " : "", info.dli_sname);
            return w;
        }
    }
    if (version < 0) return fn; /* ABI version unknown: never guess a signature */
    if (ptsz && !any_ptsz)
        ptsz = 0; /* no per-thread variant exists: the driver returned the only one */
    for (int i = 0; i < NVTXCORR_SLOT_COUNT; i++) {
        const nvtxcorr_hook_t *h = &nvtxcorr_hooks[i];
        if (h->public_name && !strcmp(h->public_name, public_name) && h->ptsz == ptsz &&
            h->version <= version && (best < 0 || h->version > nvtxcorr_hooks[best].version))
            best = i;
    }
    if (best < 0) return fn;
    void *w = nvtxcorr_claim((nvtxcorr_slot_id_t)best, fn);
    nvtxcorr_log(NVTXCORR_LOG_DEBUG, "%s (version %d, flags %llu) -> %s%s", public_name, version,
                 flags, w == fn ? "unwrapped " : "", nvtxcorr_hooks[best].symbol);
    return w;
}

/* cudaEnableDefault leaves the variant to how the runtime was compiled, which we cannot see:
 * ask the driver which variant this pointer is. */
unsigned long long nvtxcorr_entry_point_flags(const char *symbol, int version,
                                              unsigned long long rt, int default_ptsz, void *fn)
{
    if ((rt & cudaEnablePerThreadDefaultStream) || (rt == cudaEnableDefault && default_ptsz))
        return CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if (rt & cudaEnableLegacyStream) return CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    if (version >= 0 && fn && nvtxcorr_active() && nvtxcorr_driver_lookup(symbol, version, 1) == fn)
        return CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    return CU_GET_PROC_ADDRESS_LEGACY_STREAM;
}
