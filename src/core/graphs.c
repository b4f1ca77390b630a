/* CUDA graphs: what a graph launch is labelled with. Framework annotations fire when a graph
 * is captured, never when it is replayed; a range around each replay is what users lack,
 * provided it says which graph it is.
 *
 * At every successful instantiation (any variant, any path) the exec handle gets a record:
 * its ordinal N (graph#N, in order of instantiation in the process), node and kernel-node
 * counts, its most frequent kernel, and a signature: a 32-bit FNV-1a hash of the ordered
 * kernel names and launch dimensions, so the same program with the same inputs gets the same
 * names on every run. The label table's graph: rules match on those keys. An update
 * recomputes the contents and keeps N; a destroy drops the record before the handle can be
 * reused. Optionally an NVTX mark summarises the contents at instantiation. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtxcorr/nvtxcorr.h>
#include "config.h"
#include "cuda_calls.h"
#include "emit.h"
#include "fork.h"
#include "graphs.h"
#include "kernels.h"
#include "labels/hash.h"
#include "labels/labels.h"
#include "labels/names.h"
#include "log.h"
#include "map.h"
#include "record.h"
#include "slowstack.h"
#include "state.h"
/* The listener of the graph event (graphs.h): set once, by profile mode's
 * initialisation, before the mode says PROFILE; read with acquire, so the listener's own state
 * is seen set up. */
static _Atomic(nvtxcorr_graph_event_fn) graph_listener;

void nvtxcorr_on_graph_event(nvtxcorr_graph_event_fn fn)
{
    atomic_store_explicit(&graph_listener, fn, memory_order_release);
}

static int graph_event_wanted(void)
{
    return atomic_load_explicit(&graph_listener, memory_order_acquire) != NULL;
}

static void graph_event(const char *text)
{
    nvtxcorr_graph_event_fn fn = atomic_load_explicit(&graph_listener, memory_order_acquire);
    if (fn) fn(text);
}

static nvtxcorr_map_t ordinals; /* CUgraphExec -> its ordinal N, as a pointer-sized integer */
static _Atomic unsigned instantiations;

/* Graph labels usually embed the ordinal, so each instantiation has a label of its own. Their
 * records (record.h: the label, no names, profile mode's site slot) are owned per exec and
 * recycled through a free list when the exec is destroyed or updated, so a program that
 * instantiates in a loop does not grow. (A launch racing with a destroy of the same exec, which
 * CUDA forbids, could see a recycled label: valid memory, wrong text.) */
typedef struct graph_label {
    nvtxcorr_record_t record; /* first: the map value */
    char text[NVTXCORR_LABEL_MAX];
    struct graph_label *next_free;
} graph_label_t;

static nvtxcorr_map_t owned; /* CUgraphExec -> graph_label_t */
static graph_label_t *free_labels;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

static graph_label_t *label_take(void)
{
    pthread_mutex_lock(&free_lock);
    graph_label_t *g = free_labels;
    if (g) free_labels = g->next_free;
    pthread_mutex_unlock(&free_lock);
    return g ? g : calloc(1, sizeof *g);
}

static void label_give_back(graph_label_t *g)
{
    if (g == NULL) return;
    pthread_mutex_lock(&free_lock);
    g->next_free = free_labels;
    free_labels = g;
    pthread_mutex_unlock(&free_lock);
}

void nvtxcorr_graphs_fork(nvtxcorr_fork_t phase)
{
    nvtxcorr_fork_mutex(&free_lock, phase);
}

typedef CUresult (*get_nodes_fn)(CUgraph, CUgraphNode *, size_t *);
typedef CUresult (*node_type_fn)(CUgraphNode, CUgraphNodeType *);
typedef CUresult (*kernel_params_fn)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2 *);
typedef CUresult (*child_graph_fn)(CUgraphNode, CUgraph *);

/* The driver's graph queries, for one walk (driver.c resolves each once). */
typedef struct graph_queries {
    get_nodes_fn get_nodes;
    node_type_fn node_type;
    kernel_params_fn kernel_params;
    child_graph_fn child_graph;
} graph_queries_t;

