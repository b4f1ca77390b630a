/* Launch-loop benchmark for the driver entry points, run against the fake driver
 * (tests/fakes/libcuda.so.1). A plain C program, compiled like an application (no
 * __CUDA_API_VERSION_INTERNAL) and linked with -lcuda, that launches the same kernel(s) in a
 * tight loop through one entry point:
 *
 *   direct    cuLaunchKernel, bound at link time
 *   ex        cuLaunchKernelEx, bound at link time (one CUlaunchConfig, built once)
 *   graph     cuGraphLaunch of an executable graph of two kernel nodes
 *   procaddr  cuLaunchKernel through the pointer that cuGetProcAddress gives, the resolver
 *             itself found with dlsym("cuGetProcAddress_v2"), as cudart and PyTorch do
 *
 * -hand wraps each launch in nvtxDomainRangePushEx (a registered string) and
 * nvtxDomainRangePop written into the source: the hand-instrumented reference nvtxcorr is
 * compared with. The same binary, unchanged, is run bare and under LD_PRELOAD=libnvtxcorr.so;
 * tests/bench/run_bench.py drives it. -k N makes N distinct kernels (fakecuda_make_function),
 * launched round-robin, with names of three real shapes so the first launch does real name
 * work (demangling, label matching). See bench_common.h for the options and the output. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>

#include "bench_common.h"

extern unsigned long long fakecuda_count(const char *name);
extern int fakecuda_make_function(const char *mangled, CUfunction *out);

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*getproc_fn)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

static launch_fn resolved_launch; /* the procaddr entry's pointer */
static CUlaunchConfig ex_config;  /* the ex entry's configuration (its stream is thread 0's) */

/* Two loops per entry point. `CALL` launches handle `h` on the worker's stream. The kernel
 * index wraps with a compare, not a modulo, so a loop over one kernel and over 100,000 do the
 * same arithmetic. Errors are summed in a register and stored once. */
#define BENCH_LOOPS(name, CALL)                                                                    \
    static void name##_plain(bench_worker_t *w, long n)                                            \
    {                                                                                              \
        void *const *hs = w->handles;                                                              \
        CUstream s = (CUstream)w->stream;                                                          \
        long k = 0, nk = w->nhandles, errors = 0;                                                  \
        (void)s; /* the ex entry's stream is in its config */                                      \
        for (long i = 0; i < n; i++) {                                                             \
            void *h = hs[k];                                                                       \
            if (++k == nk) k = 0;                                                                  \
            errors += (CALL) != CUDA_SUCCESS;                                                      \
        }                                                                                          \
        w->errors += errors;                                                                       \
    }                                                                                              \
    static void name##_hand(bench_worker_t *w, long n)                                             \
    {                                                                                              \
        void *const *hs = w->handles;                                                              \
        const nvtxEventAttributes_t *as = w->attrs;                                                \
        CUstream s = (CUstream)w->stream;                                                          \
        long k = 0, nk = w->nhandles, errors = 0;                                                  \
        (void)s; /* the ex entry's stream is in its config */                                      \
        for (long i = 0; i < n; i++) {                                                             \
            void *h = hs[k];                                                                       \
            nvtxDomainRangePushEx(bench_domain, &as[k]);                                           \
            if (++k == nk) k = 0;                                                                  \
            errors += (CALL) != CUDA_SUCCESS;                                                      \
            nvtxDomainRangePop(bench_domain);                                                      \
        }                                                                                          \
        w->errors += errors;                                                                       \
    }

BENCH_LOOPS(direct, cuLaunchKernel((CUfunction)h, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL))
BENCH_LOOPS(ex, cuLaunchKernelEx(&ex_config, (CUfunction)h, NULL, NULL))
BENCH_LOOPS(graph, cuGraphLaunch((CUgraphExec)h, s))
BENCH_LOOPS(procaddr, resolved_launch((CUfunction)h, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL))

static const bench_entry_t entries[] = {
    {"direct", direct_plain, direct_hand},
    {"ex", ex_plain, ex_hand},
    {"graph", graph_plain, graph_hand},
    {"procaddr", procaddr_plain, procaddr_hand},
    {NULL, NULL, NULL},
};

static void check(const char *what, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "bench_launch: %s failed: %d\n", what, (int)r);
        exit(1);
    }
}

/* Kernel i's mangled name, in one of three shapes seen in real programs: a C++ template in a
 * namespace, a plain C++ function, and a C name as Triton makes them. */
