/* Profile mode by program context (docs/profile.md, Context): statistics per (context, site),
 * the context being the node of the program's NVTX ranges open at the launch (src/context/).
 *
 *   CPU side   each launching thread owns an open-addressing table of (context, site) cells,
 *              written only by it, like its records (record.h): launches and CPU time. Kept only
 *              while an NVTX instance took nvtxcorr as its tool; without one every launch's
 *              context is [] and the summary derives those rows from the sites' own counts.
 *   GPU side   gpu.c, under its lock: each operation's (context, kernel site). A replayed
 *              kernel's context is the graph launch's live path, then the graph's label, then
 *              its node's capture path: the node's context is recorded when CUPTI reports the
 *              node created (on the thread that made it: stream capture or cuGraphAdd*Node) and
 *              passed on to the exec's node that CUPTI reports cloned from it at instantiation
 *              (gpu/cupti_launch.c). A node whose context is unknown counts under the launch's path
 * and graph label, and the summary's context_note says how many. Everything is bounded: a thread's
 * table and the GPU table hold at most 131,072 pairs each (twice the paths the tree holds), then a
 * new pair counts under ([other], site); the node map is direct-mapped (an old node is forgotten
 * when a new one takes its slot: its kernels then count as unknown). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "context/context.h"
#include "context_stats.h"
#include "core/fork.h"
#include "launch.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "stats.h"
enum {
    THREAD_SLOTS_MIN = 1 << 8,
    THREAD_SLOTS_MAX = 1 << 18,
    GPU_SLOTS = 1 << 18,
    NODE_SLOTS = 1 << 18
};

static inline uint64_t key_of(uint32_t ctx, uint32_t site)
{
    return (uint64_t)ctx << 32 | (site + 1u);
}
static inline size_t slot_of(uint64_t key, size_t n)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (n - 1);
}

/* ---- CPU side ----
 * A thread's table starts small and doubles when half full (the old one is left, never freed:
 * the summary may be reading it; its counts are copied first), up to THREAD_SLOTS_MAX. */
static size_t thread_slots(const prof_thread_t *t)
{
    return (size_t)THREAD_SLOTS_MIN << atomic_load_explicit(&t->ctx_shift, memory_order_acquire);
}

static prof_ctx_cell_t *cell_in(prof_ctx_cell_t *cells, size_t n, uint64_t key, int *made)
{
    for (size_t i = slot_of(key, n);; i = (i + 1) & (n - 1)) {
        uint64_t k = atomic_load_explicit(&cells[i].key, memory_order_relaxed);
        if (k == key) return &cells[i];
        if (k == 0) {
            *made = 1;
            atomic_store_explicit(&cells[i].key, key, memory_order_release);
            return &cells[i];
        }
    }
}

