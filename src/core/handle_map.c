/* Handle -> label maps for the launch path. Readers (every launch) take no lock. Writers
 * (first launch of a handle, graph instantiation and destroy, unloads) serialise on one mutex.
 *
 * Open addressing with linear probing. A NULL value means "absent": a destroyed graph exec or
 * an unloaded function's slot keeps its key with a NULL value (a tombstone), so a reader
 * walking past it still reaches the keys behind it. Tombstones do not accumulate:
 *  - a tombstone directly before an empty slot ends its cluster, so no key lies behind it
 *    and it becomes empty again (trim); that is the usual case for a destroyed exec;
 *  - an insert takes the first tombstone on its probe path.
 * Every insert stores the key first and the value after: a reader that sees the new key early
 * reads NULL, a miss, which only sends it to the slow path. So a slot whose key is 0 (empty)
 * never holds a value, even for an instant: a NULL handle, which the x86-64 entry stubs do
 * not test for (hook_bodies.h), matches only empty slots and always reads NULL there.
 * A table that fills is replaced by one sized for its live entries, without tombstones; the
 * old one is kept (never freed) because a reader may still be walking it. Tables grow by
 * doubling, so what is kept stays below the live table, and a program that instantiates and
 * destroys graphs with ever-new handles keeps a constant footprint. */
#include <pthread.h>
#include <stdlib.h>
#include "fork.h"
#include "map.h"
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread holds map_lock. A writer that finds it set was entered from a signal handler
 * that interrupted this thread inside a write (or from exit() called in one, whose unload
 * hooks clear the maps): waiting would deadlock on our own lock, so that write is dropped. A
 * dropped put only means the label is found again next time; a dropped removal leaves a label
 * that a reused handle may inherit, which only a program that loads or unloads modules from a
 * signal handler can see. */
static __thread volatile int map_held __attribute__((tls_model("initial-exec")));

/* Set before the lock is taken and cleared after it is released, so that a handler never
 * finds the lock held by this thread with the flag clear (at worst it drops a write it could
 * have made). */
static int map_lock_take(void)
{
    if (map_held) return 0;
    map_held = 1;
    pthread_mutex_lock(&map_lock);
    return 1;
}

static void map_lock_give(void)
{
    pthread_mutex_unlock(&map_lock);
    map_held = 0;
}

enum { TABLE_MIN = 256 };

/* Read only by the entry stubs' assembly: `used`, so that link-time optimisation keeps it. */
__attribute__((used)) const uint64_t nvtxcorr_map_hash_mult = NVTXCORR_MAP_HASH_MULT;
/* Zero: mask 0 (one slot), nothing used, its one slot empty. A put finds (0 + 1) * 2 > 1 and
 * replaces it before storing anything; a removal finds no key; clearing the values (an unload
 * before any launch) stores the NULL its slot already holds. Writable, for that store. */
nvtxcorr_map_empty_t nvtxcorr_map_empty;

static nvtxcorr_map_table_t *table_new(size_t capacity)
{
    nvtxcorr_map_table_t *t = calloc(1, sizeof *t + capacity * sizeof(nvtxcorr_map_slot_t));
    if (t) {
        t->mask = capacity - 1;
        t->byte_mask = t->mask * sizeof(nvtxcorr_map_slot_t);
    }
    return t;
}

static uintptr_t key_at(const nvtxcorr_map_table_t *t, size_t i)
{
    return atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
}

static int is_tombstone(nvtxcorr_map_table_t *t, size_t i)
{
    return key_at(t, i) != 0 &&
           atomic_load_explicit(&t->slots[i].value, memory_order_relaxed) == NULL;
}

/* Caller holds map_lock. The slot holding key, else the first tombstone on its probe path,
 * else the empty slot that ends it. */
static nvtxcorr_map_slot_t *slot_for(nvtxcorr_map_table_t *t, uintptr_t key)
{
    nvtxcorr_map_slot_t *reuse = NULL;
    for (size_t i = nvtxcorr_map_hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = key_at(t, i);
        if (k == key) return &t->slots[i];
        if (k == 0) return reuse ? reuse : &t->slots[i];
        if (reuse == NULL && is_tombstone(t, i)) reuse = &t->slots[i];
    }
}