typedef struct kernel_node {
    const char *base;  /* into names: an offset until top_kernels, then a pointer */
    const char *label; /* the kernel's own label text */
} kernel_node_t;

typedef struct contents {
    unsigned nodes, kernels;
    uint32_t sig;
    kernel_node_t *list;
    size_t cap;
    char *names; /* base names, '\0'-separated */
    size_t names_len, names_cap;
} contents_t;

static void add_kernel(contents_t *c, const void *f, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    char raw[1024], storage[3 * 1024];
    if (f == NULL || nvtxcorr_function_name(f, raw, sizeof raw) != 0)
        snprintf(raw, sizeof raw, "%s", NVTXCORR_UNKNOWN_KERNEL);
    unsigned dims[6] = {p->gridDimX,  p->gridDimY,  p->gridDimZ,
                        p->blockDimX, p->blockDimY, p->blockDimZ};
    c->sig = nvtxcorr_fnv32(nvtxcorr_fnv32(c->sig, raw, strlen(raw) + 1), dims, sizeof dims);

    nvtxcorr_kernel_names_t names;
    nvtxcorr_names_from_mangled(raw, &names, storage, sizeof storage);
    size_t len = strlen(names.function) + 1;
    if (c->kernels == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        kernel_node_t *l = realloc(c->list, cap * sizeof *l);
        if (l == NULL) return;
        c->list = l, c->cap = cap;
    }
    if (c->names_len + len > c->names_cap) {
        size_t cap = (c->names_cap + len) * 2;
        char *n = realloc(c->names, cap);
        if (n == NULL) return;
        c->names = n, c->names_cap = cap;
    }
    memcpy(c->names + c->names_len, names.function, len);
    /* An offset while c->names may still be reallocated; top_kernels makes it a pointer. */
    c->list[c->kernels].base = (const char *)(uintptr_t)c->names_len;
    const void *v = nvtxcorr_map_get(&nvtxcorr_function_labels, f);
    if (v == NULL && f) v = nvtxcorr_function_label_slow(f);
    const nvtxcorr_label_t *l = nvtxcorr_label_of(v);
    c->list[c->kernels].label = l && !l->skip ? l->text : "-";
    c->names_len += len;
    c->kernels++;
}

static void walk(contents_t *c, const graph_queries_t *q, CUgraph g, int depth)
{
    size_t n = 0;
    if (depth > 8 || q->get_nodes == NULL || q->get_nodes(g, NULL, &n) != CUDA_SUCCESS || !n)
        return;
    CUgraphNode *nodes = calloc(n, sizeof *nodes);
    if (nodes == NULL || q->get_nodes(g, nodes, &n) != CUDA_SUCCESS) {
        free(nodes);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType type;
        c->nodes++;
        if (q->node_type == NULL || q->node_type(nodes[i], &type) != CUDA_SUCCESS) continue;
        if (type == CU_GRAPH_NODE_TYPE_KERNEL && q->kernel_params) {
            CUDA_KERNEL_NODE_PARAMS_v2 p;
            memset(&p, 0, sizeof p);
            if (q->kernel_params(nodes[i], &p) == CUDA_SUCCESS)
                add_kernel(c, p.func ? (const void *)p.func : (const void *)p.kern, &p);
        } else if (type == CU_GRAPH_NODE_TYPE_GRAPH && q->child_graph) {
            CUgraph child = NULL;
            if (q->child_graph(nodes[i], &child) == CUDA_SUCCESS && child)
                walk(c, q, child, depth + 1);
        }
    }
    free(nodes);
}

static int by_base(const void *a, const void *b)
{
    const kernel_node_t *x = a, *y = b;
    int d = strcmp(x->base, y->base);
    return d ? d : strcmp(x->label, y->label);
}

typedef struct top_entry {
    const char *base, *label;
    unsigned count;
} top_entry_t;

/* The three most frequent kernels (ties: alphabetical), from a base-name-sorted copy. Turns
 * the base offsets into pointers first: the walk is over, so c->names no longer moves. */