static char *kernel_name(long i)
{
    char id[32], *name = NULL;
    int len = snprintf(id, sizeof id, "kernel_%ld", i);
    switch (i % 3) {
    case 0:
        len = asprintf(&name, "_ZN5bench%d%sILi128ELi64EEEv16Flash_fwd_paramsif", len, id);
        break;
    case 1:
        len = asprintf(&name, "_Z%d%sPKfPfi", len, id);
        break;
    default:
        len = asprintf(&name, "triton_poi_fused_add_%s", id);
    }
    if (len < 0) {
        perror("asprintf");
        exit(1);
    }
    return name;
}

static CUfunction primer_fn;

/* The process's first launch, always cuLaunchKernel, never wrapped by the program. Its name
 * is mangled, so that loading the demangler (libstdc++) counts as initialisation. */
static int primer(bench_worker_t *w)
{
    return cuLaunchKernel(primer_fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)w->stream, NULL, NULL);
}

static CUgraphExec make_graph(CUfunction a, CUfunction b)
{
    CUgraph g;
    CUgraphNode n1, n2;
    CUDA_KERNEL_NODE_PARAMS p;
    CUgraphExec e;
    memset(&p, 0, sizeof p);
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 32, p.blockDimY = p.blockDimZ = 1;
    p.func = a;
    check("cuGraphCreate", cuGraphCreate(&g, 0));
    check("cuGraphAddKernelNode", cuGraphAddKernelNode(&n1, g, NULL, 0, &p));
    p.func = b;
    check("cuGraphAddKernelNode", cuGraphAddKernelNode(&n2, g, &n1, 1, &p));
    check("cuGraphInstantiate", cuGraphInstantiate(&e, g, 0));
    return e;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    const bench_entry_t *e = bench_parse(argc, argv, entries, &o);
    int graph = !strcmp(o.entry, "graph");
    CUdevice dev;
    CUcontext ctx;
    check("cuInit", cuInit(0));
    check("cuDeviceGet", cuDeviceGet(&dev, 0));
    check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
    check("cuCtxSetCurrent", cuCtxSetCurrent(ctx));

    long nk = graph ? 1 : o.kernels;
    char **names = calloc((size_t)nk, sizeof *names);
    void **handles = calloc((size_t)nk, sizeof *handles);
    bench_worker_t *workers = calloc((size_t)o.threads, sizeof *workers);
    if (names == NULL || handles == NULL || workers == NULL) {
        perror("calloc");
        return 1;
    }
    check("fakecuda_make_function",
          (CUresult)fakecuda_make_function("_Z12bench_primerv", &primer_fn));
    for (long i = 0; i < nk; i++) {
        names[i] = kernel_name(i);
        check("fakecuda_make_function",
              (CUresult)fakecuda_make_function(names[i], (CUfunction *)&handles[i]));
    }
    if (graph) {
        CUfunction b;
        check("fakecuda_make_function", (CUresult)fakecuda_make_function(kernel_name(1), &b));
        handles[0] = make_graph((CUfunction)handles[0], b);
        free(names[0]);
        names[0] = strdup("decode.graph");
    }
    if (!strcmp(o.entry, "procaddr")) {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW);
        getproc_fn getproc = lib ? (getproc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
        CUdriverProcAddressQueryResult st;
        if (getproc == NULL) {
            fprintf(stderr, "bench_launch: no cuGetProcAddress_v2\n");
            return 1;
        }
        check("cuGetProcAddress",
              getproc("cuLaunchKernel", (void **)&resolved_launch, 12000, 0, &st));
    }
    const nvtxEventAttributes_t *attrs = o.hand ? bench_hand_attrs(names, nk) : NULL;
    for (int t = 0; t < o.threads; t++) {
        CUstream s;
        check("cuStreamCreate", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        workers[t] =
            (bench_worker_t){.stream = s, .handles = handles, .attrs = attrs, .nhandles = nk};
    }
    ex_config.gridDimX = ex_config.gridDimY = ex_config.gridDimZ = 1;
    ex_config.blockDimX = 32, ex_config.blockDimY = ex_config.blockDimZ = 1;
    ex_config.hStream = (CUstream)workers[0].stream;

    bench_run(&o, e, workers, primer);
    /* The primer is a cuLaunchKernel whatever the entry point. */
    unsigned long long driver = fakecuda_count("cuLaunchKernel");
    if (graph)
        driver += fakecuda_count("cuGraphLaunch");
    else if (!strcmp(o.entry, "ex"))
        driver += fakecuda_count("cuLaunchKernelEx");
    printf("driver %llu\n", driver);
    return 0;
}