/* Caller holds map_lock. Empties the tombstones that end a cluster, walking back from slot i
 * while the slot after each one is empty. */
static void trim(nvtxcorr_map_table_t *t, size_t i)
{
    while (is_tombstone(t, i) && key_at(t, (i + 1) & t->mask) == 0) {
        atomic_store_explicit(&t->slots[i].key, 0, memory_order_release);
        t->used--;
        i = (i - 1) & t->mask;
    }
}

/* Caller holds map_lock. A table for the live entries of t (none: the first table) with room
 * for one more, or NULL when out of memory. */
static nvtxcorr_map_table_t *rebuild(nvtxcorr_map_table_t *t)
{
    size_t live = 0;
    for (size_t i = 0; t && i <= t->mask; i++)
        live += key_at(t, i) != 0 && !is_tombstone(t, i);
    size_t cap = TABLE_MIN;
    while ((live + 1) * 4 > cap)
        cap *= 2;
    nvtxcorr_map_table_t *n = table_new(cap);
    if (n == NULL || t == NULL) return n;
    for (size_t i = 0; i <= t->mask; i++) {
        if (key_at(t, i) == 0 || is_tombstone(t, i)) continue;
        nvtxcorr_map_slot_t *s = slot_for(n, key_at(t, i));
        atomic_store_explicit(&s->value,
                              atomic_load_explicit(&t->slots[i].value, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&s->key, key_at(t, i), memory_order_relaxed);
    }
    n->used = live;
    n->older = t;
    return n;
}

void nvtxcorr_map_put(nvtxcorr_map_t *map, const void *handle, void *value)
{
    uintptr_t key = (uintptr_t)handle;
    if (key == 0 || !map_lock_take()) return;
    nvtxcorr_map_table_t *t = atomic_load_explicit(&map->table, memory_order_relaxed);
    if (value == NULL) { /* removal */
        for (size_t i = t ? nvtxcorr_map_hash(key) & t->mask : 0; t && key_at(t, i) != 0;
             i = (i + 1) & t->mask) {
            if (key_at(t, i) != key) continue;
            atomic_store_explicit(&t->slots[i].value, NULL, memory_order_release);
            trim(t, i);
            break;
        }
        map_lock_give();
        return;
    }
    if (t == NULL || (t->used + 1) * 2 > t->mask + 1) {
        nvtxcorr_map_table_t *n = rebuild(t);
        if (n == NULL) { /* out of memory: the launch goes on without a cached label */
            map_lock_give();
            return;
        }
        atomic_store_explicit(&map->table, n, memory_order_release);
        t = n;
    }
    nvtxcorr_map_slot_t *s = slot_for(t, key);
    uintptr_t old = atomic_load_explicit(&s->key, memory_order_relaxed);
    if (old == 0) {
        atomic_store_explicit(&s->key, key, memory_order_release);
        atomic_store_explicit(&s->value, value, memory_order_release);
        t->used++;
    } else {
        if (old != key) atomic_store_explicit(&s->key, key, memory_order_release);
        atomic_store_explicit(&s->value, value, memory_order_release);
    }
    map_lock_give();
}

void nvtxcorr_map_clear_values(nvtxcorr_map_t *map)
{
    if (!map_lock_take()) return;
    nvtxcorr_map_table_t *t = atomic_load_explicit(&map->table, memory_order_relaxed);
    for (size_t i = 0; t && i <= t->mask; i++)
        atomic_store_explicit(&t->slots[i].value, NULL, memory_order_release);
    for (size_t i = 0; t && i <= t->mask; i++)
        if (key_at(t, i) == 0) trim(t, (i - 1) & t->mask);
    map_lock_give();
}

void nvtxcorr_map_fork(nvtxcorr_fork_t phase)
{
    if (phase == NVTXCORR_FORK_PREPARE) map_held = 1;
    nvtxcorr_fork_mutex(&map_lock, phase);
    if (phase != NVTXCORR_FORK_PREPARE) map_held = 0;
}
