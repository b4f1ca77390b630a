/*
 * Fake CUDA driver: graphs, graph nodes and executable graphs.
 *
 * A graph is a list of nodes; edges are not modelled because nothing in nvtxcorr looks at them.
 * Kernel nodes keep their function (or kernel), grid and block; child-graph nodes own a copy of
 * the graph a capture recorded.  An executable graph owns a private copy of its graph, so the
 * source graph may be changed or destroyed afterwards, and knows how many kernels one launch
 * runs (child graphs included).
 *
 * Executable graphs are recycled through a LIFO free list and never returned to malloc: after
 * cuGraphExecDestroy the next instantiation gets the very same CUgraphExec value.  Real drivers
 * reuse handles too, and the profiler must not confuse the new graph with the old one; the
 * handle-reuse tests depend on this.  With FAKECUDA_FRESH_EXECS=1 the handle value is
 * instead the exec's address mixed with a per-instantiation generation (bits 47 and up, and
 * XORed into bits 4-20 so that handle hashes spread): every instantiation, up to 2^17 of them,
 * gets a value never seen before, as with a driver whose allocator does not reuse at once.
 */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <stdlib.h>
#include <string.h>

pthread_mutex_t fk_graph_lock = PTHREAD_MUTEX_INITIALIZER;

struct fk_exec {
    uint32_t magic;
    uint32_t id;             /* for the activity side channel: instantiation number, from 1 */
    struct fk_graph *graph;  /* private copy */
    _Atomic size_t nkernels; /* kernels one launch runs, read by the launch path */
    struct fk_exec *next_free;
};

static struct fk_exec *fk_exec_free_list;
static struct fk_graph fk_graphs = {.prev = &fk_graphs, .next = &fk_graphs};
static pthread_mutex_t fk_graphs_lock = PTHREAD_MUTEX_INITIALIZER; /* the list only */

void fk_graphs_fork(int phase)
{
    if (phase == 0)
        pthread_mutex_lock(&fk_graphs_lock);
    else if (phase == 1)
        pthread_mutex_unlock(&fk_graphs_lock);
    else
        pthread_mutex_init(&fk_graphs_lock, NULL);
}

/* ---- graph objects (callers hold fk_graph_lock where the graph may be shared) ---------------- */

struct fk_graph *fk_graph_new(void)
{
    struct fk_graph *g = calloc(1, sizeof(*g));
    if (g == NULL) return NULL;
    g->magic = FK_MAGIC_GRAPH;
    pthread_mutex_lock(&fk_graphs_lock);
    g->next = fk_graphs.next;
    g->prev = &fk_graphs;
    g->next->prev = g;
    fk_graphs.next = g;
    pthread_mutex_unlock(&fk_graphs_lock);
    return g;
}

void fk_graph_free(struct fk_graph *g)
{
    if (g == NULL) return;
    for (size_t i = 0; i < g->n; i++) {
        fk_graph_free(g->nodes[i]->child);
        g->nodes[i]->magic = 0;
        free(g->nodes[i]);
    }
    free(g->nodes);
    g->magic = 0;
    pthread_mutex_lock(&fk_graphs_lock);
    g->prev->next = g->next;
    g->next->prev = g->prev;
    pthread_mutex_unlock(&fk_graphs_lock);
    free(g);
}

struct fk_node *fk_graph_add_node(struct fk_graph *g, CUgraphNodeType type)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        struct fk_node **nodes = realloc(g->nodes, cap * sizeof(*nodes));
        if (nodes == NULL) return NULL;
        g->nodes = nodes;
        g->cap = cap;
    }
    struct fk_node *n = calloc(1, sizeof(*n));
    if (n == NULL) return NULL;
    static _Atomic unsigned long long next_id;
    n->magic = FK_MAGIC_NODE;
    n->id = atomic_fetch_add(&next_id, 1) + 1;
    n->type = type;
    n->graph = g;
    g->nodes[g->n++] = n;
    return n;
}

struct fk_graph *fk_graph_clone(const struct fk_graph *g)
{
    struct fk_graph *c = fk_graph_new();
    if (c == NULL || g == NULL) return c;
    for (size_t i = 0; i < g->n; i++) {
        const struct fk_node *src = g->nodes[i];
        struct fk_node *dst = fk_graph_add_node(c, src->type);
        if (dst == NULL) goto fail;
        dst->func = src->func;
        dst->kern = src->kern;
        memcpy(dst->grid, src->grid, sizeof(dst->grid));
        memcpy(dst->block, src->block, sizeof(dst->block));
        dst->shmem = src->shmem;
        if (src->child != NULL && (dst->child = fk_graph_clone(src->child)) == NULL) goto fail;
    }
    return c;
fail:
    fk_graph_free(c);
    return NULL;
}

