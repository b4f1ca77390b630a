/* Lock-free handle maps (handle_map.c): readers never lock; writers serialise. */
#ifndef NVTXCORR_MAP_H
#define NVTXCORR_MAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "attributes.h"
#include "fork.h"
typedef struct nvtxcorr_map_slot {
    _Atomic uintptr_t key;
    void *_Atomic value;
} nvtxcorr_map_slot_t;

typedef struct nvtxcorr_map_table {
    size_t mask;
    size_t byte_mask; /* mask * sizeof(nvtxcorr_map_slot_t): the entry stubs' probe */
    size_t used;
    struct nvtxcorr_map_table *older; /* kept for readers still walking it; never freed */
    nvtxcorr_map_slot_t slots[];
} nvtxcorr_map_table_t;

typedef struct nvtxcorr_map {
    nvtxcorr_map_table_t *_Atomic table;
} nvtxcorr_map_t;

/* Handles are aligned pointers: drop the low bits, then Fibonacci-hash. The x86-64 entry
 * stubs compute the same slot in assembly (hook_bodies.h) as a byte offset: the product
 * shifted right by 4 bits less and masked with the table's byte_mask, multiplying by
 * nvtxcorr_map_hash_mult in memory. (Taking the product's bits from 24 up without dropping
 * any first spreads the fake driver's 24-byte-strided handles worse: a quarter of 100
 * kernels missed their first probe, and took the C body.) */
#define NVTXCORR_MAP_HASH_DROP 4
#define NVTXCORR_MAP_HASH_MULT 0x9E3779B97F4A7C15ull
#define NVTXCORR_MAP_HASH_SHIFT 20
extern const uint64_t nvtxcorr_map_hash_mult; /* NVTXCORR_MAP_HASH_MULT */
static inline size_t nvtxcorr_map_hash(uintptr_t key)
{
    return (size_t)(((uint64_t)key >> NVTXCORR_MAP_HASH_DROP) * NVTXCORR_MAP_HASH_MULT >>
                    NVTXCORR_MAP_HASH_SHIFT);
}

/* What a map can hold before its first entry instead of NULL: one table of a single empty
 * slot, shared, which no writer ever stores an entry into (with one slot, the first put
 * already replaces it; clearing the values stores the NULL it holds: handle_map.c). The launch
 * maps start with it, so the entry stubs read their table without testing it. */
typedef union nvtxcorr_map_empty {
    nvtxcorr_map_table_t table;
    unsigned char room[sizeof(nvtxcorr_map_table_t) + sizeof(nvtxcorr_map_slot_t)];
} nvtxcorr_map_empty_t;
extern nvtxcorr_map_empty_t nvtxcorr_map_empty;
#define NVTXCORR_MAP_EMPTY                                                                         \
    {                                                                                              \
        &nvtxcorr_map_empty.table                                                                  \
    }

static inline void *nvtxcorr_map_get(nvtxcorr_map_t *map, const void *handle)
{
    nvtxcorr_map_table_t *t = atomic_load_explicit(&map->table, memory_order_acquire);
    uintptr_t key = (uintptr_t)handle;
    if (NVTXCORR_UNLIKELY(t == NULL || key == 0)) return NULL;
    for (size_t i = nvtxcorr_map_hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
        if (k == key) return atomic_load_explicit(&t->slots[i].value, memory_order_acquire);
        if (k == 0) return NULL;
    }
}
/* value NULL removes the handle. */
void nvtxcorr_map_put(nvtxcorr_map_t *map, const void *handle, void *value);
void nvtxcorr_map_clear_values(nvtxcorr_map_t *map);
void nvtxcorr_map_fork(nvtxcorr_fork_t phase); /* the map writers lock */

#endif
