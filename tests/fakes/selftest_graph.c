/*
 * Self-test of the fake driver, part two: stream capture with the real rules, graphs,
 * instantiate -> launch counting, executable-graph handle reuse, graph update, and the
 * environment switches checked in children (FAKECUDA_DRIVER_VERSION, FAKECUDA_FAIL_LAUNCH,
 * FAKECUDA_COUNTS, FAKECUDA_TRACE).  Also holds main().
 */
#define _GNU_SOURCE
#include "selftest.h"

#include "fakecuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define L(f, s) DRV(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)

static void *end_capture_thread(void *arg)
{
    CUgraph g;
    return (void *)(intptr_t)DRV(cuStreamEndCapture)((CUstream)arg, &g);
}

void test_capture(void)
{
    CUstream s, nb;
    CUgraph g = NULL;
    CUstreamCaptureStatus cs;
    CHECK_RC(DRV(cuStreamCreate)(&s, 0), CUDA_SUCCESS);
    CHECK_RC(DRV(cuStreamCreate)(&nb, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);

    CHECK_RC(DRV(cuStreamBeginCapture_v2)(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_RC(DRV(cuStreamBeginCapture_v2)(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL),
             CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);

    unsigned long long run = count("cuLaunchKernel"), cap = count("captured");
    CHECK_RC(DRV(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    CHECK_RC(DRV(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL),
             CUDA_ERROR_ILLEGAL_STATE);
    CHECK_RC(DRV(cuStreamIsCapturing)(s, &cs), CUDA_SUCCESS);
    CHECK(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE, "status %d", cs);
    CHECK_RC(DRV(cuStreamIsCapturing)(NULL, &cs), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CHECK_RC(DRV(cuStreamIsCapturing)(nb, &cs), CUDA_SUCCESS);
    CHECK(cs == CU_STREAM_CAPTURE_STATUS_NONE, "other stream status %d", cs);
    CHECK_RC(L(st_fa, s), CUDA_SUCCESS);
    CHECK_RC(L(st_fb, s), CUDA_SUCCESS);
    CHECK_RC(L(st_fa, nb), CUDA_SUCCESS); /* another stream runs normally */
    CHECK_RC(L(st_fa, s), CUDA_SUCCESS);
    CHECK(count("cuLaunchKernel") == run + 1 && count("captured") == cap + 3 &&
              count("captured.cuLaunchKernel") >= 3,
          "captured launches must not run: run %llu cap %llu", count("cuLaunchKernel") - run,
          count("captured") - cap);
    cuuint64_t id = 0;
    CUgraph cg = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    CHECK_RC(DRV(cuStreamGetCaptureInfo_v3)(s, &cs, &id, &cg, &deps, &edges, &ndeps), CUDA_SUCCESS);
    CHECK(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && cg != NULL && ndeps == 1 &&
              deps != NULL && edges != NULL,
          "capture info");
    CHECK_RC(DRV(cuMemAlloc_v2)(&(CUdeviceptr){0}, 16), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_RC(DRV(cuStreamIsCapturing)(s, &cs), CUDA_SUCCESS);
    CHECK(cs == CU_STREAM_CAPTURE_STATUS_INVALIDATED, "unsafe call must invalidate: %d", cs);
    CHECK_RC(L(st_fa, s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK_RC(DRV(cuStreamEndCapture)(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(g == NULL, "invalidated capture returns no graph");

    /* Capture -> graph -> instantiate -> launch. */
    CHECK_RC(DRV(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    CHECK_RC(L(st_fa, s), CUDA_SUCCESS);
    CHECK_RC(L(st_fb, s), CUDA_SUCCESS);
    CHECK_RC(DRV(cuLaunchKernel_ptsz)(st_fb, 2, 1, 1, 8, 1, 1, 0, s, NULL, NULL), CUDA_SUCCESS);
    CHECK_RC(DRV(cuStreamEndCapture)(s, &g), CUDA_SUCCESS);
    CHECK_RC(DRV(cuStreamIsCapturing)(NULL, &cs), CUDA_SUCCESS);
    size_t n = 0;
    CUgraphNode nodes[4];
    CHECK_RC(DRV(cuGraphGetNodes)(g, NULL, &n), CUDA_SUCCESS);
    CHECK(n == 3, "%zu nodes", n);
    n = 4;
    CHECK_RC(DRV(cuGraphGetNodes)(g, nodes, &n), CUDA_SUCCESS);
    CUgraphNodeType type;
    CHECK_RC(DRV(cuGraphNodeGetType)(nodes[2], &type), CUDA_SUCCESS);
    CHECK(n == 3 && type == CU_GRAPH_NODE_TYPE_KERNEL && nodes[3] == NULL, "node type %d", type);
    CUDA_KERNEL_NODE_PARAMS p;
    CHECK_RC(DRV(cuGraphKernelNodeGetParams_v2)(nodes[2], &p), CUDA_SUCCESS);
    CHECK(p.func == st_fb && p.kern == NULL && p.gridDimX == 2 && p.blockDimX == 8, "params");
    CUDA_KERNEL_NODE_PARAMS_v1 p1;
    CHECK_RC(DRV(cuGraphKernelNodeGetParams)(nodes[0], &p1), CUDA_SUCCESS);
    CHECK(p1.func == st_fa && p1.blockDimX == 32, "v1 params");

    CUgraphExec e, e2;
    unsigned long long gl = count("cuGraphLaunch"), gk = count("graph_kernels");
    CHECK_RC(DRV(cuGraphInstantiateWithFlags)(&e, g, 0), CUDA_SUCCESS);
    CHECK_RC(DRV(cuGraphLaunch)(e, s), CUDA_SUCCESS);
    CHECK_RC(DRV(cuGraphLaunch)(e, s), CUDA_SUCCESS);
    CHECK(count("cuGraphLaunch") == gl + 2 && count("graph_kernels") == gk + 6,
          "graph launches %llu kernels %llu", count("cuGraphLaunch") - gl,
          count("graph_kernels") - gk);

    /* A graph launched into a capture becomes a child graph node; its kernels count nested. */
    CUgraph outer;
    CUgraphExec eo;
    CHECK_RC(DRV(cuStreamBeginCapture_v2_ptsz)(NULL, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    CHECK_RC(DRV(cuGraphLaunch_ptsz)(e, NULL), CUDA_SUCCESS);
    CHECK_RC(DRV(cuLaunchKernel_ptsz)(st_fa, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    CHECK_RC(DRV(cuMemAlloc_v2)(&(CUdeviceptr){0}, 16), CUDA_SUCCESS); /* relaxed */
    CHECK_RC(DRV(cuStreamEndCapture_ptsz)(NULL, &outer), CUDA_SUCCESS);
    CHECK(count("captured.cuGraphLaunch_ptsz") == 1, "captured graph launch");
    CHECK_RC(DRV(cuGraphInstantiateWithFlags)(&eo, outer, 0), CUDA_SUCCESS);
    gk = count("graph_kernels");
    CHECK_RC(DRV(cuGraphLaunch_ptsz)(eo, NULL), CUDA_SUCCESS);
    CHECK(count("graph_kernels") == gk + 4, "nested kernels %llu", count("graph_kernels") - gk);

    /* Handle reuse: a destroyed exec's memory comes back as the next instantiation. */
    CUgraphExec old = e;
    CHECK_RC(DRV(cuGraphExecDestroy)(e), CUDA_SUCCESS);
    CHECK_RC(DRV(cuGraphExecDestroy)(e), CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(DRV(cuGraphLaunch)(e, s), CUDA_ERROR_INVALID_HANDLE);
    CHECK_RC(DRV(cuGraphInstantiate)(&e2, g, NULL, NULL, 0), CUDA_SUCCESS);
    CHECK(e2 == old, "exec handle not reused: %p vs %p", (void *)e2, (void *)old);
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = {0};
    CUgraphExec e3;
    CHECK_RC(DRV(cuGraphInstantiateWithParams_ptsz)(&e3, g, &ip), CUDA_SUCCESS);
    CHECK(ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS && e3 != e2, "with params");

    /* Update: same topology succeeds, another does not. */
    CUgraphExecUpdateResultInfo info;
    CHECK_RC(DRV(cuGraphExecUpdate_v2)(e2, g, &info), CUDA_SUCCESS);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS, "update result %d", info.result);
    CHECK_RC(DRV(cuGraphExecUpdate_v2)(e2, outer, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, "topology %d", info.result);
    CUgraphExecUpdateResult ur;
    CUgraphNode errn;
    CHECK_RC(DRV(cuGraphExecUpdate)(e2, g, &errn, &ur), CUDA_SUCCESS);

    /* Explicit construction, v1 and v2 parameter forms, a kernel given as kern. */
    CUgraph b;
    CUgraphNode n1, n2;
    CHECK_RC(DRV(cuGraphCreate)(&b, 0), CUDA_SUCCESS);
    CUDA_KERNEL_NODE_PARAMS_v1 a1 = {st_fa, 1, 1, 1, 1, 1, 1, 0, NULL, NULL};
    CHECK_RC(DRV(cuGraphAddKernelNode)(&n1, b, NULL, 0, &a1), CUDA_SUCCESS);
    CUDA_KERNEL_NODE_PARAMS a2 = {0};
    a2.gridDimX = a2.gridDimY = a2.gridDimZ = a2.blockDimX = a2.blockDimY = a2.blockDimZ = 1;
    CHECK_RC(DRV(cuGraphAddKernelNode_v2)(&n2, b, &n1, 1, &a2), CUDA_ERROR_INVALID_VALUE);
    CUlibrary lib;
    CUkernel k;
    DRV(cuLibraryLoadData)(&lib, "FAKEIMAGE\nkern_only\n", NULL, NULL, 0, NULL, NULL, 0);
    DRV(cuLibraryGetKernel)(&k, lib, "kern_only");
    a2.kern = k;
    CHECK_RC(DRV(cuGraphAddKernelNode_v2)(&n2, b, &n1, 1, &a2), CUDA_SUCCESS);
    CHECK_RC(DRV(cuGraphKernelNodeGetParams_v2)(n2, &p), CUDA_SUCCESS);
    const char *name = NULL;
    DRV(cuFuncGetName)(&name, p.func);
    CHECK(p.kern == k && p.func != NULL && name && !strcmp(name, "kern_only"), "kern node");
    CHECK_RC(DRV(cuGraphDestroy)(b), CUDA_SUCCESS);

    /* Ending a global-mode capture from another thread is an error; relaxed is not. */
    CHECK_RC(DRV(cuStreamBeginCapture_v2)(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    pthread_t t;
    void *rv;
    pthread_create(&t, NULL, end_capture_thread, s);
    pthread_join(t, &rv);
    CHECK((intptr_t)rv == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "wrong thread: %ld",
          (long)(intptr_t)rv);
    /* The legacy stream while a blocking stream captures: implicit, and invalidates. */
    CHECK_RC(L(st_fa, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CHECK_RC(DRV(cuStreamEndCapture)(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* A non-blocking stream's capture leaves the legacy stream alone. */
    CHECK_RC(DRV(cuStreamBeginCapture_v2)(nb, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    CHECK_RC(L(st_fa, NULL), CUDA_SUCCESS);
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CHECK_RC(DRV(cuThreadExchangeStreamCaptureMode)(&mode), CUDA_SUCCESS);
    CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL, "default thread mode %d", mode);
    CHECK_RC(DRV(cuThreadExchangeStreamCaptureMode)(&mode), CUDA_SUCCESS);
    CHECK_RC(DRV(cuStreamSynchronize)(nb), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK_RC(DRV(cuStreamEndCapture)(nb, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK_RC(DRV(cuStreamEndCapture)(nb, &g), CUDA_ERROR_ILLEGAL_STATE);
}

/* ---- children: environment switches -----------------------------------------------------------
 */

static int child_old_driver(void)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    const char *name;
    int v = 0;
    DRV(cuInit)(0);
    CHECK_RC(DRV(cuDriverGetVersion)(&v), CUDA_SUCCESS);
    CHECK(v == 12000, "version %d", v);
    CHECK_RC(DRV(cuGetProcAddress_v2)("cuFuncGetName", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "absent in an old driver");
    CHECK_RC(DRV(cuGetProcAddress_v2)("cuKernelGetName", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK_RC(DRV(cuGetProcAddress_v2)("cuStreamGetCaptureInfo", &p, 13000, 0, &st), CUDA_SUCCESS);
    CHECK(p == drv("cuStreamGetCaptureInfo_v2"), "capped at the driver's version");
    CUfunction f;
    DRV(fakecuda_make_function)("_Z1fv", &f);
    CHECK_RC(DRV(cuFuncGetName)(&name, f), CUDA_ERROR_NOT_FOUND);
    CHECK_RC(DRV(cuKernelGetName)(&name, (CUkernel)f), CUDA_ERROR_NOT_FOUND);
    return st_failed != 0;
}

static int child_fail_launch(void)
{
    CUfunction f;
    CUgraph g;
    CUgraphExec e;
    DRV(cuInit)(0);
    DRV(fakecuda_make_function)("_Z1fv", &f);
    CHECK_RC(L(f, NULL), 719);
    CHECK_RC(DRV(cuLaunchKernelEx_ptsz)(&(CUlaunchConfig){1, 1, 1, 1, 1, 1, 0, NULL, NULL, 0}, f,
                                        NULL, NULL),
             719);
    DRV(cuGraphCreate)(&g, 0);
    DRV(cuGraphInstantiateWithFlags)(&e, g, 0);
    CHECK_RC(DRV(cuGraphLaunch)(e, NULL), 719);
    CHECK(count("cuLaunchKernel") == 0, "failed launches must not count");
    return st_failed != 0;
}

static int child_counts(void)
{
    CUfunction f;
    DRV(cuInit)(0);
    DRV(fakecuda_make_function)("_Z1fv", &f);
    L(f, NULL);
    L(f, NULL);
    DRV(cuLaunchKernel_ptsz)(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    void *p;
    DRV(cuGetProcAddress)("cuLaunchKernel", &p, 7000, 2);
    DRV(cuGetProcAddress)("", &p, 0, 0);
    return 0;
}

void test_children(void)
{
    const char *old[] = {"FAKECUDA_DRIVER_VERSION", "12000", NULL};
    CHECK(run_child("--old-driver", old) == 0, "child --old-driver failed");
    const char *fail[] = {"FAKECUDA_FAIL_LAUNCH", "719", NULL};
    CHECK(run_child("--fail-launch", fail) == 0, "child --fail-launch failed");

    char counts[] = "/tmp/fakes_selftest_counts_XXXXXX",
         trace[] = "/tmp/fakes_selftest_trace_XXXXXX";
    close(mkstemp(counts));
    close(mkstemp(trace));
    const char *env[] = {"FAKECUDA_COUNTS", counts, "FAKECUDA_TRACE", trace, NULL};
    CHECK(run_child("--counts", env) == 0, "child --counts failed");
    char buf[4096];
    read_file(counts, buf, sizeof(buf));
    CHECK(strstr(buf, "cuLaunchKernel 2\n") && strstr(buf, "cuLaunchKernel_ptsz 1\n") &&
              strstr(buf, "cuGetProcAddress_requests 2\n") && !strstr(buf, "captured"),
          "FAKECUDA_COUNTS file:\n%s", buf);
    read_file(trace, buf, sizeof(buf));
    CHECK(!strcmp(buf, "cuLaunchKernel 7000 2 0\n\"\" 0 0 500\n"), "FAKECUDA_TRACE file:\n%s", buf);
    unlink(counts);
    unlink(trace);
}

int main(int argc, char **argv)
{
    st_argv = argv;
    setvbuf(stdout, NULL, _IOLBF, 0);
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h == NULL) {
        printf("FAIL: dlopen libcuda.so.1: %s (run with LD_LIBRARY_PATH=<build>/fakes)\n",
               dlerror());
        return 2;
    }
    st_libcuda = h;
    if (argc > 1) {
        if (!strcmp(argv[1], "--old-driver")) return child_old_driver();
        if (!strcmp(argv[1], "--fail-launch")) return child_fail_launch();
        if (!strcmp(argv[1], "--counts")) return child_counts();
        if (!strcmp(argv[1], "--runtime-trace")) return child_runtime_trace();
        if (!strcmp(argv[1], "--nvtx")) return child_nvtx();
        return 2;
    }
    test_procaddr();
    test_modules();
    test_launches();
    test_capture();
    test_children();
    test_runtime();
    test_recorder();
    printf("%d passed, %d failed\n", st_passed, st_failed);
    return st_failed != 0;
}