static size_t fk_graph_kernels(const struct fk_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; g != NULL && i < g->n; i++) {
        if (g->nodes[i]->type == CU_GRAPH_NODE_TYPE_KERNEL)
            n++;
        else if (g->nodes[i]->child != NULL)
            n += fk_graph_kernels(g->nodes[i]->child);
    }
    return n;
}

/* Same node count and types, recursively: what cuGraphExecUpdate can take. */
static int fk_same_topology(const struct fk_graph *a, const struct fk_graph *b, size_t *bad)
{
    if (a->n != b->n) {
        *bad = a->n < b->n ? a->n : b->n;
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        const struct fk_node *x = a->nodes[i], *y = b->nodes[i];
        if (x->type != y->type || (x->child == NULL) != (y->child == NULL) ||
            (x->child != NULL && !fk_same_topology(x->child, y->child, &(size_t){0}))) {
            *bad = i;
            return 0;
        }
    }
    return 1;
}

static struct fk_node *fk_node_get(CUgraphNode h)
{
    struct fk_node *n = (struct fk_node *)h;
    return n != NULL && n->magic == FK_MAGIC_NODE ? n : NULL;
}

/* ---- graph entry points ---------------------------------------------------------------------- */

FK_API CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    if (phGraph == NULL || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    struct fk_graph *g = fk_graph_new();
    if (g == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphDestroy(CUgraph hGraph)
{
    if (!fk_graph_valid(hGraph)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_graph_lock);
    fk_graph_free((struct fk_graph *)hGraph);
    pthread_mutex_unlock(&fk_graph_lock);
    return CUDA_SUCCESS;
}

static CUresult fk_add_kernel_node(CUgraphNode *phNode, CUgraph hGraph, const CUgraphNode *deps,
                                   size_t ndeps, CUfunction func, CUkernel kern,
                                   const unsigned grid[3], const unsigned block[3], unsigned shmem)
{
    if (phNode == NULL || !fk_graph_valid(hGraph) || (ndeps > 0 && deps == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    /* func wins when both are set (kern "will only be referenced if func is NULL"). */
    if (func == NULL && kern != NULL) {
        struct fk_func *k = (struct fk_func *)kern;
        if (!fk_func_valid(k) || k->kind != FK_KIND_KERNEL) return CUDA_ERROR_INVALID_VALUE;
        func = (CUfunction)k->twin;
    } else if (fk_func_valid(func) && ((struct fk_func *)func)->kind == FK_KIND_KERNEL) {
        kern = (CUkernel)func;
    } else {
        kern = NULL;
    }
    if (!fk_func_valid(func)) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 3; i++)
        if (grid[i] == 0 || block[i] == 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_graph_lock);
    for (size_t i = 0; i < ndeps; i++) {
        struct fk_node *d = fk_node_get(deps[i]);
        if (d == NULL || d->graph != (struct fk_graph *)hGraph) {
            pthread_mutex_unlock(&fk_graph_lock);
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    struct fk_node *n = fk_graph_add_node((struct fk_graph *)hGraph, CU_GRAPH_NODE_TYPE_KERNEL);
    if (n != NULL) {
        n->func = func;
        n->kern = kern;
        memcpy(n->grid, grid, sizeof(n->grid));
        memcpy(n->block, block, sizeof(n->block));
        n->shmem = shmem;
        *phNode = (CUgraphNode)n;
        fk_node_created(n);
    }
    pthread_mutex_unlock(&fk_graph_lock);
    return n != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FK_API CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                     const CUgraphNode *dependencies, size_t numDependencies,
                                     const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    if (p == NULL) return CUDA_ERROR_INVALID_VALUE;
    const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    return fk_add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies, p->func, NULL,
                              grid, block, p->sharedMemBytes);
}

FK_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (p == NULL) return CUDA_ERROR_INVALID_VALUE;
    const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    return fk_add_kernel_node(phGraphNode, hGraph, dependencies, numDependencies, p->func, p->kern,
                              grid, block, p->sharedMemBytes);
}

FK_API CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    if (!fk_graph_valid(hGraph) || numNodes == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_graph *g = (struct fk_graph *)hGraph;
    pthread_mutex_lock(&fk_graph_lock);
    if (nodes == NULL) {
        *numNodes = g->n;
    } else {
        /* Fill what fits, pad with NULL, report how many were written. */
        size_t k = *numNodes < g->n ? *numNodes : g->n;
        for (size_t i = 0; i < *numNodes; i++)
            nodes[i] = i < k ? (CUgraphNode)g->nodes[i] : NULL;
        *numNodes = k;
    }
    pthread_mutex_unlock(&fk_graph_lock);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    struct fk_node *n = fk_node_get(hNode);
    if (n == NULL || type == NULL) return CUDA_ERROR_INVALID_VALUE;
    *type = n->type;
    return CUDA_SUCCESS;
}

static struct fk_node *fk_kernel_node(CUgraphNode h)
{
    struct fk_node *n = fk_node_get(h);
    return n != NULL && n->type == CU_GRAPH_NODE_TYPE_KERNEL ? n : NULL;
}

FK_API CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    struct fk_node *n = fk_kernel_node(hNode);
    if (n == NULL || p == NULL) return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(*p));
    p->func = n->func;
    p->gridDimX = n->grid[0], p->gridDimY = n->grid[1], p->gridDimZ = n->grid[2];
    p->blockDimX = n->block[0], p->blockDimY = n->block[1], p->blockDimZ = n->block[2];
    p->sharedMemBytes = n->shmem;
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *p)
{
    struct fk_node *n = fk_kernel_node(hNode);
    if (n == NULL || p == NULL) return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(*p));
    p->func = n->func;
    p->kern = n->kern;
    p->gridDimX = n->grid[0], p->gridDimY = n->grid[1], p->gridDimZ = n->grid[2];
    p->blockDimX = n->block[0], p->blockDimY = n->block[1], p->blockDimZ = n->block[2];
    p->sharedMemBytes = n->shmem;
    return CUDA_SUCCESS;
}

