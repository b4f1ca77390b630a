/* The context tree: every path of range names the program opened, interned once, an id per
 * node. Launches record an id (a thread-local load, context.h); pushes find the child of the
 * thread's current node by name, lock-free once it exists, so a program that opens the same
 * ranges every step takes no lock and allocates nothing after its first step. A new node is
 * made under one lock; nodes are never freed or changed, and the table never grows: it holds
 * NVTXCORR_CONTEXT_MAX_PATHS paths, after which every new path is the node ["[other]"]. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "context.h"
#include "core/attributes.h"
#include "labels/hash.h"
/* What program context counted of the program's NVTX use (context.h): the tree's own bounds
 * and the tool's (nvtx_tool.c). */
nvtxcorr_context_counts_t nvtxcorr_context_counts;
typedef struct node {
    uint32_t parent, hash;
    unsigned depth;
    size_t len;
    char name[];
} node_t;

static node_t root_node = {0, 0, 0, 0};
static struct {
    node_t n;
    char text[8];
} other_node = {{0, 0, 1, 7}, "[other]"};

static node_t *_Atomic nodes[NVTXCORR_CONTEXT_IDS] = {&root_node, &other_node.n};
static _Atomic uint32_t node_count = 2;
/* Open addressing, (parent, name) -> id + 1 (0: empty); a quarter full at most. */
enum { SLOTS = 1 << 18 };
static _Atomic uint32_t slots[SLOTS];
static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t nvtxcorr_context_hash(const char *s, size_t len)
{
    return nvtxcorr_fnv32(NVTXCORR_FNV32_START, s, len);
}

/* The slot hash of (parent, element): the element's own hash (computed once, while it is read
 * or registered) mixed with its parent. */
static uint32_t hash_of(uint32_t parent, uint32_t text_hash)
{
    uint32_t h = text_hash ^ (parent * 0x9E3779B1u);
    h ^= h >> 15;
    h *= 0x2c1b3c6dU;
    return h ^ (h >> 12);
}

static const node_t *node_at(uint32_t id)
{
    return id < atomic_load_explicit(&node_count, memory_order_acquire)
               ? atomic_load_explicit(&nodes[id], memory_order_acquire)
               : NULL;
}

/* Elements are short (a range's name): a plain loop. glibc's vector memcmp took three
 * quarters of a push's time on an 8-byte name (its page-crossing path, when the program's
 * string sits near the end of a page). */
static int same_text(const char *a, const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static uint32_t find(uint32_t parent, uint32_t h, const char *text, size_t len, size_t *at)
{
    for (size_t i = h & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
        uint32_t v = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (v == 0) {
            *at = i;
            return 0;
        }
        const node_t *n = atomic_load_explicit(&nodes[v - 1], memory_order_acquire);
        if (n->hash == h && n->parent == parent && n->len == len && same_text(n->name, text, len))
            return v;
    }
}

/* A fork while another thread makes a node: the lock is not taken at fork (a node is made
 * inside CUPTI's buffer callback too, which may hold driver locks that a fork handler of the
 * driver's would wait for), and the child gets a fresh one. A node half made in the parent is
 * either not there in the child (its count not yet stored: the slot is overwritten) or there
 * but not findable (its slot not yet stored: the path is made again, a second node with the
 * same path, which costs a row, never a wrong one). */
static void child_after_fork(void)
{
    pthread_mutex_init(&insert_lock, NULL);
}
static void at_fork(void)
{
    pthread_atfork(NULL, NULL, child_after_fork);
}

uint32_t nvtxcorr_context_child(uint32_t parent, const char *text, size_t len)
{
    return nvtxcorr_context_child_hashed(parent, text, len, nvtxcorr_context_hash(text, len));
}

uint32_t nvtxcorr_context_child_hashed(uint32_t parent, const char *text, size_t len,
                                       uint32_t text_hash)
{
    if (parent == NVTXCORR_CONTEXT_OTHER)
        return NVTXCORR_CONTEXT_OTHER; /* [other] has no children */
    uint32_t h = hash_of(parent, text_hash);
    size_t at;
    uint32_t v = find(parent, h, text, len, &at);
    if (NVTXCORR_LIKELY(v != 0)) return v - 1;
    /* A push from a signal handler that interrupted this thread's own insertion must not wait
     * for the lock it holds (nor malloc inside malloc): that path counts as [other]. */
    static __thread int inserting;
    if (inserting) {
        atomic_fetch_add_explicit(&nvtxcorr_context_counts.other, 1, memory_order_relaxed);
        return NVTXCORR_CONTEXT_OTHER;
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, at_fork);
    inserting = 1;
    pthread_mutex_lock(&insert_lock);
    uint32_t id = NVTXCORR_CONTEXT_OTHER;
    v = find(parent, h, text, len, &at); /* made meanwhile? */
    uint32_t count = atomic_load_explicit(&node_count, memory_order_relaxed);
    node_t *n;
    if (v != 0) {
        id = v - 1;
    } else if (count < NVTXCORR_CONTEXT_IDS && (n = malloc(sizeof *n + len + 1)) != NULL) {
        const node_t *p = node_at(parent);
        n->parent = parent, n->hash = h, n->len = len;
        n->depth = (p ? p->depth : 0) + 1;
        memcpy(n->name, text, len);
        n->name[len] = 0;
        id = count;
        atomic_store_explicit(&nodes[id], n, memory_order_release);
        atomic_store_explicit(&node_count, count + 1, memory_order_release);
        atomic_store_explicit(&slots[at], id + 1, memory_order_release);
    }
    pthread_mutex_unlock(&insert_lock);
    inserting = 0;
    if (id == NVTXCORR_CONTEXT_OTHER)
        atomic_fetch_add_explicit(&nvtxcorr_context_counts.other, 1, memory_order_relaxed);
    return id;
}

uint32_t nvtxcorr_context_join(uint32_t base, uint32_t path)
{
    uint32_t ids[NVTXCORR_CONTEXT_PATH_MAX];
    unsigned n = nvtxcorr_context_path(path, ids, NVTXCORR_CONTEXT_PATH_MAX);
    for (unsigned i = 0; i < n && base != NVTXCORR_CONTEXT_OTHER; i++) {
        const node_t *e = node_at(ids[i]);
        if (nvtxcorr_context_depth(base) >= NVTXCORR_CONTEXT_PATH_MAX) break;
        base = nvtxcorr_context_child(base, e->name, e->len);
    }
    return base;
}

uint32_t nvtxcorr_context_count(void)
{
    return atomic_load_explicit(&node_count, memory_order_acquire);
}

uint32_t nvtxcorr_context_parent(uint32_t id)
{
    const node_t *n = node_at(id);
    return n ? n->parent : 0;
}

unsigned nvtxcorr_context_depth(uint32_t id)
{
    const node_t *n = node_at(id);
    return n ? n->depth : 0;
}

const char *nvtxcorr_context_name(uint32_t id)
{
    const node_t *n = node_at(id);
    return n ? n->name : "";
}

unsigned nvtxcorr_context_path(uint32_t id, uint32_t *out, unsigned max)
{
    unsigned d = nvtxcorr_context_depth(id);
    for (unsigned i = d; i > 0 && id != 0; i--) { /* the outermost `max` when deeper */
        if (i <= max) out[i - 1] = id;
        id = nvtxcorr_context_parent(id);
    }
    return d < max ? d : max;
}
