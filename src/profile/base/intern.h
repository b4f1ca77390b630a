/* String-keyed tables (intern.c). */
#ifndef NVTXCORR_PROF_INTERN_H
#define NVTXCORR_PROF_INTERN_H

#include <stddef.h>

/* String-keyed tables (stats.c's sites and labels, gpu.c's CUPTI kernel names):
 * chained, `nbuckets` fixed, entries never removed; the caller locks. */
typedef struct prof_intern_entry {
    struct prof_intern_entry *next;
    void *value;
    char key[];
} prof_intern_entry_t;
typedef struct prof_intern {
    prof_intern_entry_t **buckets; /* [nbuckets] */
    size_t nbuckets, count;
} prof_intern_t;
const prof_intern_entry_t *nvtxcorr_prof_intern_find(const prof_intern_t *t, const char *key);
/* Adds key (copied) -> value; NULL when out of memory. */
const prof_intern_entry_t *nvtxcorr_prof_intern_add(prof_intern_t *t, const char *key, void *value);

#endif