/* ---- executable graphs ----------------------------------------------------------------------- */

#define FK_EXEC_GEN_SHIFT 47
static uint64_t fk_exec_generation; /* under fk_graph_lock */

static struct fk_exec *fk_exec_of(CUgraphExec h)
{
    uint64_t v = (uint64_t)(uintptr_t)h, gen = v >> FK_EXEC_GEN_SHIFT;
    if (!fk_cfg.fresh_execs) return (struct fk_exec *)h;
    return (struct fk_exec *)(uintptr_t)((v & ((1ull << FK_EXEC_GEN_SHIFT) - 1)) ^ (gen << 4));
}

/* fk_graph_lock held. */
static CUgraphExec fk_handle_of(struct fk_exec *e)
{
    if (!fk_cfg.fresh_execs) return (CUgraphExec)e;
    uint64_t gen = ++fk_exec_generation & 0x1FFFF;
    if (gen == 0) gen = ++fk_exec_generation & 0x1FFFF;
    return (CUgraphExec)(uintptr_t)((gen << FK_EXEC_GEN_SHIFT) | ((uintptr_t)e ^ (gen << 4)));
}

struct fk_graph *fk_exec_graph(CUgraphExec h)
{
    struct fk_exec *e = fk_exec_of(h);
    return e != NULL && e->magic == FK_MAGIC_EXEC ? e->graph : NULL;
}

size_t fk_exec_kernels(CUgraphExec h)
{
    return atomic_load_explicit(&fk_exec_of(h)->nkernels, memory_order_relaxed);
}

