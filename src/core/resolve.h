/* Real functions (resolve.c): one slot per row of hooks.def, filled with the real function the
 * first time a hook needs it, and the loader lookups behind it. Which of our hooks a caller is
 * handed is the hooks' business (hooks/hooks.h); this is only where the real ones are. */
#ifndef NVTXCORR_RESOLVE_H
#define NVTXCORR_RESOLVE_H

#include <stdatomic.h>
#include <stddef.h>
#include "attributes.h"
typedef enum nvtxcorr_slot_id {
#define DRIVER(kind, sym, ...) NVTXCORR_SLOT_##sym,
#define RUNTIME(kind, sym, ...) NVTXCORR_SLOT_##sym,
#include "hooks.def"
    NVTXCORR_SLOT_COUNT
} nvtxcorr_slot_id_t;

/* The exported ABI name of each slot's hook. */
extern const char *const nvtxcorr_slot_symbol[NVTXCORR_SLOT_COUNT];
/* The real function of each slot, once known; the routes read it too (routes.c). */
extern void *_Atomic nvtxcorr_real_fn[NVTXCORR_SLOT_COUNT];

void *nvtxcorr_resolve_slot(nvtxcorr_slot_id_t id);
static inline void *nvtxcorr_real(nvtxcorr_slot_id_t id)
{
    void *p = atomic_load_explicit(&nvtxcorr_real_fn[id], memory_order_acquire);
    return NVTXCORR_LIKELY(p != NULL) ? p : nvtxcorr_resolve_slot(id);
}

/* The glibc dlsym behind our override (hooks/dlsym.c); never waits. */
void *nvtxcorr_real_dlsym(void *handle, const char *name);
/* The hook slot of an exported symbol name, or -1. */
int nvtxcorr_slot_of_symbol(const char *name);
/* The loaded object containing addr, and a lookup in that one object only. */
struct link_map;
struct link_map *nvtxcorr_object_of(const void *addr);
void *nvtxcorr_lookup_in(struct link_map *m, const char *name);
/* Pins the library that defines fn (RTLD_NODELETE): a slot keeps a raw pointer into it. */
void nvtxcorr_keep_loaded(const void *fn);
/* A real symbol: RTLD_NEXT from us, then every loaded object (finds RTLD_LOCAL libraries). */
void *nvtxcorr_find_real(const char *name);
/* Another copy of nvtxcorr loaded first in the process: its path, or NULL when this copy is the
 * first or the only one. A copy that is not the first stands aside: every hook a plain
 * forward, nothing written but one warning (hooks/init.c). Its own path, and a symbol of the
 * first copy (NULL when this copy is the first). */
const char *nvtxcorr_first_copy(void);
const char *nvtxcorr_this_copy(void);
void *nvtxcorr_first_copy_lookup(const char *name);
/* One-line summary of which paths are live, for the info line. */
void nvtxcorr_describe_paths(char *buf, size_t size);

#endif