static unsigned top_kernels(contents_t *c, top_entry_t top[3])
{
    unsigned found = 0;
    for (unsigned i = 0; i < c->kernels; i++)
        c->list[i].base = c->names + (uintptr_t)c->list[i].base;
    if (c->kernels == 0) return 0;
    kernel_node_t *sorted = malloc(c->kernels * sizeof *sorted);
    if (sorted == NULL) return 0;
    memcpy(sorted, c->list, c->kernels * sizeof *sorted);
    qsort(sorted, c->kernels, sizeof *sorted, by_base);
    for (unsigned i = 0; i < c->kernels;) {
        unsigned j = i;
        while (j < c->kernels && !strcmp(sorted[j].base, sorted[i].base))
            j++;
        top_entry_t e = {sorted[i].base, sorted[i].label, j - i};
        unsigned pos = found; /* runs arrive alphabetically: only a larger count moves up */
        while (pos > 0 && e.count > top[pos - 1].count)
            pos--;
        if (pos < 3) {
            for (unsigned m = found < 3 ? found : 2; m > pos; m--)
                top[m] = top[m - 1];
            top[pos] = e;
            if (found < 3) found++;
        }
        i = j;
    }
    free(sorted);
    return found;
}

/* Matches the graph's keys against the label table and makes the result `exec`'s label,
 * recycling the one it replaces (an update). Returns the label, or NULL when out of memory:
 * launches of `exec` then take the slow path to the shared "graph#?" label. */
static const nvtxcorr_label_t *install_label(CUgraphExec exec, const nvtxcorr_graph_keys_t *keys)
{
    nvtxcorr_label_result_t res;
    nvtxcorr_match_lock();
    nvtxcorr_labels_match_graph(nvtxcorr_labels_in_use, keys, &res);
    nvtxcorr_match_unlock();
    graph_label_t *g = label_take();
    const nvtxcorr_label_t *l = NULL;
    if (g) {
        snprintf(g->text, sizeof g->text, "%s", res.label);
        nvtxcorr_label_init(&g->record.label, g->text, res.has_color, res.color, res.category,
                            res.skip);
        atomic_store_explicit(&g->record.site, NULL, memory_order_relaxed); /* a recycled one's */
        l = &g->record.label;
    }
    graph_label_t *old = nvtxcorr_map_get(&owned, exec);
    nvtxcorr_map_put(&nvtxcorr_graph_labels, exec, nvtxcorr_label_value(l));
    nvtxcorr_map_put(&owned, exec, g);
    label_give_back(old);
    return l;
}

/* The summary the graph mark and the profile trace carry: "<verb> <descriptor>: <label>;
 * top: <base> x<count> (<its label>), ...". */
static void format_summary(char *text, size_t size, const char *verb,
                           const nvtxcorr_graph_keys_t *keys, const nvtxcorr_label_t *l,
                           const top_entry_t *top, unsigned ntop)
{
    char desc[512];
    nvtxcorr_graph_descriptor(keys, desc, sizeof desc);
    int n = snprintf(text, size, "%s %s: %s; top:", verb, desc, l && !l->skip ? l->text : "-");
    for (unsigned i = 0; i < ntop && n > 0 && (size_t)n < size; i++)
        n += snprintf(text + n, size - (size_t)n, "%s %s x%u (%s)", i ? "," : "", top[i].base,
                      top[i].count, top[i].label);
}

/* Says what was instantiated: a mark to the NVTX tool (when graph marks are on), the same text
 * to whoever listens for graph events (profile mode's trace), and a debug log line. */
static void announce(const char *verb, const nvtxcorr_graph_keys_t *keys, const nvtxcorr_label_t *l,
                     const top_entry_t *top, unsigned ntop)
{
    int mark = nvtxcorr_config.graph_marks && nvtxcorr_domain != NULL;
    if (mark || graph_event_wanted()) {
        char text[1024];
        format_summary(text, sizeof text, verb, keys, l, top, ntop);
        if (mark) nvtxcorr_emit_mark(text, NVTXCORR_CATEGORY_GRAPH);
        graph_event(text);
    }
    if (NVTXCORR_LOG_ON(NVTXCORR_LOG_DEBUG)) {
        char desc[512];
        nvtxcorr_graph_descriptor(keys, desc, sizeof desc);
        nvtxcorr_log(NVTXCORR_LOG_DEBUG, "%s %s -> %s", verb, desc, l ? l->text : "?");
    }
}

