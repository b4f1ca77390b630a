/*
 * Fake CUDA driver: stream capture, with the rules of the real driver that a profiler can trip
 * over, so that tests catch a wrapper that breaks capture:
 *   - a launch into a capturing stream does not run; it appends a node to the capture graph
 *     (a kernel node, or a child-graph node for a graph launch) and is counted as "captured";
 *   - the legacy NULL stream cannot capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED); using it
 *     while a blocking stream captures is CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, and a launch or
 *     synchronisation there also invalidates those captures;
 *   - synchronising or querying a capturing stream is unsupported and invalidates its capture;
 *   - "potentially unsafe" calls (cuMemAlloc, cuMemFree, cuCtxSynchronize) follow the capture
 *     modes global / thread-local / relaxed and the calling thread's exchanged mode;
 *   - ending a capture from another thread than the one that began it is
 *     CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD unless the capture is relaxed.
 * The per-thread default stream (CU_STREAM_PER_THREAD, or NULL in a _ptsz call) is a separate
 * stream per thread and may capture.  All state here is guarded by fk_graph_lock.
 */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <stdlib.h>
#include <string.h>

struct fk_capture {
    struct fk_stream *stream;
    struct fk_graph *graph;
    int user_graph; /* cuStreamBeginCaptureToGraph: the graph belongs to the caller */
    CUstreamCaptureMode mode;
    CUstreamCaptureStatus status;
    cuuint64_t id;
    struct fk_thread *owner;
    int blocking; /* the stream synchronises with the legacy stream */
    size_t ndeps, cap_deps;
    CUgraphNode *deps;       /* nodes the next captured node will depend on */
    CUgraphEdgeData *edges;  /* parallel to deps, all default (zero) */
    struct fk_capture *next; /* list of captures in progress */
};

atomic_int fk_active_captures;
atomic_int fk_blocking_captures;
static struct fk_capture *fk_captures;
static cuuint64_t fk_next_capture_id = 1;

static int fk_set_deps(struct fk_capture *c, const CUgraphNode *nodes, size_t n)
{
    if (n > c->cap_deps) {
        size_t cap = n < 4 ? 4 : n;
        CUgraphNode *d = realloc(c->deps, cap * sizeof(*d));
        if (d == NULL) return -1;
        c->deps = d;
        CUgraphEdgeData *e = realloc(c->edges, cap * sizeof(*e));
        if (e == NULL) return -1;
        c->edges = e;
        c->cap_deps = cap;
    }
    if (n > 0) memcpy(c->deps, nodes, n * sizeof(*nodes));
    if (c->edges != NULL) memset(c->edges, 0, c->cap_deps * sizeof(*c->edges));
    c->ndeps = n;
    return 0;
}