static prof_ctx_cell_t *grow(prof_thread_t *t, prof_ctx_cell_t *old)
{
    size_t n = old ? 2 * thread_slots(t) : THREAD_SLOTS_MIN;
    prof_ctx_cell_t *cells = nvtxcorr_prof_zalloc(n * sizeof *cells);
    if (cells == NULL) return NULL;
    for (size_t i = 0; old && i < thread_slots(t); i++) {
        uint64_t k = atomic_load_explicit(&old[i].key, memory_order_relaxed);
        int made = 0;
        if (k == 0) continue;
        prof_ctx_cell_t *c = cell_in(cells, n, k, &made);
        atomic_store_explicit(&c->launches,
                              atomic_load_explicit(&old[i].launches, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&c->ns, atomic_load_explicit(&old[i].ns, memory_order_relaxed),
                              memory_order_relaxed);
    }
    /* The table, then its size: a reader that loads the size first and the table second never
     * reads past a table's end (at worst half of a new one). */
    atomic_store_explicit(&t->ctx_cells, cells, memory_order_release);
    if (old) atomic_fetch_add_explicit(&t->ctx_shift, 1, memory_order_release);
    return cells;
}

prof_ctx_cell_t *nvtxcorr_prof_ctx_cell_slow(prof_thread_t *t, uint32_t ctx, uint32_t site)
{
    prof_ctx_cell_t *cells = atomic_load_explicit(&t->ctx_cells, memory_order_relaxed);
    if (cells == NULL && (cells = grow(t, NULL)) == NULL) return NULL;
    if (t->ctx_used >= thread_slots(t) / 2) {
        if (thread_slots(t) < THREAD_SLOTS_MAX && (cells = grow(t, cells)) == NULL) return NULL;
        if (t->ctx_used >= thread_slots(t) / 2 && ctx != NVTXCORR_CONTEXT_OTHER)
            ctx = NVTXCORR_CONTEXT_OTHER; /* full: the pair counts under [other] */
    }
    int made = 0;
    prof_ctx_cell_t *c = cell_in(cells, thread_slots(t), key_of(ctx, site), &made);
    t->ctx_used += (uint32_t)made;
    return c;
}

/* ---- GPU side (under gpu.c's lock) ---- */
typedef struct gpu_cell {
    uint64_t key, kernels, ns;
} gpu_cell_t;
/* Table 0: the whole run's; 1 and 2: the even and the odd windows' (gpu.c). */
static gpu_cell_t *gpu_tables[3];
static size_t gpu_used_in[3];
static uint64_t unknown_nodes, unknown_nodes_ns;
static int cut_gpu_table; /* the GPU table the rows read (nvtxcorr_prof_ctx_use_cut) */

void nvtxcorr_prof_ctx_gpu(int table, uint32_t ctx, uint32_t site, uint64_t ns)
{
    gpu_cell_t *cells = gpu_tables[table];
    if (cells == NULL &&
        (cells = gpu_tables[table] = nvtxcorr_prof_zalloc(GPU_SLOTS * sizeof *cells)) == NULL)
        return;
    size_t *used = &gpu_used_in[table];
    if (*used >= GPU_SLOTS / 2) ctx = NVTXCORR_CONTEXT_OTHER;
    uint64_t key = key_of(ctx, site);
    for (size_t i = slot_of(key, GPU_SLOTS);; i = (i + 1) & (GPU_SLOTS - 1)) {
        gpu_cell_t *c = &cells[i];
        if (c->key == 0) c->key = key, ++*used;
        if (c->key == key) {
            c->kernels++;
            c->ns += ns;
            return;
        }
    }
}

/* ---- graph nodes' capture context ---- */
typedef struct node_cell {
    uint64_t node; /* CUPTI's node id + 1; 0: empty */
    uint32_t ctx;
} node_cell_t;
static node_cell_t *node_cells;
static pthread_mutex_t node_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *node_why; /* why node context is unavailable (gpu/cupti_launch.c), or NULL */

void nvtxcorr_prof_ctx_node_unavailable(const char *why)
{
    node_why = why;
}

static node_cell_t *node_slot(uint64_t node)
{
    return &node_cells[slot_of(node + 1, NODE_SLOTS)];
}

void nvtxcorr_prof_ctx_node_set(uint64_t node, uint32_t ctx)
{
    pthread_mutex_lock(&node_lock);
    if (node_cells != NULL ||
        (node_cells = nvtxcorr_prof_zalloc(NODE_SLOTS * sizeof *node_cells)) != NULL)
        *node_slot(node) = (node_cell_t){node + 1, ctx};
    pthread_mutex_unlock(&node_lock);
}

int nvtxcorr_prof_ctx_node_get(uint64_t node, uint32_t *ctx)
{
    int found = 0;
    pthread_mutex_lock(&node_lock);
    if (node_cells != NULL && node_slot(node)->node == node + 1) {
        *ctx = node_slot(node)->ctx;
        found = 1;
    }
    pthread_mutex_unlock(&node_lock);
    return found;
}

void nvtxcorr_prof_ctx_node_clone(uint64_t original, uint64_t clone)
{
    uint32_t ctx;
    if (nvtxcorr_prof_ctx_node_get(original, &ctx)) nvtxcorr_prof_ctx_node_set(clone, ctx);
}

/* Not taken at fork: the graph node callbacks take it inside the driver's call, holding the
 * driver's own locks (which a fork handler of the driver's may take: a cycle). The child
 * re-initialises it; it reads no node context (CUPTI does not follow fork: no GPU time). */
void nvtxcorr_prof_ctx_fork(nvtxcorr_fork_t phase)
{
    if (phase == NVTXCORR_FORK_CHILD) pthread_mutex_init(&node_lock, NULL);
}

/* A replayed operation's context: the launch's live path, the graph's label, the node's
 * capture path. */
uint32_t nvtxcorr_prof_ctx_replayed(uint32_t live, const nvtxcorr_profile_site_t *graph,
                                    uint64_t node, int has_node, uint64_t ns)
{
    const char *label = graph->name;
    uint32_t base = nvtxcorr_context_child(live, label, strlen(label)), ctx;
    if (has_node && nvtxcorr_prof_ctx_node_get(node, &ctx)) return nvtxcorr_context_join(base, ctx);
    unknown_nodes++;
    unknown_nodes_ns += ns;
    return base;
}

/* ---- windows: the cells' counts at each cut ----
 * A window's rows are the difference between two cuts of every thread's cells, summed by
 * (context, site), made when the window is cut (the launches after it, in the next window,
 * are not in it). Three tables of CUT_SLOTS (the cut before, this one, their difference),
 * mapped when the first window is cut, on the window helper only. Each keeps the list of the
 * slots it uses, so that a cut costs what the program's pairs are, not the tables' size: it
 * empties and walks those slots alone, and touches no page of a table beyond them. */
typedef struct cut_cell {
    uint64_t key, launches, ns;
} cut_cell_t;
enum { CUT_SLOTS = 1 << 19 }; /* twice the pairs a thread's table holds */
typedef struct cut_table {
    cut_cell_t *cells;
    uint32_t *used; /* the slots with a key, in the order they were taken */
    size_t nused;
} cut_table_t;
static cut_table_t cut_tables[3];
static cut_table_t *cut_prev = &cut_tables[0], *cut_now = &cut_tables[1],
                   *cut_window = &cut_tables[2];
static int use_cut;

/* The cell of `key`, made when `add` (NULL: not there, or the table is full). */
static cut_cell_t *cut_cell(cut_table_t *t, uint64_t key, int add)
{
    size_t i = slot_of(key, CUT_SLOTS);
    for (size_t n = 0; n < CUT_SLOTS; i = (i + 1) & (CUT_SLOTS - 1), n++) {
        if (t->cells[i].key == key) return &t->cells[i];
        if (t->cells[i].key == 0) {
            if (!add) return NULL;
            t->cells[i].key = key;
            t->used[t->nused++] = (uint32_t)i;
            return &t->cells[i];
        }
    }
    return NULL;
}

static void cut_empty(cut_table_t *t)
{
    for (size_t i = 0; i < t->nused; i++)
        t->cells[t->used[i]] = (cut_cell_t){0};
    t->nused = 0;
}

void nvtxcorr_prof_ctx_cut(void)
{
    for (int i = 0; i < 3 && cut_window->cells == NULL; i++) {
        cut_tables[i].cells = nvtxcorr_prof_zalloc(CUT_SLOTS * sizeof *cut_tables[i].cells);
        cut_tables[i].used = nvtxcorr_prof_zalloc(CUT_SLOTS * sizeof *cut_tables[i].used);
        if (cut_tables[i].cells == NULL || cut_tables[i].used == NULL) {
            cut_window->cells = NULL;
            return;
        }
    }
    if (cut_window->cells == NULL) return;
    cut_empty(cut_now);
    cut_empty(cut_window);
    unsigned gen = atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed);
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_acquire); t;
         t = t->next) {
        if (atomic_load_explicit(&t->gen, memory_order_acquire) != gen) continue;
        size_t slots = thread_slots(t);
        prof_ctx_cell_t *cells = atomic_load_explicit(&t->ctx_cells, memory_order_acquire);
        for (size_t i = 0; cells && i < slots; i++) {
            uint64_t k = atomic_load_explicit(&cells[i].key, memory_order_acquire);
            cut_cell_t *c = k ? cut_cell(cut_now, k, 1) : NULL;
            if (c == NULL) continue;
            c->launches += atomic_load_explicit(&cells[i].launches, memory_order_relaxed);
            c->ns += atomic_load_explicit(&cells[i].ns, memory_order_relaxed);
        }
    }
    for (size_t i = 0; i < cut_now->nused; i++) {
        const cut_cell_t *now = &cut_now->cells[cut_now->used[i]];
        const cut_cell_t *was = cut_cell(cut_prev, now->key, 0);
        uint64_t n = was ? was->launches : 0, ns = was ? was->ns : 0;
        cut_cell_t *w = now->launches > n ? cut_cell(cut_window, now->key, 1) : NULL;
        if (w) w->launches = now->launches - n, w->ns = now->ns > ns ? now->ns - ns : 0;
    }
    cut_table_t *swap = cut_prev;
    cut_prev = cut_now, cut_now = swap;
}

