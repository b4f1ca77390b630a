/* Graph and capture scenarios for scn_driver (see there). Graphs come from stream capture and
 * from explicit construction, are instantiated through every driver path (direct symbols and
 * cuGetProcAddress at each ABI version), updated, destroyed and re-instantiated into the same
 * handle, and launched from another thread. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_common.h"

typedef void *(*getproc_t)(const char *, int, int);
int scn_graphs(int argc, char **argv, CUstream s, CUfunction k[3], getproc_t getproc);

static void launch(CUfunction f, CUstream s)
{
    cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, s, NULL, NULL);
}

static CUgraph capture(CUstream s, CUfunction *fs, int n)
{
    CUgraph g = NULL;
    CHECK("begin", cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int i = 0; i < n; i++)
        launch(fs[i], s);
    CHECK("end", cuStreamEndCapture(s, &g));
    return g;
}

static CUgraph build(CUfunction *fs, int n);
static CUgraph build(CUfunction *fs, int n)
{
    CUgraph g = NULL;
    CUgraphNode prev = NULL, node;
    cuGraphCreate(&g, 0);
    for (int i = 0; i < n; i++) {
        CUDA_KERNEL_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        p.func = fs[i];
        p.gridDimX = p.gridDimY = p.gridDimZ = 1;
        p.blockDimX = 128, p.blockDimY = p.blockDimZ = 1;
        CHECK("add-node", cuGraphAddKernelNode_v2(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
        prev = node;
    }
    return g;
}

typedef struct cross {
    CUgraphExec e;
    CUstream s;
} cross_t;

static void *cross_thread(void *arg)
{
    cross_t *c = arg;
    CHECK("cross-launch", cuGraphLaunch(c->e, c->s));
    return NULL;
}

static int graphs(CUstream s, CUfunction k[3], getproc_t getproc)
{
    CUfunction captured[3] = {k[1], k[1], k[0]}; /* flash, flash, add1 */
    CUfunction built[5] = {k[2], k[2], k[2], k[2], k[0]};
    CUfunction rebuilt[5] = {k[1], k[1], k[1], k[0], k[0]}; /* same topology, new kernels */
    CUgraph g = capture(s, captured, 3);
    CUgraph g2 = build(built, 5);
    CUgraph g3 = build(rebuilt, 5);
    CUgraphExec e1, e2, e3, e4, e5;

    CHECK("inst-withflags", cuGraphInstantiateWithFlags(&e1, g, 0));
    CUresult (*inst_v2)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t) =
        getproc("cuGraphInstantiate", 11000, 0);
    CHECK("inst-procaddr-v2", inst_v2(&e2, g, NULL, NULL, 0));
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = {0};
    CUresult (*inst_params)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *) =
        getproc("cuGraphInstantiateWithParams", 12000, 2);
    CHECK("inst-params-ptsz", inst_params(&e3, g, &ip));
    CHECK("inst-v1", cuGraphInstantiate(&e4, g2, NULL, NULL, 0));

    CUresult (*launch_ptsz)(CUgraphExec, CUstream) = getproc("cuGraphLaunch", 10000, 2);
    CHECK("launch-e1", cuGraphLaunch(e1, s));
    CHECK("launch-e1", cuGraphLaunch(e1, s));
    CHECK("launch-e2-ptsz", launch_ptsz(e2, s));
    CHECK("launch-e3", cuGraphLaunch_ptsz(e3, NULL));
    CHECK("launch-e4", cuGraphLaunch(e4, s));

    CUgraphExecUpdateResultInfo info;
    CHECK("update-e4", cuGraphExecUpdate_v2(e4, g3, &info));
    CHECK("launch-e4-updated", cuGraphLaunch(e4, s));

    CUgraphExec old = e1;
    CHECK("destroy-e1", cuGraphExecDestroy(e1));
    CHECK("inst-reuse", cuGraphInstantiateWithFlags(&e5, g2, 0));
    printf("reused %d\n", e5 == old);
    CHECK("launch-e5", cuGraphLaunch(e5, s));

    cross_t c = {e2, s};
    pthread_t t;
    pthread_create(&t, NULL, cross_thread, &c);
    pthread_join(t, NULL);

    /* The CUDA 10.2 update ABI (4 arguments). */
    CUgraphNode err_node;
    CUgraphExecUpdateResult update_result;
    CHECK("update-v1", cuGraphExecUpdate(e5, g3, &err_node, &update_result));
    CHECK("launch-e5-updated", cuGraphLaunch(e5, s));
    return 0;
}

