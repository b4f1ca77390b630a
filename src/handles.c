/* Handle -> label maps for the launch path. Readers (every launch) take no lock: an entry's
 * value is published before its key, with release stores. Writers (first launch of a
 * handle, graph instantiation) serialise on one mutex. A table that grows is replaced, and
 * the old one is kept (not freed) because a reader may still be walking it; the tables
 * double, so what is kept is less than the live table. Keys are never removed: a destroyed
 * graph exec or unloaded function keeps its key with a NULL value, so a reused handle is
 * simply looked up again. */
#include <pthread.h>
#include <stdlib.h>

#include "nvtxcorr.h"

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static nvtxcorr_map_table_t *table_new(size_t capacity)
{
    nvtxcorr_map_table_t *t = calloc(1, sizeof *t + capacity * sizeof(nvtxcorr_map_slot_t));
    if (t) t->mask = capacity - 1;
    return t;
}

/* Caller holds map_lock. Returns the slot for key, inserting it if absent. */
static nvtxcorr_map_slot_t *slot_for(nvtxcorr_map_table_t *t, uintptr_t key)
{
    for (size_t i = nvtxcorr_map_hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
        if (k == key || k == 0) return &t->slots[i];
    }
}

void nvtxcorr_map_put(nvtxcorr_map_t *map, const void *handle, void *value)
{
    uintptr_t key = (uintptr_t)handle;
    if (key == 0) return;
    pthread_mutex_lock(&map_lock);
    nvtxcorr_map_table_t *t = atomic_load_explicit(&map->table, memory_order_relaxed);
    if (t == NULL || (t->used + 1) * 2 > t->mask + 1) {
        size_t cap = t ? (t->mask + 1) * 2 : 256;
        nvtxcorr_map_table_t *n = table_new(cap);
        if (n == NULL) { /* out of memory: the launch goes on without a cached label */
            pthread_mutex_unlock(&map_lock);
            return;
        }
        if (t) {
            for (size_t i = 0; i <= t->mask; i++) {
                uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
                if (k == 0) continue;
                nvtxcorr_map_slot_t *s = slot_for(n, k);
                atomic_store_explicit(
                    &s->value, atomic_load_explicit(&t->slots[i].value, memory_order_relaxed),
                    memory_order_relaxed);
                atomic_store_explicit(&s->key, k, memory_order_relaxed);
            }
            n->used = t->used;
            n->older = t;
        }
        atomic_store_explicit(&map->table, n, memory_order_release);
        t = n;
    }
    nvtxcorr_map_slot_t *s = slot_for(t, key);
    atomic_store_explicit(&s->value, value, memory_order_release);
    if (atomic_load_explicit(&s->key, memory_order_relaxed) == 0) {
        atomic_store_explicit(&s->key, key, memory_order_release);
        t->used++;
    }
    pthread_mutex_unlock(&map_lock);
}

void nvtxcorr_map_clear_values(nvtxcorr_map_t *map)
{
    pthread_mutex_lock(&map_lock);
    nvtxcorr_map_table_t *t = atomic_load_explicit(&map->table, memory_order_relaxed);
    for (size_t i = 0; t && i <= t->mask; i++)
        atomic_store_explicit(&t->slots[i].value, NULL, memory_order_release);
    pthread_mutex_unlock(&map_lock);
}

void nvtxcorr_map_fork(nvtxcorr_fork_t phase)
{
    nvtxcorr_fork_mutex(&map_lock, phase);
}
