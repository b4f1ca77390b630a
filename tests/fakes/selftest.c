/*
 * Self-test of the test fakes (CTest: fakes.selftest).  It checks that the fake driver behaves
 * the way the end-to-end tests rely on: cuGetProcAddress semantics (ABI versions, _ptsz
 * flavours, not found, version not sufficient, every request of the real CUDA 13.0 runtime),
 * modules and names, launch counting and errors, stream capture -> instantiate -> launch with
 * the real capture rules, executable-graph handle reuse, the environment switches, and then the
 * fake runtime and the recording NVTX tool (selftest_runtime.c).  The driver is dlopen'ed, as
 * the real runtime does; checks that need another environment run in a re-executed child.
 * Prints "N passed, N failed" and exits non-zero on failure.
 */
#define _GNU_SOURCE
#include "selftest.h"

#include "fakecuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int st_passed, st_failed;
void *st_libcuda;
char **st_argv;
CUfunction st_fa, st_fb;
CUkernel st_kx;

void *st_sym(void *lib, const char *lib_name, const char *name)
{
    void *p = dlsym(lib, name);
    if (p == NULL) {
        printf("FAIL: %s does not export %s\n", lib_name, name);
        exit(2);
    }
    return p;
}

void *drv(const char *name)
{
    return st_sym(st_libcuda, "libcuda.so.1", name);
}

unsigned long long count(const char *name)
{
    return DRV(fakecuda_count)(name);
}

int read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return (int)n;
}