void nvtxcorr_prof_ctx_use_cut(int use, unsigned window)
{
    use_cut = use && cut_window->cells != NULL;
    cut_gpu_table = window ? 1 + (int)(window & 1) : 0;
}

void nvtxcorr_prof_ctx_gpu_clear(unsigned window)
{
    int table = 1 + (int)(window & 1);
    if (gpu_tables[table]) memset(gpu_tables[table], 0, GPU_SLOTS * sizeof *gpu_tables[table]);
    gpu_used_in[table] = 0;
}

/* ---- the summary's rows ---- */
enum { ROWS_MAX = PROF_CTX_ROWS_MAX, ROW_SLOTS = 1 << 18 };
static prof_ctx_row_t *rows;
static size_t nrows;
static uint32_t *order, *row_index; /* row_index: (ctx, label) -> row + 1 */

static prof_ctx_row_t *row_for(uint32_t ctx, uint32_t site)
{
    const nvtxcorr_profile_site_t *s =
        atomic_load_explicit(&nvtxcorr_prof_sites[site], memory_order_acquire);
    /* Rows of one label meet: the label's id, or the site itself for a "-" rule. */
    uint32_t label = s && s->label_id != PROF_NO_LABEL ? s->label_id : 0x80000000u | site;
    uint64_t key = (uint64_t)ctx << 32 | label;
    size_t i = slot_of(key + 1, ROW_SLOTS);
    for (; row_index[i]; i = (i + 1) & (ROW_SLOTS - 1)) {
        prof_ctx_row_t *r = &rows[row_index[i] - 1];
        if (r->ctx == ctx && r->label == label) return r;
    }
    if (nrows >= ROWS_MAX) return NULL;
    prof_ctx_row_t *r = &rows[nrows++];
    *r = (prof_ctx_row_t){.ctx = ctx, .label = label, .site = site};
    row_index[i] = (uint32_t)nrows;
    return r;
}

