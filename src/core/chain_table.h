/* A growable chained hash table, intrusive: the entry embeds a link (nvtxcorr_chain_link_t)
 * that holds its hash, so the table allocates only its bucket array and never copies or frees
 * an entry. It doubles when it averages two entries per bucket, so the 100,000th insert costs
 * what the first did. It has no lock of its own: each user guards it with its own mutex, which
 * fork handling already covers (emit.c's label intern, kernels.c's records, both slow paths).
 * Entries are never removed: readers of an entry may hold it for the life of the process. */
#ifndef NVTXCORR_CHAIN_TABLE_H
#define NVTXCORR_CHAIN_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct nvtxcorr_chain_link {
    struct nvtxcorr_chain_link *next;
    uint64_t hash;
} nvtxcorr_chain_link_t;

typedef struct nvtxcorr_chain_table {
    nvtxcorr_chain_link_t **buckets; /* NULL until the first reserve, or when out of memory */
    size_t bucket_count, count;
} nvtxcorr_chain_table_t;

/* Grows the table if one more entry would make it too full. 0, or -1 when it has no buckets
 * at all (out of memory before the first); a failed growth keeps the old buckets. */
int nvtxcorr_chain_reserve(nvtxcorr_chain_table_t *t);

/* The first link of hash's chain (the table reserved); follow ->next, compare ->hash first. */
static inline nvtxcorr_chain_link_t *nvtxcorr_chain_first(const nvtxcorr_chain_table_t *t,
                                                          uint64_t hash)
{
    return t->buckets[hash & (t->bucket_count - 1)];
}

/* Adds an entry's link under hash, at the head of its chain (the table reserved). */
void nvtxcorr_chain_insert(nvtxcorr_chain_table_t *t, nvtxcorr_chain_link_t *link, uint64_t hash);

#endif
