/*
 * Self-test, part three: the fake runtime (libcudart.so.13) driven the way nvcc-generated code
 * drives it (fat binary and kernel registration, <<<>>> configuration, __cudaGetKernel +
 * __cudaLaunchKernel) plus the runtime API the scenarios use; the order of its driver requests;
 * and the recording NVTX tool in its three modes, through the real NVTX v3 headers.
 */
#define _GNU_SOURCE
#include "selftest.h"

#include "fakecuda.h"

#include <cuda_runtime_api.h>

#include "cudart_abi.h"

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *cudart;

static void *rt(const char *name)
{
    return st_sym(cudart, "libcudart.so.13", name);
}
#define RT(name) ((__typeof__(&name))rt(#name))

/* Stand-ins for the host stubs nvcc generates: only their addresses matter. */
static void stub_a(void) {}
static void stub_b(void) {}

static void *open_cudart(void)
{
    cudart = dlopen("libcudart.so.13", RTLD_NOW);
    if (cudart == NULL) printf("FAIL: dlopen libcudart.so.13: %s\n", dlerror());
    return cudart;
}

static void register_kernels(void)
{
    static const char fatbin[16];
    void **h = RT(__cudaRegisterFatBinary)((void *)fatbin);
    RT(__cudaRegisterFunction)
    (h, (const char *)stub_a, (char *)"_Z6kern_av", "_Z6kern_av", -1, NULL, NULL, NULL, NULL, NULL);
    RT(__cudaRegisterFunction)
    (h, (const char *)stub_b, (char *)"_ZN2ns6kern_bEv", "kern_b", -1, NULL, NULL, NULL, NULL,
     NULL);
    RT(__cudaRegisterFatBinaryEnd)(h);
}

