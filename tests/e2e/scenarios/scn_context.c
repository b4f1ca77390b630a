/* Program context (issue 20): a program that annotates itself with NVTX3, as frameworks do, on
 * the fake driver. nvtxcorr is its NVTX tool in these scenarios (NVTX_INJECTION64_PATH, set
 * by the test or by nvtxcorr stat); the tests read the summary's `contexts` rows.
 *
 *   scn_context levels          push/pop return levels through the tool, default and custom
 *                               domains, registered strings, and a second shared object with
 *                               its own NVTX (libctx_plugin.so, C++): "level <what> <n>"
 *   scn_context decode N        a two-layer decode step captured under layers.i/attn/...,
 *                               a memset node added under kv.reset, a memcpy node under
 *                               kv.copy, instantiated, replayed N
 *                               times under serve/step; eager launches under prefill/...
 *   scn_context threads T N     T threads, each N launches of add1 under worker.<t>
 *   scn_context hostile         a 10 MB message, bytes that are not UTF-8, unbalanced pops,
 *                               ranges 40 deep, a launch under each of 70,000 distinct paths
 *   scn_context bench N         N push/pop pairs, timed: "pushpop_ex_ns <per pair>" (a
 *                               registered string in a domain) and "pushpop_a_ns" (ASCII)
 *   scn_context early N         a graph of two gemm_kernel nodes built with cuGraphAddKernelNode
 *                               under "built", before any launch (so before CUPTI starts),
 *                               replayed N times under serve/step
 *   scn_context launches N      N launches of one kernel inside two ranges, timed:
 *                               "launch_ns <per launch>" (tests/bench/context_bench.py)
 *   scn_context registry D R S  hostile registration: D distinct nvtxDomainCreateA, R
 *                               nvtxDomainRegisterStringA of one string, S distinct strings;
 *                               prints the distinct handles each gave ("domains D'",
 *                               "same_string R'", "strings S'"), "rss_start_kb" before and
 *                               peak_rss_kb after, each phase's "ms_<phase>" (for
 *                               docs/performance.md, not checked); then a launch under a
 *                               registered string in the last domain created
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scn_common.h"

/* The fake driver's side channel (tests/fakes/fakecuda.h). */
extern int fakecuda_make_function(const char *mangled, CUfunction *out);

int ctx_plugin_step(CUfunction f, CUstream s, int *levels);

static CUfunction fn(const char *name)
{
    CUfunction f = NULL;
    if (fakecuda_make_function(name, &f) != 0) {
        printf("cannot make %s\n", name);
        exit(3);
    }
    return f;
}

static CUresult launch(CUfunction f, CUstream s)
{
    return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
}

static int levels(CUstream s)
{
    CUfunction add = fn("add1");
    nvtxDomainHandle_t app = nvtxDomainCreateA("app");
    nvtxStringHandle_t step = nvtxDomainRegisterStringA(app, "step");
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = step;
    printf("level push-a %d\n", nvtxRangePushA("outer"));
    printf("level push-ex %d\n", nvtxDomainRangePushEx(app, &a));
    printf("level push-w %d\n", nvtxRangePushW(L"wide\u00e9"));
    nvtxMarkA("a mark is tolerated");
    nvtxRangeId_t id = nvtxRangeStartA("start/end tolerated");
    CHECK("launch", launch(add, s));
    int plugin[2];
    CHECK("plugin", (CUresult)ctx_plugin_step(add, s, plugin));
    printf("level plugin-push %d\n", plugin[0]);
    printf("level plugin-pop %d\n", plugin[1]);
    nvtxRangeEnd(id);
    printf("level pop-w %d\n", nvtxRangePop());
    printf("level pop-ex %d\n", nvtxDomainRangePop(app));
    printf("level pop-a %d\n", nvtxRangePop());
    CHECK("launch-after", launch(add, s));
    return 0;
}

static CUgraph capture_decode(CUstream s, CUfunction gemm, CUfunction softmax, CUfunction act)
{
    CUgraph g = NULL;
    CHECK("begin", cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int layer = 0; layer < 2; layer++) {
        char name[32];
        snprintf(name, sizeof name, "layers.%d", layer);
        nvtxRangePushA(name);
        nvtxRangePushA("attn");
        nvtxRangePushA("attn.qkv");
        CHECK("cap-gemm", launch(gemm, s));
        nvtxRangePop();
        CHECK("cap-softmax", launch(softmax, s));
        nvtxRangePop();
        nvtxRangePushA("mlp");
        nvtxRangePushA("mlp.up");
        CHECK("cap-gemm", launch(gemm, s));
        CHECK("cap-gemm", launch(gemm, s));
        nvtxRangePop();
        CHECK("cap-act", launch(act, s));
        nvtxRangePop();
        nvtxRangePop();
    }
    CHECK("end", cuStreamEndCapture(s, &g));
    return g;
}

