/* The growable chained hash table of emit.c's label intern and kernels.c's records
 * (chain_table.h). */
#include <stdlib.h>
#include "chain_table.h"
int nvtxcorr_chain_reserve(nvtxcorr_chain_table_t *t)
{
    if (t->count >= t->bucket_count * 2) {
        size_t n = t->bucket_count ? t->bucket_count * 2 : 1024;
        nvtxcorr_chain_link_t **nb = calloc(n, sizeof *nb);
        if (nb != NULL) { /* else the old buckets stay */
            for (size_t i = 0; i < t->bucket_count; i++)
                for (nvtxcorr_chain_link_t *e = t->buckets[i], *next; e; e = next) {
                    next = e->next;
                    e->next = nb[e->hash & (n - 1)];
                    nb[e->hash & (n - 1)] = e;
                }
            free(t->buckets);
            t->buckets = nb;
            t->bucket_count = n;
        }
    }
    return t->buckets ? 0 : -1;
}

void nvtxcorr_chain_insert(nvtxcorr_chain_table_t *t, nvtxcorr_chain_link_t *link, uint64_t hash)
{
    nvtxcorr_chain_link_t **b = &t->buckets[hash & (t->bucket_count - 1)];
    link->hash = hash;
    link->next = *b;
    *b = link;
    t->count++;
}
