/* The handle map (src/handle_map.c): tombstones, their trim, their reuse by an insert, and the
 * rebuild that drops them. Keys are chosen by their home slot (nvtxcorr_map_hash) so that
 * clusters are built on purpose. */
#include "core/map.h"
#include "test_core.h"

#define VALUE ((void *)0x10)

static nvtxcorr_map_table_t *table_of(nvtxcorr_map_t *m)
{
    return atomic_load(&m->table);
}

static uintptr_t key_in(nvtxcorr_map_table_t *t, size_t i)
{
    return atomic_load(&t->slots[i & t->mask].key);
}

/* The n-th non-zero key (from *next on) whose home slot in a table of `mask` is `home`. */
static uintptr_t key_homed(uintptr_t *next, size_t mask, size_t home)
{
    while ((nvtxcorr_map_hash(*next) & mask) != home)
        ++*next;
    return (*next)++;
}

static void tombstones_and_trim(void)
{
    nvtxcorr_map_t m = {0};
    nvtxcorr_map_put(&m, (void *)1, VALUE); /* the first table: 256 slots */
    nvtxcorr_map_table_t *t = table_of(&m);
    CHECK(t != NULL);
    if (t == NULL) return;
    size_t mask = t->mask, home = (nvtxcorr_map_hash(1) + 100) & mask;
    uintptr_t next = 2;
    uintptr_t k1 = key_homed(&next, mask, home), k2 = key_homed(&next, mask, home),
              k3 = key_homed(&next, mask, home);
    nvtxcorr_map_put(&m, (void *)k1, VALUE);
    nvtxcorr_map_put(&m, (void *)k2, VALUE);
    nvtxcorr_map_put(&m, (void *)k3, VALUE);
    CHECK_EQ(key_in(t, home), k1);
    CHECK_EQ(key_in(t, home + 1), k2);
    CHECK_EQ(key_in(t, home + 2), k3);
    CHECK_EQ(key_in(t, home + 3), 0);
    CHECK_EQ(t->used, 4);

    /* Inside a cluster a removal leaves a tombstone: the key behind it is still reached. */
    nvtxcorr_map_put(&m, (void *)k2, NULL);
    CHECK_EQ(key_in(t, home + 1), k2);
    CHECK(nvtxcorr_map_get(&m, (void *)k2) == NULL);
    CHECK(nvtxcorr_map_get(&m, (void *)k3) == VALUE);
    CHECK_EQ(t->used, 4);

    /* An insert homed there takes the first tombstone on its path. */
    uintptr_t k4 = key_homed(&next, mask, home);
    nvtxcorr_map_put(&m, (void *)k4, VALUE);
    CHECK_EQ(key_in(t, home + 1), k4);
    CHECK(nvtxcorr_map_get(&m, (void *)k4) == VALUE);
    CHECK_EQ(t->used, 4);

    /* Removing the cluster's end trims it, and the tombstone that then ends it too. */
    nvtxcorr_map_put(&m, (void *)k4, NULL);
    nvtxcorr_map_put(&m, (void *)k3, NULL);
    CHECK_EQ(key_in(t, home + 2), 0);
    CHECK_EQ(key_in(t, home + 1), 0);
    CHECK_EQ(key_in(t, home), k1);
    CHECK_EQ(t->used, 2);
    CHECK(nvtxcorr_map_get(&m, (void *)k1) == VALUE);

    /* Clearing every value leaves no key behind. */
    nvtxcorr_map_clear_values(&m);
    CHECK_EQ(t->used, 0);
    for (size_t i = 0; i <= mask; i++)
        CHECK_EQ(key_in(t, i), 0);
    CHECK(nvtxcorr_map_get(&m, (void *)k1) == NULL);
}

static void rebuild_drops_tombstones(void)
{
    nvtxcorr_map_t m = {0};
    enum { N = 127 };
    for (uintptr_t k = 1; k <= N; k++)
        nvtxcorr_map_put(&m, (void *)(k * 4096), VALUE);
    nvtxcorr_map_table_t *t = table_of(&m);
    CHECK(t != NULL);
    if (t == NULL) return;
    CHECK_EQ(t->mask, 255);
    /* Remove every other key: whatever is not trimmed stays as a tombstone, counted used. */
    for (uintptr_t k = 1; k <= N; k += 2)
        nvtxcorr_map_put(&m, (void *)(k * 4096), NULL);
    size_t used_before = t->used, live = N / 2;
    CHECK(used_before >= live);
    /* Fill until the table is half used: the next insert rebuilds it. */
    uintptr_t k = N + 1;
    while (table_of(&m) == t)
        nvtxcorr_map_put(&m, (void *)(k++ * 4096), VALUE), live++;
    nvtxcorr_map_table_t *n = table_of(&m);
    CHECK(n->older == t); /* kept for readers still walking it */
    CHECK_EQ(n->used, live);
    /* Sized for the live entries at the rebuild (all but the last insert) plus one. */
    size_t cap = 256;
    while (live * 4 > cap)
        cap *= 2;
    CHECK_EQ(n->mask + 1, cap);
    size_t keys = 0, tombstones = 0;
    for (size_t i = 0; i <= n->mask; i++) {
        if (key_in(n, i) == 0) continue;
        keys++;
        tombstones += atomic_load(&n->slots[i].value) == NULL;
    }
    CHECK_EQ(keys, live);
    CHECK_EQ(tombstones, 0);
    for (uintptr_t j = 1; j < k; j++)
        CHECK(nvtxcorr_map_get(&m, (void *)(j * 4096)) == (j <= N && j % 2 ? NULL : VALUE));
}

void test_map(void)
{
    tombstones_and_trim();
    rebuild_drops_tombstones();
}