static int decode(CUstream s, int n)
{
    CUfunction gemm = fn("gemm_kernel"), softmax = fn("softmax_kernel"), act = fn("gelu_kernel");
    CUfunction add = fn("add1");
    CHECK("warm-up", launch(add, s)); /* outside any range: context [] */
    nvtxRangePushA("prefill");
    nvtxRangePushA("attn.qkv");
    CHECK("eager-gemm", launch(gemm, s));
    nvtxRangePop();
    nvtxRangePushA("mlp.up");
    CHECK("eager-gemm", launch(gemm, s));
    CHECK("eager-gemm", launch(gemm, s));
    nvtxRangePop();
    nvtxRangePop();
    CUgraph g = capture_decode(s, gemm, softmax, act);
    CUDA_MEMSET_NODE_PARAMS p = {0};
    p.dst = 1, p.elementSize = 1, p.width = 1, p.height = 1;
    CUgraphNode node;
    nvtxRangePushA("kv.reset");
    CHECK("memset-node", cuGraphAddMemsetNode(&node, g, NULL, 0, &p, NULL));
    nvtxRangePop();
    CUDA_MEMCPY3D c = {0};
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = c.dstDevice = 1, c.WidthInBytes = c.Height = c.Depth = 1;
    nvtxRangePushA("kv.copy");
    CHECK("memcpy-node", cuGraphAddMemcpyNode(&node, g, NULL, 0, &c, NULL));
    nvtxRangePop();
    CUgraphExec e;
    nvtxRangePushA("setup"); /* instantiation's own context is not the nodes' */
    CHECK("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    nvtxRangePop();
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("serve/step");
        CHECK("replay", cuGraphLaunch(e, s));
        nvtxRangePop();
    }
    CHECK("sync", cuStreamSynchronize(s));
    return 0;
}

typedef struct worker {
    int t, n;
    CUstream s;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    char name[32];
    snprintf(name, sizeof name, "worker.%d", w->t);
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    CUfunction add = fn("add1");
    nvtxRangePushA(name);
    for (int i = 0; i < w->n; i++)
        CHECK("worker-launch", launch(add, w->s));
    nvtxRangePop();
    return NULL;
}

static int threads(CUstream s, int nt, int n)
{
    pthread_t th[16];
    worker_t w[16];
    if (nt > 16) nt = 16;
    nvtxRangePushA("main");
    CHECK("first", launch(fn("add1"), s)); /* nvtxcorr starts here, before the workers */
    nvtxRangePop();
    for (int t = 0; t < nt; t++) {
        w[t] = (worker_t){t, n, s};
        pthread_create(&th[t], NULL, work, &w[t]);
    }
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    return 0;
}

static int hostile(CUstream s)
{
    CUfunction add = fn("add1");
    size_t big = 10u << 20;
    char *m = malloc(big + 1);
    memset(m, 'x', big);
    m[big] = 0;
    nvtxRangePushA(m); /* cut to 256 bytes */
    CHECK("long", launch(add, s));
    nvtxRangePop();
    free(m);
    nvtxRangePushA("bad\xff\xfe utf8 \xc3\x28");
    CHECK("utf8", launch(add, s));
    nvtxRangePop();
    for (int i = 0; i < 3; i++)
        printf("level unbalanced-pop %d\n", nvtxRangePop());
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "d%d", i);
        nvtxRangePushA(name);
    }
    CHECK("deep", launch(add, s));
    for (int i = 0; i < 40; i++)
        nvtxRangePop();
    nvtxRangePushA(NULL);
    nvtxRangePushEx(NULL);
    CHECK("null", launch(add, s));
    nvtxRangePop();
    nvtxRangePop();
    for (int i = 0; i < 70000; i++) {
        char name[32];
        snprintf(name, sizeof name, "path.%d", i);
        nvtxRangePushA(name);
        launch(add, s);
        nvtxRangePop();
    }
    CHECK("after", launch(add, s));
    return 0;
}