/* Reads the graph's contents, labels `exec` from them and announces it. */
static void describe(CUgraphExec exec, CUgraph graph, unsigned ordinal, int updated)
{
    const graph_queries_t q = {
        (get_nodes_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuGraphGetNodes),
        (node_type_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuGraphNodeGetType),
        (kernel_params_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuGraphKernelNodeGetParams_v2),
        (child_graph_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuGraphChildGraphNodeGetGraph),
    };
    contents_t c = {.sig = NVTXCORR_FNV32_START};
    walk(&c, &q, graph, 0);
    top_entry_t top[3] = {{0}};
    unsigned ntop = top_kernels(&c, top);

    char sig[16];
    snprintf(sig, sizeof sig, "%08x", c.sig);
    nvtxcorr_graph_keys_t keys = {ordinal, c.nodes, c.kernels, sig, ntop ? top[0].base : ""};
    const nvtxcorr_label_t *l = install_label(exec, &keys);
    announce(updated ? "updated" : "instantiated", &keys, l, top, ntop);
    free(c.list);
    free(c.names);
}

typedef struct describe_job {
    CUgraphExec exec;
    CUgraph graph;
    unsigned ordinal;
    int updated;
} describe_job_t;

static void describe_on_slow_stack(void *arg)
{
    describe_job_t *job = arg;
    describe(job->exec, job->graph, job->ordinal, job->updated);
}

void nvtxcorr_graph_instantiated(CUgraphExec exec, CUgraph graph)
{
    unsigned ordinal = atomic_fetch_add_explicit(&instantiations, 1, memory_order_relaxed) + 1;
    nvtxcorr_map_put(&ordinals, exec, (void *)(uintptr_t)ordinal);
    describe_job_t job = {exec, graph, ordinal, 0};
    nvtxcorr_on_slow_stack(describe_on_slow_stack, &job);
}

void nvtxcorr_graph_updated(CUgraphExec exec, CUgraph graph)
{
    unsigned ordinal = (unsigned)(uintptr_t)nvtxcorr_map_get(&ordinals, exec);
    describe_job_t job = {exec, graph, ordinal, 1};
    if (ordinal) nvtxcorr_on_slow_stack(describe_on_slow_stack, &job);
}

void nvtxcorr_graph_destroyed(CUgraphExec exec)
{
    if (nvtxcorr_map_get(&ordinals, exec) == NULL) return;
    graph_label_t *old = nvtxcorr_map_get(&owned, exec);
    nvtxcorr_map_put(&ordinals, exec, NULL);
    nvtxcorr_map_put(&nvtxcorr_graph_labels, exec, NULL);
    nvtxcorr_map_put(&owned, exec, NULL);
    label_give_back(old);
}

/* An exec we never saw instantiated (made before NVTX was attached, or on a path we do not
 * see): one shared label, not cached per handle, so a later instantiation still wins. */
const void *nvtxcorr_graph_label_slow(const void *exec)
{
    static nvtxcorr_record_t *_Atomic unknown;
    (void)exec;
    nvtxcorr_record_t *r = atomic_load_explicit(&unknown, memory_order_acquire);
    if (r == NULL) {
        const nvtxcorr_label_t *l = nvtxcorr_label_make("graph#?", 0, 0, NULL, 0);
        nvtxcorr_record_t *fresh = l ? calloc(1, sizeof *fresh) : NULL;
        if (fresh == NULL) return NULL; /* out of memory: no range */
        fresh->label = *l;
        nvtxcorr_record_t *expected = NULL; /* two first launches at once: one record stays */
        if (atomic_compare_exchange_strong_explicit(&unknown, &expected, fresh,
                                                    memory_order_acq_rel, memory_order_acquire))
            r = fresh;
        else {
            free(fresh);
            r = expected;
        }
    }
    return nvtxcorr_record_value(r);
}
