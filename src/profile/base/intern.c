/* String-keyed tables of profile mode: sites and labels (stats.c) and CUPTI's kernel names
 * (gpu.c). Chained, with a fixed number of buckets given by the caller, entries never
 * removed (a program has as many distinct names as it has, bounded by the callers); the
 * caller holds its own lock. The key is copied into its entry, one allocation per entry
 * (pages.c: no malloc on the program's threads). */
#include <stdlib.h>
#include <string.h>
#include "intern.h"
#include "labels/hash.h"
#include "pages.h"
static size_t bucket_of(const prof_intern_t *t, const char *key)
{
    return (size_t)(nvtxcorr_hash_str(key) % t->nbuckets);
}

const prof_intern_entry_t *nvtxcorr_prof_intern_find(const prof_intern_t *t, const char *key)
{
    for (const prof_intern_entry_t *e = t->buckets[bucket_of(t, key)]; e; e = e->next)
        if (!strcmp(e->key, key)) return e;
    return NULL;
}

const prof_intern_entry_t *nvtxcorr_prof_intern_add(prof_intern_t *t, const char *key, void *value)
{
    size_t n = strlen(key), b = bucket_of(t, key);
    prof_intern_entry_t *e = nvtxcorr_prof_alloc(sizeof *e + n + 1);
    if (e == NULL) return NULL;
    e->value = value;
    memcpy(e->key, key, n + 1);
    e->next = t->buckets[b];
    t->buckets[b] = e;
    t->count++;
    return e;
}