static int bench(long n)
{
    struct timespec a, b;
    nvtxDomainHandle_t d = nvtxDomainCreateA("bench");
    nvtxStringHandle_t str = nvtxDomainRegisterStringA(d, "bench.range");
    nvtxEventAttributes_t e = {0};
    e.version = NVTX_VERSION;
    e.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    e.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    e.message.registered = str;
    nvtxRangePushA("outer"); /* a thread's usual state: inside some range */
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        nvtxDomainRangePushEx(d, &e);
        nvtxDomainRangePop(d);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("pushpop_ex_ns %.2f\n",
           ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        nvtxRangePushA("layers.0");
        nvtxRangePop();
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("pushpop_a_ns %.2f\n",
           ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
    nvtxRangePop();
    return 0;
}

static int early(CUstream s, int n)
{
    CUfunction gemm = fn("gemm_kernel");
    CUgraph g;
    CUgraphNode nodes[2];
    CUDA_KERNEL_NODE_PARAMS p = {0};
    p.func = gemm, p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = p.blockDimY = p.blockDimZ = 1;
    CHECK("create", cuGraphCreate(&g, 0));
    nvtxRangePushA("built");
    for (int i = 0; i < 2; i++)
        CHECK("add", cuGraphAddKernelNode(&nodes[i], g, i ? nodes : NULL, (size_t)i, &p));
    nvtxRangePop();
    CUgraphExec e;
    CHECK("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("serve/step");
        CHECK("replay", cuGraphLaunch(e, s));
        nvtxRangePop();
    }
    return 0;
}

static int launches(CUstream s, long n)
{
    CUfunction add = fn("add1");
    CHECK("first", launch(add, s));
    nvtxRangePushA("layers.0");
    nvtxRangePushA("attn");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++)
        launch(add, s);
    clock_gettime(CLOCK_MONOTONIC, &b);
    nvtxRangePop();
    nvtxRangePop();
    printf("launch_ns %.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
    return 0;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* How many distinct values among n handles (sorts them). */
static long distinct(uintptr_t *h, long n)
{
    qsort(h, (size_t)n, sizeof *h, by_address);
    long k = 0;
    for (long i = 0; i < n; i++)
        k += i == 0 || h[i] != h[i - 1];
    return k;
}

static double ms_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

static int registry(CUstream s, long ndomains, long repeats, long nstrings)
{
    CUfunction add = fn("add1");
    CHECK("first", launch(add, s));
    long n = ndomains > nstrings ? ndomains : nstrings;
    uintptr_t *h = malloc(sizeof *h * (size_t)(n > 0 ? n : 1));
    char name[64];
    struct timespec t;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) printf("rss_start_kb %ld\n", strtol(line + 6, NULL, 10));
    if (f) fclose(f);
    nvtxDomainHandle_t d = nvtxDomainCreateA("registry");
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (long i = 0; i < ndomains; i++) {
        snprintf(name, sizeof name, "domain.%ld", i);
        h[i] = (uintptr_t)(d = nvtxDomainCreateA(name));
    }
    printf("ms_domains %.1f\n", ms_since(&t));
    printf("domains %ld\n", distinct(h, ndomains));
    clock_gettime(CLOCK_MONOTONIC, &t);
    nvtxStringHandle_t first = nvtxDomainRegisterStringA(d, "registry.step"), str;
    long same = 1;
    for (long i = 1; i < repeats; i++)
        same += (str = nvtxDomainRegisterStringA(d, "registry.step")) != first;
    printf("ms_same_string %.1f\n", ms_since(&t));
    printf("same_string %ld\n", repeats ? same : 0);
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (long i = 0; i < nstrings; i++) {
        snprintf(name, sizeof name, "string.%ld", i);
        h[i] = (uintptr_t)nvtxDomainRegisterStringA(d, name);
    }
    printf("ms_strings %.1f\n", ms_since(&t));
    printf("strings %ld\n", distinct(h, nstrings));
    free(h);
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = first;
    nvtxDomainRangePushEx(d, &a);
    CHECK("registered", launch(add, s));
    nvtxDomainRangePop(d);
    scn_print_peak_rss();
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "bench")) return bench(argc > 2 ? atol(argv[2]) : 1000000);
    CUstream s = scn_context();
    int rc = 2;
    if (!strcmp(mode, "levels"))
        rc = levels(s);
    else if (!strcmp(mode, "decode"))
        rc = decode(s, argc > 2 ? atoi(argv[2]) : 3);
    else if (!strcmp(mode, "threads"))
        rc = threads(s, argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atoi(argv[3]) : 10);
    else if (!strcmp(mode, "hostile"))
        rc = hostile(s);
    else if (!strcmp(mode, "early"))
        rc = early(s, argc > 2 ? atoi(argv[2]) : 2);
    else if (!strcmp(mode, "launches"))
        rc = launches(s, argc > 2 ? atol(argv[2]) : 1000000);
    else if (!strcmp(mode, "registry"))
        rc = registry(s, argc > 2 ? atol(argv[2]) : 100000, argc > 3 ? atol(argv[3]) : 10000000,
                      argc > 4 ? atol(argv[4]) : 100000);
    cuStreamSynchronize(s);
    return rc;
}
