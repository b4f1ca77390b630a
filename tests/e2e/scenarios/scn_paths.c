/* Every way a kernel reaches the GPU, for profile mode's GPU time (tests/e2e/test_gpu_paths.py).
 *
 * The program carries its own CUDA runtime, linked in statically (libfake_cudart_static.a), as
 * an nvcc program with the default -cudart static does, and links a library that carries
 * another (libfake_blas.so, as cuBLAS): LD_PRELOAD sees neither runtime's entry points, only the
 * driver calls they make. Each path launches kernels of its own names, so each path's GPU time
 * is told apart by label:
 *   static        the static runtime: cudaLaunchKernel (static_launch_kernel), <<<>>>'s
 *                 __cudaLaunchKernel (static_chevron_kernel), cudaLaunchKernelExC
 *                 (static_ex_kernel)
 *   static-graph  a graph captured and launched by the static runtime (two static_node_kernel)
 *   blas          the library's GEMM: gemmSN_NN_kernel and splitKreduce_kernel
 *   blas-captured the library's GEMM captured by the program (driver), replayed by cuGraphLaunch
 *   blas-graph    the library's GEMM captured and replayed by the library's own runtime
 *   driver        cuLaunchKernel called directly (driver_kernel)
 *   dlsym         cuLaunchKernel found with dlsym on a libcuda handle (dlsym_kernel)
 *   entry-point   cuLaunchKernel from the static runtime's cudaGetDriverEntryPoint (ep_kernel)
 *   shared        a plugin linked against the shared runtime (libkplugin_alpha.so: alpha)
 *   unhooked      a launch by a path no hook sees (fakecuda_launch_unhooked: unhooked_kernel)
 *   all           every one of the above, in that order
 * PATH may name several, comma-separated: they run in the order above. (CUPTI starts at the
 * first launch nvtxcorr sees: unhooked alone gets no GPU time.)
 *
 *   scn_paths PATH [THREADS [ITERATIONS]]
 * Each of THREADS threads (default 1) runs PATH ITERATIONS times (default 1) on a stream of its
 * own (with threads, after one run of PATH on the main thread); a graph path replays its graph
 * REPLAYS (3) times. Prints "rc <path> <code>" for each
 * failure and "done <launches>" at the end. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_abi.h"
#include "fake_blas.h"
#include "fakecuda.h"

enum { REPLAYS = 3 };

static void **fatbin;
static const int fatbin_stand_in = 0;
static char launch_name[] = "static_launch_kernel", chevron_name[] = "static_chevron_kernel",
            ex_name[] = "static_ex_kernel", node_name[] = "static_node_kernel";
#define STUB(name)                                                                                 \
    __attribute__((noinline, used)) static void name(void *arg)                                    \
    {                                                                                              \
        __asm__ volatile("" ::"r"(arg), "i"(__LINE__));                                            \
    }
STUB(launch_stub)
STUB(chevron_stub)
STUB(ex_stub)
STUB(node_stub)

/* As nvcc's host code registers a program's kernels with its runtime. */
__attribute__((constructor)) static void register_all(void)
{
    fatbin = __cudaRegisterFatBinary((void *)&fatbin_stand_in);
    __cudaRegisterFunction(fatbin, (const char *)launch_stub, launch_name, launch_name, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(fatbin, (const char *)chevron_stub, chevron_name, chevron_name, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(fatbin, (const char *)ex_stub, ex_name, ex_name, -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFunction(fatbin, (const char *)node_stub, node_name, node_name, -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(fatbin);
}

static const char *path;
static int iterations = 1;
static CUfunction driver_fn, dlsym_fn, ep_fn, unhooked_fn;
static CUresult (*dlsym_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                unsigned, unsigned, CUstream, void **, void **);
static CUresult (*ep_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
static int (*shared_launch)(void);
static _Atomic unsigned long long launches;

static int failed(const char *what, int rc)
{
    if (rc != 0) printf("rc %s %d\n", what, rc);
    return rc != 0;
}

static void static_runtime(cudaStream_t s)
{
    dim3 grid = {2, 1, 1}, block = {64, 1, 1};
    void *args[] = {NULL};
    failed("static.launch", cudaLaunchKernel((const void *)launch_stub, grid, block, args, 0, s));
    cudaKernel_t k;
    if (!failed("static.get-kernel", __cudaGetKernel(&k, (const void *)chevron_stub)))
        failed("static.chevron", __cudaLaunchKernel(k, grid, block, args, 0, s));
    cudaLaunchConfig_t config = {0};
    config.gridDim = grid, config.blockDim = block, config.stream = s;
    failed("static.ex", cudaLaunchKernelExC(&config, (const void *)ex_stub, args));
    launches += 3;
}

static void static_graph(cudaStream_t s)
{
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    void *args[] = {NULL};
    cudaGraph_t g = NULL;
    cudaGraphExec_t e = NULL;
    if (failed("static.capture", cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)))
        return;
    for (int i = 0; i < 2; i++)
        failed("static.node", cudaLaunchKernel((const void *)node_stub, grid, block, args, 0, s));
    failed("static.end", cudaStreamEndCapture(s, &g));
    if (failed("static.instantiate", cudaGraphInstantiate(&e, g, 0))) return;
    for (int i = 0; i < REPLAYS; i++)
        failed("static.graph-launch", cudaGraphLaunch(e, s));
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    launches += REPLAYS;
}

static void blas_captured(CUstream s)
{
    CUgraph g = NULL;
    CUgraphExec e = NULL;
    if (failed("blas.capture", cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)))
        return;
    failed("blas.gemm-captured", fakeblas_gemm(s));
    failed("blas.end", cuStreamEndCapture(s, &g));
    if (failed("blas.instantiate", cuGraphInstantiateWithFlags(&e, g, 0))) return;
    for (int i = 0; i < REPLAYS; i++)
        failed("blas.graph-launch", cuGraphLaunch(e, s));
    cuGraphExecDestroy(e);
    cuGraphDestroy(g);
    launches += REPLAYS;
}

/* Whether PATH, a comma-separated list, names p (or is "all"). */
static int is(const char *p)
{
    size_t n = strlen(p);
    if (!strcmp(path, "all")) return 1;
    for (const char *q = path; *q; q += strcspn(q, ","), q += *q == ',')
        if (!strncmp(q, p, n) && (q[n] == ',' || q[n] == 0)) return 1;
    return 0;
}

static void *thread_main(void *arg)
{
    (void)arg;
    CUstream s = NULL;
    if (failed("stream", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING))) return NULL;
    for (int it = 0; it < iterations; it++) {
        if (is("static")) static_runtime((cudaStream_t)s);
        if (is("static-graph")) static_graph((cudaStream_t)s);
        if (is("blas") && !failed("blas.gemm", fakeblas_gemm(s))) launches += 2;
        if (is("blas-captured")) blas_captured(s);
        if (is("blas-graph") && !failed("blas.graph", fakeblas_gemm_graph(s, REPLAYS)))
            launches += REPLAYS;
        if (is("driver") &&
            !failed("driver", cuLaunchKernel(driver_fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)))
            launches++;
        if (is("dlsym") &&
            !failed("dlsym", dlsym_launch(dlsym_fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)))
            launches++;
        if (is("entry-point") &&
            !failed("entry-point", ep_launch(ep_fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)))
            launches++;
        if (is("shared") && !failed("shared", shared_launch())) launches++;
        if (is("unhooked") && !failed("unhooked", fakecuda_launch_unhooked(unhooked_fn, s)))
            launches++;
    }
    failed("sync", cuStreamSynchronize(s));
    cuStreamDestroy(s);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: scn_paths PATH [THREADS [ITERATIONS]]\n");
        return 2;
    }
    path = argv[1];
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    iterations = argc > 3 ? atoi(argv[3]) : 1;
    /* The driver, as the program's own runtime loads it: cudaFree(0) starts it. */
    if (failed("init", cudaFree(NULL))) return 1;
    CUcontext ctx;
    cuCtxGetCurrent(&ctx);
    fakecuda_make_function("driver_kernel", &driver_fn);
    fakecuda_make_function("dlsym_kernel", &dlsym_fn);
    fakecuda_make_function("ep_kernel", &ep_fn);
    fakecuda_make_function("unhooked_kernel", &unhooked_fn);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    void *sym = cuda ? dlsym(cuda, "cuLaunchKernel") : NULL;
    memcpy(&dlsym_launch, &sym, sizeof sym);
    void *ep = NULL;
    enum cudaDriverEntryPointQueryResult q;
    failed("entry-point.get",
           cudaGetDriverEntryPointByVersion("cuLaunchKernel", &ep, 12000, cudaEnableDefault, &q));
    memcpy(&ep_launch, &ep, sizeof ep);
    if (is("shared")) {
        void *plugin = dlopen("libkplugin_alpha.so", RTLD_NOW);
        void *f = plugin ? dlsym(plugin, "plugin_launch") : NULL;
        memcpy(&shared_launch, &f, sizeof f);
        if (shared_launch == NULL) {
            fprintf(stderr, "scn_paths: libkplugin_alpha.so: %s\n", dlerror());
            return 1;
        }
    }
    if (dlsym_launch == NULL || ep_launch == NULL) {
        fprintf(stderr, "scn_paths: no cuLaunchKernel by dlsym or entry point\n");
        return 1;
    }
    pthread_t t[64];
    if (threads < 1 || threads > 64) threads = 1;
    /* With threads, the main thread runs PATH once first: each kernel's first launch (its
     * handles made lazily by the runtimes, under their locks, which a sanitizer cannot see
     * synchronise in the uninstrumented fakes) and CUPTI's start are behind; the threads then
     * launch at once. */
    if (threads > 1) {
        int keep = iterations;
        iterations = 1;
        thread_main(NULL);
        iterations = keep;
    }
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, thread_main, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("done %llu\n", (unsigned long long)launches);
    return 0;
}
