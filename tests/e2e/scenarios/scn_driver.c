/* Scenario program for the driver-API paths. A pure C program (no libstdc++), linked with the
 * fake libcuda.so.1, that reaches the launch entry points the ways real programs do:
 *
 *   direct    symbols bound at link time (-lcuda)
 *   dlsym     dlopen("libcuda.so.1") + dlsym, as Triton does
 *   procaddr  dlsym("cuGetProcAddress_v2"), re-resolving cuGetProcAddress through itself at
 *             11030 and 12000, then every launch entry at its versions and flags, as cudart does
 *   replay F  replays a list of cuGetProcAddress requests ("symbol version flags")
 *   threads N 8 threads, N launches each
 *   fail      launches that fail (bad handle, bad dims)
 *   graphs    stream capture, explicit construction, instantiate on every driver path,
 *             update, destroy and handle reuse, cross-thread launch
 *   many N    N distinct kernels, each launched twice; `manygraphs N`: N graphs
 *   named NAME...  a kernel of each NAME (bytes as given: control bytes too), launched once
 *
 * It prints "rc <what> <CUresult>" per call and the fake driver's counters, for run_tests.py
 * to compare with what the NVTX recorder saw. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1 /* declare every ABI symbol (cuLaunchKernel_ptsz, ...) */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scn_common.h"

extern unsigned long long fakecuda_count(const char *name);
extern int fakecuda_make_function(const char *mangled, CUfunction *out);

static CUfunction add1, flash, triton;
static CUstream stream;

static void setup(void)
{
    stream = scn_context();
    CHECK("cuModuleLoadData", scn_load_kernels(&add1, &flash, &triton));
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **);

typedef struct launchers {
    launch_fn k, k_ptsz;
    launch_ex_fn ex, ex_ptsz;
    coop_fn coop, coop_ptsz;
} launchers_t;

/* One launch through each of the six kernel-launch variants. */
static void launch_all(const launchers_t *l)
{
    CUlaunchConfig cfg = {0};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.hStream = stream;
    CHECK("cuLaunchKernel", l->k(add1, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
    CHECK("cuLaunchKernel_ptsz", l->k_ptsz(flash, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CHECK("cuLaunchKernelEx", l->ex(&cfg, triton, NULL, NULL));
    CHECK("cuLaunchKernelEx_ptsz", l->ex_ptsz(&cfg, add1, NULL, NULL));
    CHECK("cuLaunchCooperativeKernel", l->coop(flash, 1, 1, 1, 32, 1, 1, 0, stream, NULL));
    CHECK("cuLaunchCooperativeKernel_ptsz",
          l->coop_ptsz(triton, 1, 1, 1, 32, 1, 1, 0, stream, NULL));
}

static void *libcuda(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h == NULL) {
        fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
        exit(3);
    }
    return h;
}

typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);

static gpa2_fn gpa2;
static gpa1_fn gpa1;

/* What cudart does before anything else: the driver's resolver, then itself through itself. */
static void get_resolvers(void)
{
    gpa2_fn first = (gpa2_fn)dlsym(libcuda(), "cuGetProcAddress_v2");
    CUdriverProcAddressQueryResult st;
    first("cuGetProcAddress", (void **)&gpa1, 11030, 0, &st);
    first("cuGetProcAddress", (void **)&gpa2, 12000, 0, &st);
    if (!gpa1 || !gpa2) {
        fprintf(stderr, "cuGetProcAddress did not resolve itself\n");
        exit(3);
    }
}

static void *proc(const char *sym, int version, int flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CUresult r = gpa2(sym, &p, version, (cuuint64_t)flags, &st);
    if (r != CUDA_SUCCESS || p == NULL) {
        fprintf(stderr, "cuGetProcAddress(%s, %d, %d) failed: %d\n", sym, version, flags, r);
        exit(3);
    }
    return p;
}

static int replay(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512], sym[256];
    int version, flags, n = 0, found = 0, wrapped = 0;
    void *h = libcuda();
    if (f == NULL) return perror(path), 3;
    get_resolvers();
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "\"\" %d %d", &version, &flags) == 2)
            sym[0] = 0;
        else if (sscanf(line, "%255s %d %d", sym, &version, &flags) != 3)
            continue;
        void *p = NULL;
        CUdriverProcAddressQueryResult st;
        CUresult r = (n % 2 ? gpa2(sym, &p, version, (cuuint64_t)flags, &st)
                            : gpa1(sym, &p, version, (cuuint64_t)flags));
        n++;
        if (r == CUDA_SUCCESS && p) {
            found++;
            Dl_info info;
            int ok = dladdr(p, &info) && info.dli_fbase != NULL;
            const char *what = ok && info.dli_sname ? info.dli_sname : "?";
            /* The symbol each request resolves to, so a run without the library (the
             * driver's own answer) can be compared with a run with it (the wrapper's name
             * must be the same ABI symbol). A pointer in libnvtxcorr.so is a wrapper: the
             * file's own name, not its directory, which may be a clone called nvtxcorr. */
            printf("resolved %s %d %d -> %s\n", sym[0] ? sym : "\"\"", version, flags, what);
            const char *file = ok && info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
            if (file && !strcmp(file + 1, "libnvtxcorr.so")) {
                wrapped++;
                printf("wrapped %s %d %d -> %s\n", sym, version, flags, what);
            }
        }
    }
    fclose(f);
    (void)h;
    printf("replayed %d found %d wrapped %d\n", n, found, wrapped);
    return 0;
}

