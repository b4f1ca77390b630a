/* The hooks as the program sees them: the table of our hook functions, and which of them a
 * resolver (dlsym, cuGetProcAddress, cudaGetDriverEntryPoint) hands out (claim.c, procaddr.c).
 * The real functions behind them are core/resolve.h's. */
#ifndef NVTXCORR_HOOKS_H
#define NVTXCORR_HOOKS_H

#include <stddef.h>
#include "core/attributes.h"
#include "core/resolve.h"
typedef struct nvtxcorr_hook {
    const char *symbol;      /* exported ABI name */
    const char *public_name; /* name given to cuGetProcAddress; NULL for runtime hooks */
    int version;             /* driver ABI version (first cudaVersion returning it) */
    int ptsz;
    void *hook; /* our wrapper, by its local address (NVTXCORR_LOCAL_ALIAS) */
} nvtxcorr_hook_t;

/* Every hook also has a hidden alias, nvtxcorr_local_<symbol>, and the hook table holds that:
 * our own functions are known by address (a dlsym or cuGetProcAddress result equal to a table
 * entry is one of our hooks, never a real function to wrap) and handed out by address
 * (cuGetProcAddress). The exported name will not do: it is interposable, so a reference to it
 * from inside this library resolves to the first definition in the process, which is another
 * interposer's wrapper when one is preloaded before us or defined by the executable (a tracer,
 * HAMi-core). Handing that wrapper back to its own dlsym(libcuda, ...) makes it call itself
 * until the stack overflows. The hidden alias is bound at link time to our own code. */
#define NVTXCORR_LOCAL_ALIAS(sym)                                                                  \
    extern __typeof__(sym) nvtxcorr_local_##sym __attribute__((alias(#sym))) NVTXCORR_HIDDEN;

extern const nvtxcorr_hook_t nvtxcorr_hooks[NVTXCORR_SLOT_COUNT];

/* Returns our hook for slot `id` if `real` is (or can become) that slot's real function,
 * else `real` itself: a second, different implementation is passed through untouched. */
void *nvtxcorr_claim(nvtxcorr_slot_id_t id, void *real);
/* The same without ever waiting for initialisation, for dlsym: a library constructor calls it
 * with the loader lock held, which initialisation on another thread may be waiting for (it
 * dlopens the NVTX tool). Before initialisation it claims the slot and returns our hook,
 * unless the environment already says disabled. */
void *nvtxcorr_claim_nowait(nvtxcorr_slot_id_t id, void *real);
/* The slot whose hook `fn` is, or -1. */
int nvtxcorr_slot_of_hook(const void *fn);
/* Whether resolvers hand out hooks now (claim.c): active, or another thread initialising. */
int nvtxcorr_hand_out_hooks(void);
/* Wraps a driver function the caller obtained from a resolver for `public_name` (procaddr.c).
 * version < 0 means the requested ABI version is unknown (cudaGetDriverEntryPoint). */
void *nvtxcorr_wrap_driver(const char *public_name, int version, unsigned long long flags,
                           void *fn);
/* The driver flags a cudaGetDriverEntryPoint answer was resolved with (procaddr.c). */
unsigned long long nvtxcorr_entry_point_flags(const char *symbol, int version,
                                              unsigned long long rt_flags, int default_ptsz,
                                              void *fn);

#endif