/* Unlinks a capture from its stream and the bookkeeping; lock held. */
static void fk_capture_detach(struct fk_capture *c)
{
    for (struct fk_capture **pp = &fk_captures; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    atomic_store_explicit(&c->stream->cap, NULL, memory_order_release);
    atomic_fetch_sub(&fk_active_captures, 1);
    if (c->blocking) atomic_fetch_sub(&fk_blocking_captures, 1);
}

static void fk_capture_free(struct fk_capture *c)
{
    free(c->deps);
    free(c->edges);
    free(c);
}

static CUresult fk_begin(CUstream h, int ptsz, CUstreamCaptureMode mode, CUgraph user,
                         const CUgraphNode *deps, size_t ndeps)
{
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_stream *s = fk_stream_resolve(h, ptsz);
    if (s == NULL) return CUDA_ERROR_INVALID_HANDLE;
    if (s->kind == FK_STREAM_LEGACY) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (user != NULL && !fk_graph_valid(user)) return CUDA_ERROR_INVALID_VALUE;
    if (ndeps > 0 && deps == NULL) return CUDA_ERROR_INVALID_VALUE;

    struct fk_capture *c = calloc(1, sizeof(*c));
    if (c == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fk_graph_lock);
    if (atomic_load_explicit(&s->cap, memory_order_relaxed) != NULL) {
        pthread_mutex_unlock(&fk_graph_lock);
        free(c);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    c->graph = user != NULL ? (struct fk_graph *)user : fk_graph_new();
    if (c->graph == NULL || fk_set_deps(c, deps, ndeps) != 0) {
        pthread_mutex_unlock(&fk_graph_lock);
        if (user == NULL) fk_graph_free(c->graph);
        fk_capture_free(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    c->stream = s;
    c->user_graph = user != NULL;
    c->mode = mode;
    c->status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    c->id = fk_next_capture_id++;
    c->owner = fk_self();
    c->blocking = !(s->flags & CU_STREAM_NON_BLOCKING);
    c->next = fk_captures;
    fk_captures = c;
    atomic_fetch_add(&fk_active_captures, 1);
    if (c->blocking) atomic_fetch_add(&fk_blocking_captures, 1);
    atomic_store_explicit(&s->cap, c, memory_order_release);
    pthread_mutex_unlock(&fk_graph_lock);
    return CUDA_SUCCESS;
}

static CUresult fk_end(CUstream h, int ptsz, CUgraph *phGraph)
{
    if (phGraph == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_stream *s = fk_stream_resolve(h, ptsz);
    if (s == NULL) return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_capture *c = atomic_load_explicit(&s->cap, memory_order_relaxed);
    if (c == NULL) {
        pthread_mutex_unlock(&fk_graph_lock);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && c->owner != fk_self()) {
        pthread_mutex_unlock(&fk_graph_lock);
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    }
    fk_capture_detach(c);
    CUresult r = CUDA_SUCCESS;
    if (c->status == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
        if (!c->user_graph) fk_graph_free(c->graph);
        *phGraph = NULL;
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    } else {
        *phGraph = (CUgraph)c->graph;
    }
    pthread_mutex_unlock(&fk_graph_lock);
    fk_capture_free(c);
    return r;
}

/* Shared by cuStreamIsCapturing and every cuStreamGetCaptureInfo version. */
static CUresult fk_info(CUstream h, int ptsz, CUstreamCaptureStatus *status, cuuint64_t *id,
                        CUgraph *graph, const CUgraphNode **deps, const CUgraphEdgeData **edges,
                        size_t *ndeps)
{
    if (status == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_stream *s = fk_stream_resolve(h, ptsz);
    if (s == NULL) return CUDA_ERROR_INVALID_HANDLE;
    if (s->kind == FK_STREAM_LEGACY &&
        atomic_load_explicit(&fk_blocking_captures, memory_order_acquire) > 0)
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT; /* does not invalidate, per the docs */
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_capture *c = atomic_load_explicit(&s->cap, memory_order_relaxed);
    *status = c != NULL ? c->status : CU_STREAM_CAPTURE_STATUS_NONE;
    int active = c != NULL && c->status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (id != NULL && c != NULL) *id = c->id;
    if (graph != NULL) *graph = active ? (CUgraph)c->graph : NULL;
    if (deps != NULL) *deps = active && c->ndeps > 0 ? c->deps : NULL;
    if (edges != NULL) *edges = active && c->ndeps > 0 ? c->edges : NULL;
    if (ndeps != NULL) *ndeps = active ? c->ndeps : 0;
    pthread_mutex_unlock(&fk_graph_lock);
    return CUDA_SUCCESS;
}

/* ---- hooks used by launches, streams and unsafe calls ---------------------------------------- */

static int fk_capture_append(struct fk_stream *s, struct fk_node **out, CUgraphNodeType type,
                             CUresult *res)
{
    struct fk_capture *c = atomic_load_explicit(&s->cap, memory_order_relaxed);
    if (c == NULL) return 0;
    if (c->status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        *res = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        return 1;
    }
    struct fk_node *n = fk_graph_add_node(c->graph, type);
    if (n == NULL || fk_set_deps(c, (const CUgraphNode *)&n, 1) != 0) {
        *res = CUDA_ERROR_OUT_OF_MEMORY;
        return 1;
    }
    *out = n;
    *res = CUDA_SUCCESS;
    return 1;
}

int fk_capture_kernel(struct fk_stream *s, CUfunction f, const unsigned grid[3],
                      const unsigned block[3], unsigned shmem, enum fk_counter variant,
                      CUresult *res)
{
    struct fk_node *n = NULL;
    pthread_mutex_lock(&fk_graph_lock);
    int handled = fk_capture_append(s, &n, CU_GRAPH_NODE_TYPE_KERNEL, res);
    if (n != NULL) {
        n->func = f;
        /* Launched with a CUkernel (as cudart does): the node knows it as kern too. */
        n->kern = ((struct fk_func *)f)->kind == FK_KIND_KERNEL ? (CUkernel)f : NULL;
        memcpy(n->grid, grid, sizeof(n->grid));
        memcpy(n->block, block, sizeof(n->block));
        n->shmem = shmem;
        fk_node_created(n);
    }
    pthread_mutex_unlock(&fk_graph_lock);
    if (n != NULL) {
        fk_count(FKC_CAPTURED_BASE + variant, 1);
        fk_count(FKC_CAPTURED, 1);
    }
    return handled;
}

int fk_capture_graph(struct fk_stream *s, CUgraphExec exec, enum fk_counter variant, CUresult *res)
{
    struct fk_node *n = NULL;
    pthread_mutex_lock(&fk_graph_lock);
    int handled = fk_capture_append(s, &n, CU_GRAPH_NODE_TYPE_GRAPH, res);
    if (n != NULL) {
        /* As on hardware, a graph launched into a capture becomes a child-graph node. */
        n->child = fk_graph_clone(fk_exec_graph(exec));
        if (n->child == NULL) *res = CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&fk_graph_lock);
    if (n != NULL && *res == CUDA_SUCCESS) {
        fk_count(FKC_CAPTURED_BASE + variant, 1);
        fk_count(FKC_CAPTURED, 1);
    }
    return handled;
}

CUresult fk_legacy_implicit(void)
{
    int hit = 0;
    pthread_mutex_lock(&fk_graph_lock);
    for (struct fk_capture *c = fk_captures; c != NULL; c = c->next) {
        if (c->blocking) {
            c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
            hit = 1;
        }
    }
    pthread_mutex_unlock(&fk_graph_lock);
    return hit ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

CUresult fk_capture_conflict(struct fk_stream *s)
{
    int hit = 0;
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_capture *c = atomic_load_explicit(&s->cap, memory_order_relaxed);
    if (c != NULL) {
        c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
        hit = 1;
    }
    pthread_mutex_unlock(&fk_graph_lock);
    return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult fk_check_unsafe_call(void)
{
    if (FK_LIKELY(atomic_load_explicit(&fk_active_captures, memory_order_acquire) == 0))
        return CUDA_SUCCESS;
    struct fk_thread *t = fk_self();
    if (t->capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
    int hit = 0;
    pthread_mutex_lock(&fk_graph_lock);
    for (struct fk_capture *c = fk_captures; c != NULL; c = c->next) {
        if (c->mode == CU_STREAM_CAPTURE_MODE_RELAXED) continue;
        /* Own strict captures always count; other threads' only global ones, in global mode. */
        if (c->owner == t || (c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
                              t->capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            c->status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
            hit = 1;
        }
    }
    pthread_mutex_unlock(&fk_graph_lock);
    return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

void fk_capture_abandon(struct fk_stream *s)
{
    pthread_mutex_lock(&fk_graph_lock);
    struct fk_capture *c = atomic_load_explicit(&s->cap, memory_order_relaxed);
    if (c != NULL) {
        fk_capture_detach(c);
        if (!c->user_graph) fk_graph_free(c->graph);
    }
    pthread_mutex_unlock(&fk_graph_lock);
    if (c != NULL) fk_capture_free(c);
}

/* ---- entry points ---------------------------------------------------------------------------- */

/* The CUDA 10.0 form has no mode argument; it behaves as global mode. */
FK_API CUresult cuStreamBeginCapture(CUstream hStream)
{
    return fk_begin(hStream, 0, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0);
}

FK_API CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    return fk_begin(hStream, 1, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, 0);
}

FK_API CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return fk_begin(hStream, 0, mode, NULL, NULL, 0);
}

FK_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return fk_begin(hStream, 1, mode, NULL, NULL, 0);
}

FK_API CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                            const CUgraphNode *dependencies,
                                            const CUgraphEdgeData *dependencyData,
                                            size_t numDependencies, CUstreamCaptureMode mode)
{
    if (hGraph == NULL) return CUDA_ERROR_INVALID_VALUE;
    return fk_begin(hStream, 0, mode, hGraph, dependencies, numDependencies);
}

FK_API CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                 const CUgraphNode *dependencies,
                                                 const CUgraphEdgeData *dependencyData,
                                                 size_t numDependencies, CUstreamCaptureMode mode)
{
    if (hGraph == NULL) return CUDA_ERROR_INVALID_VALUE;
    return fk_begin(hStream, 1, mode, hGraph, dependencies, numDependencies);
}

FK_API CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return fk_end(hStream, 0, phGraph);
}

FK_API CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return fk_end(hStream, 1, phGraph);
}

FK_API CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return FK_FRAMED("cuStreamIsCapturing",
                     fk_info(hStream, 0, captureStatus, NULL, NULL, NULL, NULL, NULL));
}

FK_API CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return FK_FRAMED("cuStreamIsCapturing_ptsz",
                     fk_info(hStream, 1, captureStatus, NULL, NULL, NULL, NULL, NULL));
}

FK_API CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                       cuuint64_t *id_out)
{
    return fk_info(hStream, 0, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

FK_API CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                            CUstreamCaptureStatus *captureStatus_out,
                                            cuuint64_t *id_out)
{
    return fk_info(hStream, 1, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

FK_API CUresult cuStreamGetCaptureInfo_v2(CUstream hStream,
                                          CUstreamCaptureStatus *captureStatus_out,
                                          cuuint64_t *id_out, CUgraph *graph_out,
                                          const CUgraphNode **dependencies_out,
                                          size_t *numDependencies_out)
{
    return fk_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                   numDependencies_out);
}

FK_API CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                               CUstreamCaptureStatus *captureStatus_out,
                                               cuuint64_t *id_out, CUgraph *graph_out,
                                               const CUgraphNode **dependencies_out,
                                               size_t *numDependencies_out)
{
    return fk_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                   numDependencies_out);
}

FK_API CUresult cuStreamGetCaptureInfo_v3(CUstream hStream,
                                          CUstreamCaptureStatus *captureStatus_out,
                                          cuuint64_t *id_out, CUgraph *graph_out,
                                          const CUgraphNode **dependencies_out,
                                          const CUgraphEdgeData **edgeData_out,
                                          size_t *numDependencies_out)
{
    return fk_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                   numDependencies_out);
}

FK_API CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                               CUstreamCaptureStatus *captureStatus_out,
                                               cuuint64_t *id_out, CUgraph *graph_out,
                                               const CUgraphNode **dependencies_out,
                                               const CUgraphEdgeData **edgeData_out,
                                               size_t *numDependencies_out)
{
    return fk_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                   numDependencies_out);
}

FK_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (mode == NULL) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode m = *mode;
    if (m != CU_STREAM_CAPTURE_MODE_GLOBAL && m != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        m != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_thread *t = fk_self();
    *mode = t->capture_mode;
    t->capture_mode = m;
    return CUDA_SUCCESS;
}