static const char *row_label(const prof_ctx_row_t *r)
{
    if (!(r->label & 0x80000000u)) {
        const prof_label_t *l =
            atomic_load_explicit(&nvtxcorr_prof_labels[r->label], memory_order_acquire);
        if (l) return l->text;
    }
    const nvtxcorr_profile_site_t *s =
        atomic_load_explicit(&nvtxcorr_prof_sites[r->site], memory_order_acquire);
    return s ? s->function : "?";
}

/* Paths compare element by element from the outermost; a row sorts before its descendants. */
static int path_before(uint32_t a, uint32_t b)
{
    uint32_t pa[NVTXCORR_CONTEXT_PATH_MAX], pb[NVTXCORR_CONTEXT_PATH_MAX];
    unsigned na = nvtxcorr_context_path(a, pa, NVTXCORR_CONTEXT_PATH_MAX);
    unsigned nb = nvtxcorr_context_path(b, pb, NVTXCORR_CONTEXT_PATH_MAX);
    for (unsigned i = 0; i < na && i < nb; i++)
        if (pa[i] != pb[i]) {
            int c = strcmp(nvtxcorr_context_name(pa[i]), nvtxcorr_context_name(pb[i]));
            return c < 0;
        }
    return na < nb;
}

static int row_before(uint32_t a, uint32_t b)
{
    const prof_ctx_row_t *x = &rows[a], *y = &rows[b];
    if (x->ctx != y->ctx) return path_before(x->ctx, y->ctx);
    return strcmp(row_label(x), row_label(y)) < 0;
}