void test_runtime(void)
{
    if (open_cudart() == NULL) {
        st_failed++;
        return;
    }
    register_kernels();
    const char *name = NULL;
    CHECK_RC(RT(cudaFuncGetName)(&name, (const void *)stub_b), cudaSuccess);
    CHECK(name && !strcmp(name, "_ZN2ns6kern_bEv"), "cudaFuncGetName %s", name);

    /* <<<2, 32>>> as nvcc compiles it in CUDA 13. */
    dim3 g = {2, 1, 1}, b = {32, 1, 1}, g2, b2;
    size_t shmem = 1;
    cudaStream_t s0 = (cudaStream_t)1;
    CHECK(RT(__cudaPushCallConfiguration)(g, b, 0, NULL) == 0, "push");
    CHECK_RC(RT(__cudaPopCallConfiguration)(&g2, &b2, &shmem, &s0), cudaSuccess);
    CHECK(g2.x == 2 && b2.x == 32 && shmem == 0 && s0 == NULL, "popped configuration");
    CHECK_RC(RT(__cudaPopCallConfiguration)(&g2, &b2, &shmem, &s0), cudaErrorMissingConfiguration);
    CHECK_RC(RT(cudaGetLastError)(), cudaErrorMissingConfiguration);
    CHECK_RC(RT(cudaGetLastError)(), cudaSuccess);

    cudaKernel_t k = NULL;
    unsigned long long n = count("cuLaunchKernel"), np = count("cuLaunchKernel_ptsz");
    CHECK_RC(RT(__cudaGetKernel)(&k, (const void *)stub_a), cudaSuccess);
    name = NULL;
    CHECK_RC(DRV(cuKernelGetName)(&name, (CUkernel)k), CUDA_SUCCESS);
    CHECK(name && !strcmp(name, "_Z6kern_av"), "runtime kernel is a driver CUkernel: %s", name);
    CHECK_RC(RT(__cudaLaunchKernel)(k, g, b, NULL, 0, NULL), cudaSuccess);
    CHECK_RC(RT(__cudaLaunchKernel_ptsz)(k, g, b, NULL, 0, NULL), cudaSuccess);
    CHECK_RC(RT(cudaLaunchKernel)((const void *)stub_b, g, b, NULL, 0, NULL), cudaSuccess);
    CHECK_RC(RT(cudaLaunchKernel_ptsz)((const void *)stub_b, g, b, NULL, 0, NULL), cudaSuccess);
    CHECK(count("cuLaunchKernel") == n + 2 && count("cuLaunchKernel_ptsz") == np + 2,
          "runtime launches reach the matching driver variant");
    cudaLaunchConfig_t cfg = {.gridDim = g, .blockDim = b};
    n = count("cuLaunchKernelEx_ptsz");
    CHECK_RC(RT(cudaLaunchKernelExC_ptsz)(&cfg, (const void *)stub_a, NULL), cudaSuccess);
    CHECK(count("cuLaunchKernelEx_ptsz") == n + 1, "ExC_ptsz");
    n = count("cuLaunchCooperativeKernel");
    CHECK_RC(RT(cudaLaunchCooperativeKernel)((const void *)stub_a, g, b, NULL, 0, NULL),
             cudaSuccess);
    CHECK(count("cuLaunchCooperativeKernel") == n + 1, "cooperative");
    CHECK_RC(RT(cudaLaunchKernel)((const void *)open_cudart, g, b, NULL, 0, NULL),
             cudaErrorInvalidDeviceFunction);
    CHECK_RC(RT(cudaPeekAtLastError)(), cudaErrorInvalidDeviceFunction);
    CHECK_RC(RT(cudaGetLastError)(), cudaErrorInvalidDeviceFunction);
    CHECK_RC(RT(cudaGetLastError)(), cudaSuccess);

    cudaFunction_t f = NULL;
    CHECK_RC(RT(cudaGetFuncBySymbol)(&f, (const void *)stub_a), cudaSuccess);
    CHECK(f != NULL && (void *)f != (void *)k, "function differs from kernel");

    /* Capture, instantiate, launch, destroy and reuse, all through the runtime. */
    cudaStream_t s;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t e, e2;
    enum cudaStreamCaptureStatus cs;
    CHECK_RC(RT(cudaStreamCreate)(&s), cudaSuccess);
    CHECK_RC(RT(cudaStreamBeginCapture)(NULL, cudaStreamCaptureModeGlobal),
             cudaErrorStreamCaptureUnsupported);
    CHECK_RC(RT(cudaStreamBeginCapture)(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_RC(RT(__cudaLaunchKernel)(k, g, b, NULL, 0, s), cudaSuccess);
    CHECK_RC(RT(cudaLaunchKernel)((const void *)stub_b, g, b, NULL, 0, s), cudaSuccess);
    CHECK_RC(RT(cudaStreamIsCapturing)(s, &cs), cudaSuccess);
    CHECK(cs == cudaStreamCaptureStatusActive, "runtime capture status %d", cs);
    size_t ndeps = 0;
    CHECK_RC(RT(cudaStreamGetCaptureInfo)(s, &cs, NULL, NULL, NULL, NULL, &ndeps), cudaSuccess);
    CHECK(ndeps == 1, "deps %zu", ndeps);
    CHECK_RC(RT(cudaStreamEndCapture)(s, &graph), cudaSuccess);
    struct cudaKernelNodeParams kp = {.func = (void *)stub_a, .gridDim = g, .blockDim = b};
    cudaGraphNode_t node;
    CHECK_RC(RT(cudaGraphAddKernelNode)(&node, graph, NULL, 0, &kp), cudaSuccess);
    unsigned long long gk = count("graph_kernels"), gl = count("cuGraphLaunch_ptsz");
    CHECK_RC(RT(cudaGraphInstantiate)(&e, graph, 0), cudaSuccess);
    CHECK_RC(RT(cudaGraphLaunch_ptsz)(e, NULL), cudaSuccess);
    CHECK(count("graph_kernels") == gk + 3 && count("cuGraphLaunch_ptsz") == gl + 1,
          "runtime graph launch");
    CHECK_RC(RT(cudaGraphExecDestroy)(e), cudaSuccess);
    CHECK_RC(RT(cudaGraphInstantiateWithFlags)(&e2, graph, 0), cudaSuccess);
    CHECK(e2 == e, "runtime instantiation reuses the destroyed handle");
    cudaGraphInstantiateParams ip = {0};
    CHECK_RC(RT(cudaGraphInstantiateWithParams)(&e, graph, &ip), cudaSuccess);
    cudaGraphExecUpdateResultInfo ui;
    CHECK_RC(RT(cudaGraphExecUpdate)(e, graph, &ui), cudaSuccess);
    CHECK_RC(RT(cudaGraphDestroy)(graph), cudaSuccess);
    CHECK_RC(RT(cudaStreamSynchronize)(s), cudaSuccess);
    CHECK_RC(RT(cudaStreamDestroy)(s), cudaSuccess);

    /* Driver entry points: default flags follow the entry point's stream flavour. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* deprecated, still exported */
    void *p = NULL;
    enum cudaDriverEntryPointQueryResult q;
    CHECK_RC(RT(cudaGetDriverEntryPoint)("cuLaunchKernel", &p, cudaEnableDefault, &q), cudaSuccess);
    CHECK(p == drv("cuLaunchKernel") && q == cudaDriverEntryPointSuccess, "entry point");
    CHECK_RC(RT(cudaGetDriverEntryPoint_ptsz)("cuLaunchKernel", &p, cudaEnableDefault, &q),
             cudaSuccess);
    CHECK(p == drv("cuLaunchKernel_ptsz"), "entry point _ptsz");
    CHECK_RC(RT(cudaGetDriverEntryPointByVersion)("cuGraphInstantiate", &p, 10000,
                                                  cudaEnableDefault, &q),
             cudaSuccess);
    CHECK(p == drv("cuGraphInstantiate"), "entry point by version");
    CHECK_RC(RT(cudaGetDriverEntryPointByVersion)("cuLaunchKernel", &p, 12000,
                                                  cudaEnablePerThreadDefaultStream, &q),
             cudaSuccess);
    CHECK(p == drv("cuLaunchKernel_ptsz"), "entry point by version, per-thread");
    CHECK_RC(RT(cudaGetDriverEntryPoint)("cuNothing", &p, cudaEnableDefault, &q),
             cudaErrorSymbolNotFound);
    CHECK(q == cudaDriverEntryPointSymbolNotFound, "not found status %d", q);
#pragma GCC diagnostic pop
    RT(cudaGetLastError)();

    int *d = NULL, h[4] = {1, 2, 3, 4}, back[4] = {0};
    CHECK_RC(RT(cudaMalloc)((void **)&d, sizeof(h)), cudaSuccess);
    CHECK_RC(RT(cudaMemcpy)(d, h, sizeof(h), cudaMemcpyHostToDevice), cudaSuccess);
    CHECK_RC(RT(cudaMemcpy)(back, d, sizeof(h), cudaMemcpyDeviceToHost), cudaSuccess);
    CHECK(back[3] == 4, "memcpy round trip");
    CHECK_RC(RT(cudaFree)(d), cudaSuccess);
    int devs = 0;
    CHECK_RC(RT(cudaGetDeviceCount)(&devs), cudaSuccess);
    CHECK(devs == 1, "devices %d", devs);
    CHECK(!strcmp(RT(cudaGetErrorName)(cudaErrorStreamCaptureImplicit),
                  "cudaErrorStreamCaptureImplicit"),
          "error names");
}

/* ---- children ----------------------------------------------------------------------------------
 */

int child_runtime_trace(void)
{
    int n = 0;
    if (open_cudart() == NULL) return 1;
    return RT(cudaGetDeviceCount)(&n) != cudaSuccess || n != 1;
}

static void *nvtx_thread(void *arg)
{
    nvtxRangePushA("thread two");
    nvtxRangePop();
    return arg;
}

int child_nvtx(void)
{
    const char *expect = getenv("ST_NVTX_EXPECT");
    nvtxDomainHandle_t d = nvtxDomainCreateA("selftest");
    if (expect != NULL && !strcmp(expect, "fail"))
        return d != NULL; /* a failed tool leaves NVTX as no-ops */
    if (d == NULL || nvtxDomainCreateA("selftest") != d || nvtxDomainCreateA("other") == d)
        return 3;
    nvtxStringHandle_t s1 = nvtxDomainRegisterStringA(d, "registered text");
    nvtxStringHandle_t s2 = nvtxDomainRegisterStringA(d, "second");
    const char *mode = getenv("NVTXREC_MODE");
    int noop = mode != NULL && !strcmp(mode, "noop"); /* the no-op tool shares one handle */
    if (s1 == NULL || s2 == NULL || (s1 == s2 && !noop)) return 4;
    nvtxDomainNameCategoryA(d, 7, "my-category");
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF00FF00u;
    a.category = 7;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s1;
    nvtxDomainRangePushEx(d, &a);
    nvtxRangePushA("plain");
    nvtxEventAttributes_t m = {0};
    m.version = NVTX_VERSION;
    m.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    m.messageType = NVTX_MESSAGE_TYPE_ASCII;
    m.message.ascii = "mark\twith tab";
    nvtxDomainMarkEx(d, &m);
    nvtxRangePop();
    nvtxDomainRangePop(d);
    pthread_t t;
    pthread_create(&t, NULL, nvtx_thread, NULL);
    pthread_join(t, NULL);
    nvtxNameCategoryA(3, "cat3");
    return 0;
}

static const char nvtx_expected[] =
    "domain\tselftest\n"
    "domain\tother\n"
    "category\tselftest\t7\tmy-category\n"
    "push\t1\tselftest\tregistered text\tcolor=0xFF00FF00\tcategory=7\tregistered=1\n"
    "push\t1\tdefault\tplain\tcolor=-\tcategory=0\tregistered=0\n"
    "mark\t1\tselftest\tmark\\twith tab\tcolor=-\tcategory=0\tregistered=0\n"
    "pop\t1\tdefault\n"
    "pop\t1\tselftest\n"
    "push\t2\tdefault\tthread two\tcolor=-\tcategory=0\tregistered=0\n"
    "pop\t2\tdefault\n"
    "category\tdefault\t3\tcat3\n";

void test_recorder(void)
{
    char lib[4200], out[] = "/tmp/fakes_selftest_nvtx_XXXXXX", buf[8192];
    snprintf(lib, sizeof(lib), "%s/libnvtx_recorder.so", fakes_dir());
    close(mkstemp(out));

    const char *rec[] = {"NVTX_INJECTION64_PATH", lib, "NVTXREC_OUT", out, NULL};
    CHECK(run_child("--nvtx", rec) == 0, "NVTX child (record) failed");
    read_file(out, buf, sizeof(buf));
    CHECK(!strcmp(buf, nvtx_expected), "recorder output:\n%s--- expected:\n%s", buf, nvtx_expected);

    CHECK(truncate(out, 0) == 0, "truncate");
    const char *noop[] = {"NVTX_INJECTION64_PATH", lib,    "NVTXREC_OUT", out,
                          "NVTXREC_MODE",          "noop", NULL};
    CHECK(run_child("--nvtx", noop) == 0, "NVTX child (noop) failed");
    CHECK(read_file(out, buf, sizeof(buf)) == 0, "noop mode wrote:\n%s", buf);

    const char *fail[] = {
        "NVTX_INJECTION64_PATH", lib,    "NVTXREC_OUT", out, "NVTXREC_FAIL_INIT", "1",
        "ST_NVTX_EXPECT",        "fail", NULL};
    CHECK(run_child("--nvtx", fail) == 0, "NVTX child (failing init) failed");
    CHECK(read_file(out, buf, sizeof(buf)) == 0, "failed tool wrote:\n%s", buf);
    unlink(out);

    /* The runtime's driver requests: the real runtime's opening, then only known requests. */
    char trace[] = "/tmp/fakes_selftest_rttrace_XXXXXX";
    close(mkstemp(trace));
    const char *tr[] = {"FAKECUDA_TRACE", trace, NULL};
    CHECK(run_child("--runtime-trace", tr) == 0, "runtime trace child failed");
    read_file(trace, buf, sizeof(buf));
    CHECK(!strncmp(buf,
                   "\"\" 0 0 500\ncuInit 2000 0 0\ncuGetProcAddress 11030 0 0\n"
                   "cuGetProcAddress 12000 0 0\n",
                   strlen("\"\" 0 0 500\ncuInit 2000 0 0\ncuGetProcAddress 11030 0 0\n"
                          "cuGetProcAddress 12000 0 0\n")),
          "runtime trace opening:\n%s", buf);
    int lines = 0, unknown = 0, failed = 0;
    for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save), lines++) {
        char sym[256];
        int version, flags, result;
        if (sscanf(line, "%255s %d %d %d", sym, &version, &flags, &result) != 4) continue;
        const char *name = strcmp(sym, "\"\"") ? sym : "";
        if (!in_reference(name, version, flags)) {
            unknown++;
            printf("  not a request of the real runtime: %s\n", line);
        }
        failed += lines > 0 && result != 0;
    }
    CHECK(lines > 40 && unknown == 0 && failed == 0,
          "runtime trace: %d lines, %d unknown, %d failed", lines, unknown, failed);
    unlink(trace);
}