static CUresult fk_instantiate(CUgraphExec *phExec, CUgraph hGraph)
{
    if (phExec == NULL || !fk_graph_valid(hGraph)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_graph *copy = fk_graph_clone((struct fk_graph *)hGraph);
    struct fk_exec *e = fk_exec_free_list;
    if (e != NULL) {
        fk_exec_free_list = e->next_free;
    } else if ((e = calloc(1, sizeof(*e))) != NULL) {
        fk_keep(e);
    }
    if (copy == NULL || e == NULL) {
        fk_graph_free(copy);
        if (e != NULL) {
            e->next_free = fk_exec_free_list;
            fk_exec_free_list = e;
        }
        pthread_mutex_unlock(&fk_graph_lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->graph = copy;
    atomic_store(&e->nkernels, fk_graph_kernels(copy));
    static uint32_t instantiations; /* under fk_graph_lock */
    e->id = ++instantiations;
    e->next_free = NULL;
    e->magic = FK_MAGIC_EXEC;
    CUgraphExec handle = fk_handle_of(e);
    fk_nodes_cloned(copy, (struct fk_graph *)hGraph);
    pthread_mutex_unlock(&fk_graph_lock);
    *phExec = handle;
    fk_count(FKC_GRAPH_INSTANTIATE, 1);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                   CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    CUresult r = fk_instantiate(phGraphExec, hGraph);
    if (r == CUDA_SUCCESS && logBuffer != NULL && bufferSize > 0) logBuffer[0] = '\0';
    return r;
}

FK_API CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

FK_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                            unsigned long long flags)
{
    return fk_instantiate(phGraphExec, hGraph);
}

static CUresult fk_instantiate_params(CUgraphExec *phExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS *p, int ptsz)
{
    if (p == NULL) return CUDA_ERROR_INVALID_VALUE;
    if ((p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) &&
        fk_stream_resolve(p->hUploadStream, ptsz) == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fk_instantiate(phExec, hGraph);
    p->hErrNode_out = NULL;
    p->result_out =
        r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}

FK_API CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return fk_instantiate_params(phGraphExec, hGraph, instantiateParams, 0);
}

FK_API CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                  CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return fk_instantiate_params(phGraphExec, hGraph, instantiateParams, 1);
}

FK_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    struct fk_exec *e = fk_exec_of(hGraphExec);
    pthread_mutex_lock(&fk_graph_lock);
    if (e == NULL || e->magic != FK_MAGIC_EXEC) {
        pthread_mutex_unlock(&fk_graph_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    e->magic = 0;
    fk_graph_free(e->graph);
    e->graph = NULL;
    atomic_store(&e->nkernels, 0);
    e->next_free = fk_exec_free_list; /* LIFO: the next instantiation reuses this handle */
    fk_exec_free_list = e;
    pthread_mutex_unlock(&fk_graph_lock);
    fk_count(FKC_GRAPH_EXEC_DESTROY, 1);
    return CUDA_SUCCESS;
}

/* Takes the new graph's parameters when the topology is unchanged, as the real update does. */
static CUresult fk_exec_update(CUgraphExec hExec, CUgraph hGraph, CUgraphExecUpdateResult *res,
                               CUgraphNode *err_node)
{
    struct fk_exec *e = fk_exec_of(hExec);
    *res = CU_GRAPH_EXEC_UPDATE_ERROR;
    *err_node = NULL;
    if (!fk_graph_valid(hGraph)) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_graph_lock);
    if (e == NULL || e->magic != FK_MAGIC_EXEC) {
        pthread_mutex_unlock(&fk_graph_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct fk_graph *g = (struct fk_graph *)hGraph;
    size_t bad = 0;
    if (!fk_same_topology(e->graph, g, &bad)) {
        *res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        *err_node = bad < g->n ? (CUgraphNode)g->nodes[bad] : NULL;
        pthread_mutex_unlock(&fk_graph_lock);
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    struct fk_graph *copy = fk_graph_clone(g);
    if (copy == NULL) {
        pthread_mutex_unlock(&fk_graph_lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    fk_graph_free(e->graph);
    e->graph = copy;
    atomic_store(&e->nkernels, fk_graph_kernels(copy));
    pthread_mutex_unlock(&fk_graph_lock);
    *res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                  CUgraphNode *hErrorNode_out,
                                  CUgraphExecUpdateResult *updateResult_out)
{
    CUgraphExecUpdateResult res;
    CUgraphNode node;
    CUresult r = fk_exec_update(hGraphExec, hGraph, &res, &node);
    if (hErrorNode_out != NULL) *hErrorNode_out = node;
    if (updateResult_out != NULL) *updateResult_out = res;
    return r;
}

FK_API CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                     CUgraphExecUpdateResultInfo *resultInfo)
{
    if (resultInfo == NULL) return CUDA_ERROR_INVALID_VALUE;
    memset(resultInfo, 0, sizeof(*resultInfo));
    return fk_exec_update(hGraphExec, hGraph, &resultInfo->result, &resultInfo->errorNode);
}

/* ---- activity side channel: what one launch of an executable graph runs ---- */

static void fk_collect(const struct fk_graph *g, uint32_t id, const struct fk_stream *s,
                       fakecuda_op_t *ops, size_t cap, size_t *n, unsigned long long *node)
{
    for (size_t i = 0; g != NULL && i < g->n; i++) {
        const struct fk_node *x = g->nodes[i];
        ++*node;
        if (x->child != NULL) {
            fk_collect(x->child, id, s, ops, cap, n, node);
        } else if ((x->type == CU_GRAPH_NODE_TYPE_KERNEL || x->type == CU_GRAPH_NODE_TYPE_MEMSET ||
                    x->type == CU_GRAPH_NODE_TYPE_MEMCPY) &&
                   *n < cap) {
            const struct fk_func *f = (const struct fk_func *)x->func;
            int kernel = x->type == CU_GRAPH_NODE_TYPE_KERNEL;
            fakecuda_op_t *op = &ops[(*n)++];
            *op = (fakecuda_op_t){.name = kernel ? f->name : NULL,
                                  .stream = s,
                                  .graph_id = id,
                                  .node_id = x->id,
                                  .copy = x->type == CU_GRAPH_NODE_TYPE_MEMCPY};
            if (kernel) memcpy(op->grid, x->grid, sizeof op->grid);
            if (kernel) memcpy(op->block, x->block, sizeof op->block);
        }
    }
}

void fk_report_graph(CUgraphExec exec, const struct fk_stream *s)
{
    fakecuda_activity_fn fn = atomic_load(&fk_activity);
    if (fn == NULL) return;
    fakecuda_op_t ops[256];
    size_t n = 0;
    unsigned long long node = 0;
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_exec *e = fk_exec_of(exec);
    if (e != NULL && e->magic == FK_MAGIC_EXEC)
        fk_collect(e->graph, e->id, s, ops, sizeof ops / sizeof *ops, &n, &node);
    pthread_mutex_unlock(&fk_graph_lock);
    fn(ops, n);
}

/* A memset node (values are not modelled: the fake's memory is never read by a kernel). */
FK_API CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                     const CUgraphNode *dependencies, size_t numDependencies,
                                     const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    if (phGraphNode == NULL || !fk_graph_valid(hGraph) || memsetParams == NULL ||
        (numDependencies > 0 && dependencies == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_node *n = fk_graph_add_node((struct fk_graph *)hGraph, CU_GRAPH_NODE_TYPE_MEMSET);
    if (n != NULL) *phGraphNode = (CUgraphNode)n;
    if (n != NULL) fk_node_created(n);
    pthread_mutex_unlock(&fk_graph_lock);
    return n != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* A memcpy node (nothing is copied, as for a memset node). */
FK_API CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                     const CUgraphNode *dependencies, size_t numDependencies,
                                     const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    if (phGraphNode == NULL || !fk_graph_valid(hGraph) || copyParams == NULL ||
        (numDependencies > 0 && dependencies == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_node *n = fk_graph_add_node((struct fk_graph *)hGraph, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (n != NULL) *phGraphNode = (CUgraphNode)n;
    if (n != NULL) fk_node_created(n);
    pthread_mutex_unlock(&fk_graph_lock);
    return n != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- node side channel (fakecuda.h), for the fake CUPTI's resource callbacks ---------------- */
static _Atomic(fakecuda_node_fn) fk_node_hook;

FK_API void fakecuda_set_node_hook(fakecuda_node_fn fn)
{
    atomic_store(&fk_node_hook, fn);
}

FK_API unsigned long long fakecuda_node_id(CUgraphNode node)
{
    const struct fk_node *n = (const struct fk_node *)node;
    return n != NULL && n->magic == FK_MAGIC_NODE ? n->id : 0;
}

/* Called with fk_graph_lock held: the hook must not call the driver (CUPTI's callback only
 * asks for node ids, which take no lock). */
void fk_node_created(struct fk_node *n)
{
    fakecuda_node_fn fn = atomic_load(&fk_node_hook);
    if (fn) fn(0, (CUgraph)n->graph, (CUgraphNode)n, NULL, n->type);
}

void fk_nodes_cloned(const struct fk_graph *copy, const struct fk_graph *source)
{
    fakecuda_node_fn fn = atomic_load(&fk_node_hook);
    for (size_t i = 0; fn && copy && source && i < copy->n && i < source->n; i++) {
        fn(1, (CUgraph)copy, (CUgraphNode)copy->nodes[i], (CUgraphNode)source->nodes[i],
           copy->nodes[i]->type);
        fk_nodes_cloned(copy->nodes[i]->child, source->nodes[i]->child);
    }
}