const char *fakes_dir(void)
{
    static char dir[4096];
    Dl_info info;
    if (dir[0] == '\0' && dladdr(drv("cuInit"), &info) && info.dli_fname != NULL) {
        snprintf(dir, sizeof(dir), "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash != NULL)
            *slash = '\0';
        else
            snprintf(dir, sizeof(dir), ".");
    }
    return dir;
}

int run_child(const char *mode, const char *const *env)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (; env != NULL && env[0] != NULL; env += 2)
            setenv(env[0], env[1], 1);
        execl("/proc/self/exe", st_argv[0], mode, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t,
                           CUdriverProcAddressQueryResult *);

/* ---- cuGetProcAddress --------------------------------------------------------------------------
 */

struct expect {
    const char *symbol;
    int version, flags;
    const char *export; /* the exported function the request must yield */
};

static const struct expect expected[] = {
    {"cuGetProcAddress", 11030, 0, "cuGetProcAddress"},
    {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
    {"cuGraphInstantiate", 10000, 0, "cuGraphInstantiate"},
    {"cuGraphInstantiate", 11000, 0, "cuGraphInstantiate_v2"},
    {"cuGraphInstantiate", 13000, 0, "cuGraphInstantiate_v2"},
    {"cuGraphExecUpdate", 10020, 0, "cuGraphExecUpdate"},
    {"cuGraphExecUpdate", 11080, 0, "cuGraphExecUpdate"},
    {"cuGraphExecUpdate", 12000, 0, "cuGraphExecUpdate_v2"},
    {"cuStreamGetCaptureInfo", 10010, 0, "cuStreamGetCaptureInfo"},
    {"cuStreamGetCaptureInfo", 11030, 0, "cuStreamGetCaptureInfo_v2"},
    {"cuStreamGetCaptureInfo", 12030, 0, "cuStreamGetCaptureInfo_v3"},
    {"cuStreamGetCaptureInfo", 10010, 2, "cuStreamGetCaptureInfo_ptsz"},
    {"cuStreamGetCaptureInfo", 11030, 2, "cuStreamGetCaptureInfo_v2_ptsz"},
    {"cuStreamGetCaptureInfo", 13000, 2, "cuStreamGetCaptureInfo_v3_ptsz"},
    {"cuStreamBeginCapture", 10000, 0, "cuStreamBeginCapture"},
    {"cuStreamBeginCapture", 10000, 2, "cuStreamBeginCapture_ptsz"},
    {"cuStreamBeginCapture", 10010, 0, "cuStreamBeginCapture_v2"},
    {"cuStreamBeginCapture", 10010, 2, "cuStreamBeginCapture_v2_ptsz"},
    {"cuLaunchKernel", 4000, 0, "cuLaunchKernel"},
    {"cuLaunchKernel", 4000, 2, "cuLaunchKernel"}, /* no _ptsz flavour before 7.0 */
    {"cuLaunchKernel", 7000, 1, "cuLaunchKernel"}, /* legacy stream */
    {"cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz"},
    {"cuLaunchKernel", 13000, 3, "cuLaunchKernel_ptsz"},
    {"cuLaunchKernelEx", 11060, 2, "cuLaunchKernelEx_ptsz"},
    {"cuLaunchCooperativeKernel", 9000, 2, "cuLaunchCooperativeKernel_ptsz"},
    {"cuGraphLaunch", 10000, 0, "cuGraphLaunch"},
    {"cuGraphLaunch", 10000, 2, "cuGraphLaunch_ptsz"},
    {"cuGraphInstantiateWithParams", 12000, 2, "cuGraphInstantiateWithParams_ptsz"},
    {"cuGraphAddKernelNode", 10000, 0, "cuGraphAddKernelNode"},
    {"cuGraphAddKernelNode", 12000, 0, "cuGraphAddKernelNode_v2"},
    {"cuGraphKernelNodeGetParams", 10000, 0, "cuGraphKernelNodeGetParams"},
    {"cuGraphKernelNodeGetParams", 12000, 0, "cuGraphKernelNodeGetParams_v2"},
    {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
    {"cuStreamDestroy", 4000, 0, "cuStreamDestroy_v2"},
    {"cuStreamSynchronize", 7000, 2, "cuStreamSynchronize_ptsz"},
    {"cuCtxSynchronize", 12000, 0, "cuCtxSynchronize"},
    {"cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2"},
    {"cuFuncGetName", 12030, 0, "cuFuncGetName"},
    {"cuKernelGetName", 12030, 0, "cuKernelGetName"},
    {"cuLibraryGetKernel", 12000, 0, "cuLibraryGetKernel"},
    {"cuInit", 2000, 2, "cuInit"},
};

static const struct {
    const char *symbol;
    int version, flags;
} reference[] = {
#include "selftest_reference.inc"
};

int in_reference(const char *symbol, int version, int flags)
{
    for (size_t i = 0; i < sizeof(reference) / sizeof(reference[0]); i++)
        if (reference[i].version == version && reference[i].flags == flags &&
            !strcmp(reference[i].symbol, symbol))
            return 1;
    return 0;
}

void test_procaddr(void)
{
    gpa2_t gpa2 = (gpa2_t)drv("cuGetProcAddress_v2");
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    unsigned long long before = count("cuGetProcAddress_requests");

    CHECK_RC(gpa2("", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "empty symbol: %p %d", p, st);
    p = (void *)1;
    CHECK_RC(gpa2("cuNoSuchFunction", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "unknown: %p %d", p, st);
    CHECK_RC(gpa2(NULL, &p, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);
    p = (void *)1;
    CHECK_RC(gpa2("cuGraphInstantiate", &p, 9020, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "too old: %p %d", p, st);
    CHECK_RC(gpa2("cuFuncGetName", &p, 12020, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "cuFuncGetName@12020: %d", st);

    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
        const struct expect *e = &expected[i];
        p = NULL;
        CUresult r = gpa2(e->symbol, &p, e->version, (cuuint64_t)e->flags, &st);
        CHECK(r == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS && p == drv(e->export),
              "%s %d %d: rc %d, got %p, want %s", e->symbol, e->version, e->flags, r, p, e->export);
    }

    /* The 4-argument form (v1) resolves the same way. */
    CUresult (*gpa1)(const char *, void **, int, cuuint64_t) = drv("cuGetProcAddress");
    CHECK_RC(gpa1("cuGraphInstantiate", &p, 11000, 0), CUDA_SUCCESS);
    CHECK(p == drv("cuGraphInstantiate_v2"), "v1 resolver");
    CHECK_RC(gpa1("", &p, 11000, 0), CUDA_ERROR_NOT_FOUND);

    /* Unimplemented entry points resolve to a stub that says so. */
    CUresult (*stub)(void) = NULL;
    CHECK_RC(gpa2("cuEventCreate", (void **)&stub, 2000, 0, &st), CUDA_SUCCESS);
    CHECK(stub != NULL && stub() == CUDA_ERROR_NOT_SUPPORTED, "stub");

    /* Every request of the real CUDA 13.0 runtime resolves at its listed version and flags. */
    int missing = 0;
    for (size_t i = 0; i < sizeof(reference) / sizeof(reference[0]); i++) {
        if (reference[i].symbol[0] == '\0') continue;
        p = NULL;
        if (gpa2(reference[i].symbol, &p, reference[i].version, (cuuint64_t)reference[i].flags,
                 &st) != CUDA_SUCCESS ||
            p == NULL) {
            missing++;
            printf("  unresolved: %s %d %d\n", reference[i].symbol, reference[i].version,
                   reference[i].flags);
        }
    }
    CHECK(missing == 0, "%d reference requests unresolved", missing);
    CHECK(count("cuGetProcAddress_requests") > before, "request counter did not move");
}

/* ---- modules, names, launches ------------------------------------------------------------------
 */

void test_modules(void)
{
    CUmodule mod;
    CUlibrary lib;
    CUfunction f, fx;
    const char *name = NULL;
    CHECK_RC(DRV(cuModuleLoadData)(&mod, "FAKEIMAGE\n_Z1av\n_Z1bv\n"), CUDA_ERROR_NOT_INITIALIZED);
    CHECK_RC(DRV(cuInit)(0), CUDA_SUCCESS);
    int v = 0;
    CHECK_RC(DRV(cuDriverGetVersion)(&v), CUDA_SUCCESS);
    CHECK(v == 13000, "driver version %d", v);
    CHECK_RC(DRV(cuModuleLoadData)(&mod, "not an image"), CUDA_ERROR_INVALID_IMAGE);
    CHECK_RC(DRV(cuModuleLoadData)(&mod, "FAKEIMAGE\n_Z1bv\n_Z1av"), CUDA_SUCCESS);
    CHECK_RC(DRV(cuModuleGetFunction)(&st_fa, mod, "_Z1av"), CUDA_SUCCESS);
    CHECK_RC(DRV(cuModuleGetFunction)(&st_fb, mod, "_Z1bv"), CUDA_SUCCESS);
    CHECK_RC(DRV(cuModuleGetFunction)(&f, mod, "_Z1cv"), CUDA_ERROR_NOT_FOUND);
    CHECK_RC(DRV(cuModuleGetFunction)(&f, mod, "_Z1av"), CUDA_SUCCESS);
    CHECK(f == st_fa && st_fa != st_fb, "function handles");
    CHECK_RC(DRV(cuFuncGetName)(&name, st_fb), CUDA_SUCCESS);
    CHECK(name != NULL && strcmp(name, "_Z1bv") == 0, "name %s", name);

    CHECK_RC(DRV(cuLibraryLoadData)(&lib, "FAKEIMAGE\n_Z1xv\n", NULL, NULL, 0, NULL, NULL, 0),
             CUDA_SUCCESS);
    CHECK_RC(DRV(cuLibraryGetKernel)(&st_kx, lib, "_Z1xv"), CUDA_SUCCESS);
    CHECK_RC(DRV(cuLibraryGetKernel)(&st_kx, lib, "nope"), CUDA_ERROR_NOT_FOUND);
    CHECK_RC(DRV(cuLibraryGetKernel)(&st_kx, lib, "_Z1xv"), CUDA_SUCCESS);
    CHECK_RC(DRV(cuKernelGetFunction)(&fx, st_kx), CUDA_SUCCESS);
    CHECK(fx != NULL && (void *)fx != (void *)st_kx, "kernel and its function are distinct");
    name = NULL;
    CHECK_RC(DRV(cuKernelGetName)(&name, st_kx), CUDA_SUCCESS);
    CHECK(name && !strcmp(name, "_Z1xv"), "kernel name");
    name = NULL;
    CHECK_RC(DRV(cuFuncGetName)(&name, (CUfunction)st_kx), CUDA_SUCCESS); /* either handle */
    CHECK(name && !strcmp(name, "_Z1xv"), "kernel via cuFuncGetName");
    CHECK_RC(DRV(cuKernelGetName)(&name, (CUkernel)fx), CUDA_SUCCESS);
    CHECK_RC(DRV(cuFuncGetName)(&name, (CUfunction)&v), CUDA_ERROR_INVALID_HANDLE);

    /* fakecuda_make_function must stay cheap for scenario programs with many kernels. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char buf[64];
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        snprintf(buf, sizeof(buf), "_Z8kernel%dPf", i);
        bad += DRV(fakecuda_make_function)(buf, &f) != 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK(bad == 0 && secs < 2.0, "100000 functions: %d failed, %.2fs", bad, secs);
    CHECK_RC(DRV(cuFuncGetName)(&name, f), CUDA_SUCCESS);
    CHECK(!strcmp(name, "_Z8kernel99999Pf"), "made function name %s", name);
}

void test_launches(void)
{
    CUstream s;
    CHECK_RC(DRV(cuStreamCreate)(&s, 0), CUDA_SUCCESS);
    unsigned long long k = count("cuLaunchKernel"), kp = count("cuLaunchKernel_ptsz");
    unsigned long long ex = count("cuLaunchKernelEx"), co = count("cuLaunchCooperativeKernel_ptsz");
    CHECK_RC(DRV(cuLaunchKernel)(st_fa, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), CUDA_SUCCESS);
    CHECK_RC(DRV(cuLaunchKernel)((CUfunction)st_kx, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL),
             CUDA_SUCCESS);
    CHECK_RC(DRV(cuLaunchKernel_ptsz)(st_fb, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    CUlaunchConfig cfg = {1, 1, 1, 64, 1, 1, 0, s, NULL, 0};
    CHECK_RC(DRV(cuLaunchKernelEx)(&cfg, st_fa, NULL, NULL), CUDA_SUCCESS);
    CHECK_RC(DRV(cuLaunchCooperativeKernel_ptsz)(st_fa, 1, 1, 1, 1, 1, 1, 0, s, NULL),
             CUDA_SUCCESS);
    CHECK(count("cuLaunchKernel") == k + 2 && count("cuLaunchKernel_ptsz") == kp + 1 &&
              count("cuLaunchKernelEx") == ex + 1 &&
              count("cuLaunchCooperativeKernel_ptsz") == co + 1,
          "per-variant counters");
    CHECK_RC(DRV(cuLaunchKernel)(NULL, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
             CUDA_ERROR_INVALID_HANDLE);
    CHECK_RC(DRV(cuLaunchKernel)((CUfunction)&cfg, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
             CUDA_ERROR_INVALID_HANDLE);
    CHECK_RC(DRV(cuLaunchKernel)(st_fa, 0, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(DRV(cuLaunchKernel)(st_fa, 1, 1, 1, 1, 0, 1, 0, s, NULL, NULL),
             CUDA_ERROR_INVALID_VALUE);
    CHECK_RC(DRV(cuLaunchKernel)(st_fa, 1, 1, 1, 1, 1, 1, 0, (CUstream)&cfg, NULL, NULL),
             CUDA_ERROR_INVALID_HANDLE);
    CHECK(count("cuLaunchKernel") == k + 2, "failed launches counted");
    CHECK(count("no-such-counter") == 0, "unknown counter");
    CHECK_RC(DRV(cuStreamDestroy_v2)(s), CUDA_SUCCESS);
}