size_t nvtxcorr_prof_ctx_rows(const prof_ctx_row_t **out, const uint32_t **sorted,
                              const uint64_t *site_launches, const uint64_t *site_ns,
                              uint32_t nsites)
{
    if (rows == NULL) { /* mmap: the summary may be written from a signal handler */
        rows = nvtxcorr_prof_zalloc(ROWS_MAX * sizeof *rows);
        order = nvtxcorr_prof_zalloc(ROWS_MAX * sizeof *order);
        row_index = nvtxcorr_prof_zalloc(ROW_SLOTS * sizeof *row_index);
        if (rows == NULL || order == NULL || row_index == NULL) return 0;
    }
    nrows = 0;
    memset(row_index, 0, ROW_SLOTS * sizeof *row_index);
    static uint64_t tabled[PROF_MAX_SITES], tabled_ns[PROF_MAX_SITES];
    memset(tabled, 0, sizeof tabled);
    memset(tabled_ns, 0, sizeof tabled_ns);
    for (size_t i = 0; use_cut && i < cut_window->nused; i++) { /* a window's: its cut's */
        const cut_cell_t *c = &cut_window->cells[cut_window->used[i]];
        uint32_t site = (uint32_t)c->key - 1;
        if (site >= nsites) continue;
        tabled[site] += c->launches, tabled_ns[site] += c->ns;
        prof_ctx_row_t *r = row_for((uint32_t)(c->key >> 32), site);
        if (r) r->launches += c->launches, r->cpu_ns += c->ns;
    }
    unsigned gen = atomic_load_explicit(&nvtxcorr_prof_generation, memory_order_relaxed);
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_acquire);
         t && !use_cut; t = t->next) {
        if (atomic_load_explicit(&t->gen, memory_order_acquire) != gen) continue;
        size_t slots = thread_slots(t);
        prof_ctx_cell_t *cells = atomic_load_explicit(&t->ctx_cells, memory_order_acquire);
        for (size_t i = 0; cells && i < slots; i++) {
            uint64_t k = atomic_load_explicit(&cells[i].key, memory_order_acquire);
            uint64_t n = atomic_load_explicit(&cells[i].launches, memory_order_relaxed);
            uint32_t site = (uint32_t)k - 1;
            if (k == 0 || n == 0 || site >= nsites) continue;
            uint64_t ns = atomic_load_explicit(&cells[i].ns, memory_order_relaxed);
            tabled[site] += n, tabled_ns[site] += ns;
            prof_ctx_row_t *r = row_for((uint32_t)(k >> 32), site);
            if (r) r->launches += n, r->cpu_ns += ns;
        }
    }
    /* Launches no table holds were made with no range open (before the tool, or without). */
    for (uint32_t i = 0; i < nsites; i++) {
        if (site_launches[i] <= tabled[i]) continue;
        prof_ctx_row_t *r = row_for(NVTXCORR_CONTEXT_ROOT, i);
        if (r) {
            r->launches += site_launches[i] - tabled[i];
            r->cpu_ns += site_ns[i] > tabled_ns[i] ? site_ns[i] - tabled_ns[i] : 0;
        }
    }
    const gpu_cell_t *gpu_cells = gpu_tables[cut_gpu_table];
    for (size_t i = 0; gpu_cells && i < GPU_SLOTS; i++) {
        const gpu_cell_t *c = &gpu_cells[i];
        if (c->key == 0) continue;
        prof_ctx_row_t *r = row_for((uint32_t)(c->key >> 32), (uint32_t)c->key - 1);
        if (r) r->gpu_kernels += c->kernels, r->gpu_ns += c->ns;
    }
    for (size_t i = 0; i < nrows; i++)
        order[i] = (uint32_t)i;
    nvtxcorr_prof_sort(order, nrows, row_before);
    *out = rows;
    *sorted = order;
    return nrows;
}

const char *nvtxcorr_prof_ctx_row_label(const prof_ctx_row_t *r)
{
    return row_label(r);
}

/* ---- the note ---- */
static char note[512], none[512];

const char *nvtxcorr_prof_ctx_note(void)
{
    if (none[0]) return none;
    if (unknown_nodes == 0) return NULL;
    /* Async-signal-safe: no snprintf. */
    char count[24];
    count[nvtxcorr_fmt_u64(count, unknown_nodes)] = 0;
    const char *parts[] = {count, unknown_nodes == 1 ? " graph operation" : " graph operations",
                           " counted under their graph launch's path (live path and graph "
                           "label): their node's capture context is unknown (",
                           node_why ? node_why : "nodes made before CUPTI started, or forgotten",
                           ")"};
    nvtxcorr_prof_join(note, sizeof note, 0, parts, sizeof parts / sizeof *parts);
    return note;
}

void nvtxcorr_prof_ctx_set_note(const char *why)
{
    size_t n = strlen(why);
    if (n >= sizeof none) n = sizeof none - 1;
    memcpy(none, why, n);
    none[n] = 0;
}