static void *thread_main(void *arg)
{
    int n = *(int *)arg;
    for (int i = 0; i < n; i++) {
        CUresult r = (i % 2 ? cuLaunchKernel(add1, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL)
                            : cuLaunchKernel_ptsz(flash, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        if (r != CUDA_SUCCESS) printf("rc thread-launch %d\n", r);
    }
    return NULL;
}

static int threads(int n)
{
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, thread_main, &n);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    return 0;
}

static void fail(void)
{
    CUlaunchConfig cfg = {0};
    CHECK("fail-null", cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
    CHECK("fail-dims", cuLaunchKernel(add1, 0, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
    CHECK("fail-ex", cuLaunchKernelEx(&cfg, add1, NULL, NULL));
    CHECK("fail-graph", cuGraphLaunch(NULL, stream));
    CHECK("ok-after", cuLaunchKernel(add1, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
}

extern int scn_graphs(int argc, char **argv, CUstream s, CUfunction k[3],
                      void *(*getproc)(const char *, int, int));

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "direct";
    setvbuf(stdout, NULL, _IOLBF, 0);
    setup();
    if (!strcmp(mode, "direct")) {
        launchers_t l = {
            cuLaunchKernel,        cuLaunchKernel_ptsz,       cuLaunchKernelEx,
            cuLaunchKernelEx_ptsz, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz};
        launch_all(&l);
    } else if (!strcmp(mode, "dlsym")) {
        void *h = libcuda();
        launchers_t l = {(launch_fn)dlsym(h, "cuLaunchKernel"),
                         (launch_fn)dlsym(h, "cuLaunchKernel_ptsz"),
                         (launch_ex_fn)dlsym(h, "cuLaunchKernelEx"),
                         (launch_ex_fn)dlsym(h, "cuLaunchKernelEx_ptsz"),
                         (coop_fn)dlsym(h, "cuLaunchCooperativeKernel"),
                         (coop_fn)dlsym(h, "cuLaunchCooperativeKernel_ptsz")};
        launch_all(&l);
    } else if (!strcmp(mode, "procaddr")) {
        get_resolvers();
        launchers_t l = {(launch_fn)proc("cuLaunchKernel", 4000, 0),
                         (launch_fn)proc("cuLaunchKernel", 7000, 2),
                         (launch_ex_fn)proc("cuLaunchKernelEx", 11060, 0),
                         (launch_ex_fn)proc("cuLaunchKernelEx", 12000, 2),
                         (coop_fn)proc("cuLaunchCooperativeKernel", 9000, 1),
                         (coop_fn)proc("cuLaunchCooperativeKernel", 13000, 2)};
        launch_all(&l);
        /* The same through the 4-argument resolver. */
        launch_fn k = NULL;
        gpa1("cuLaunchKernel", (void **)&k, 12000, 0);
        CHECK("gpa1-cuLaunchKernel", k(add1, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
    } else if (!strcmp(mode, "replay") && argc > 2) {
        return replay(argv[2]);
    } else if (!strcmp(mode, "threads")) {
        threads(argc > 2 ? atoi(argv[2]) : 1000);
        scn_print_peak_rss();
    } else if (!strcmp(mode, "fail")) {
        fail();
    } else if (!strcmp(mode, "many")) {
        int n = argc > 2 ? atoi(argv[2]) : 100;
        char base[32], name[64];
        for (int i = 0; i < n; i++) {
            CUfunction f;
            snprintf(base, sizeof base, "kernel%d", i);
            snprintf(name, sizeof name, "_Z%zu%sPf", strlen(base), base); /* kernelN(float*) */
            if (fakecuda_make_function(name, &f) != 0) return 3;
            for (int j = 0; j < 2; j++)
                if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL) != CUDA_SUCCESS)
                    return 4;
        }
    } else if (!strcmp(mode, "named")) {
        for (int i = 2; i < argc; i++) {
            CUfunction f;
            if (fakecuda_make_function(argv[i], &f) != 0) return 3;
            CHECK("named", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL));
        }
    } else {
        CUfunction k[3] = {add1, flash, triton};
        get_resolvers();
        return scn_graphs(argc - 1, argv + 1, stream, k, proc);
    }
    printf("count launches %llu\n",
           fakecuda_count("cuLaunchKernel") + fakecuda_count("cuLaunchKernel_ptsz") +
               fakecuda_count("cuLaunchKernelEx") + fakecuda_count("cuLaunchKernelEx_ptsz") +
               fakecuda_count("cuLaunchCooperativeKernel") +
               fakecuda_count("cuLaunchCooperativeKernel_ptsz"));
    return 0;
}