/* N graphs of (i % 5) + 1 kernels each, instantiated and launched once. */
static int many_graphs(int n, CUstream s, CUfunction k[3])
{
    for (int i = 0; i < n; i++) {
        CUfunction fs[5];
        for (int j = 0; j <= i % 5; j++)
            fs[j] = k[(i + j) % 3];
        CUgraph g = build(fs, i % 5 + 1);
        CUgraphExec e;
        if (cuGraphInstantiateWithFlags(&e, g, 0) != CUDA_SUCCESS || cuGraphLaunch(e, s)) return 4;
    }
    return 0;
}

/* Launches during capture, on the capturing stream and elsewhere, in a given capture mode;
 * then on the per-thread default stream. */
static int capture_modes(CUstream s, CUfunction k[3], const char *mode_name)
{
    CUstreamCaptureMode mode = !strcmp(mode_name, "relaxed")  ? CU_STREAM_CAPTURE_MODE_RELAXED
                               : !strcmp(mode_name, "thread") ? CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
                                                              : CU_STREAM_CAPTURE_MODE_GLOBAL;
    CUstream other;
    CUgraph g = NULL;
    CUgraphExec e;
    cuStreamCreate(&other, 0);
    launch(k[0], s); /* before capture: plain */
    CHECK("begin", cuStreamBeginCapture_v2(s, mode));
    launch(k[1], s);     /* captured */
    launch(k[2], other); /* another stream: runs */
    launch(k[1], s);     /* captured */
    CHECK("end", cuStreamEndCapture(s, &g));
    launch(k[0], s); /* after capture: plain */
    CHECK("inst", cuGraphInstantiateWithFlags(&e, g, 0));
    CHECK("replay", cuGraphLaunch(e, s));

    /* The per-thread default stream (stream 0 of the _ptsz variants) captures too. */
    CHECK("begin-ptsz", cuStreamBeginCapture_v2_ptsz(NULL, mode));
    CHECK("ptsz-captured", cuLaunchKernel_ptsz(k[2], 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK("end-ptsz", cuStreamEndCapture_ptsz(NULL, &g));
    CHECK("ptsz-after", cuLaunchKernel_ptsz(k[2], 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));

    /* The CUDA 10.0 entry points without a mode, and capture into an existing graph. */
    CHECK("begin-v1", cuStreamBeginCapture(s));
    launch(k[0], s);
    CHECK("end-v1", cuStreamEndCapture(s, &g));
    CHECK("begin-v1-ptsz", cuStreamBeginCapture_ptsz(NULL));
    CHECK("v1-ptsz-captured", cuLaunchKernel_ptsz(k[2], 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK("end-v1-ptsz", cuStreamEndCapture_ptsz(NULL, &g));
    CUgraph into;
    cuGraphCreate(&into, 0);
    CHECK("begin-to-graph", cuStreamBeginCaptureToGraph(s, into, NULL, NULL, 0, mode));
    launch(k[1], s);
    CHECK("end-to-graph", cuStreamEndCapture(s, &g));
    launch(k[0], s); /* plain again */
    return 0;
}

/* A launch into the legacy NULL stream while another stream captures in global mode fails
 * (and invalidates that capture) on a real driver; the capture query must neither hide nor
 * cause that. */
static int capture_legacy(CUstream s, CUfunction k[3])
{
    CUgraph g = NULL;
    CHECK("begin", cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK("legacy-launch", cuLaunchKernel(k[0], 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK("end", cuStreamEndCapture(s, &g));
    CHECK("after", cuLaunchKernel(k[0], 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    return 0;
}

/* Instantiate, launch and destroy one graph n times, as a program that re-instantiates every
 * step does; then, with `kernels`, launch each kernel once; prints the peak RSS. */
static int churn(int n, int kernels, CUstream s, CUfunction k[3])
{
    CUgraph g = build(k, 3);
    for (int i = 0; i < n; i++) {
        CUgraphExec e;
        if (cuGraphInstantiateWithFlags(&e, g, 0) || cuGraphLaunch(e, s) || cuGraphExecDestroy(e))
            return 4;
    }
    for (int i = 0; kernels && i < 3; i++)
        launch(k[i], s);
    scn_print_peak_rss();
    return 0;
}

int scn_graphs(int argc, char **argv, CUstream s, CUfunction k[3], getproc_t getproc)
{
    const char *mode = argv[0];
    if (!strcmp(mode, "graphs")) return graphs(s, k, getproc);
    if (!strcmp(mode, "manygraphs")) return many_graphs(argc > 1 ? atoi(argv[1]) : 100, s, k);
    if (!strcmp(mode, "churn"))
        return churn(argc > 1 ? atoi(argv[1]) : 1000, argc > 2 && !strcmp(argv[2], "kernels"), s,
                     k);
    if (!strcmp(mode, "capture-legacy")) return capture_legacy(s, k);
    if (!strcmp(mode, "capture")) return capture_modes(s, k, argc > 1 ? argv[1] : "global");
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
