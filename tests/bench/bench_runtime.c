/* Launch-loop benchmark for the runtime entry point cudaLaunchKernel, run against the fake
 * shared runtime (tests/fakes/libcudart.so.13), which reaches the fake driver through
 * cuGetProcAddress as the real one does. A plain C program linked with -lcudart only.
 *
 * There is no nvcc here, so the program registers its kernels the way nvcc-generated static
 * constructors do: __cudaRegisterFatBinary on a fat-binary wrapper, __cudaRegisterFunction
 * per kernel (host stub address -> mangled device name), __cudaRegisterFatBinaryEnd. The
 * loop then calls cudaLaunchKernel(stub, ...) as a pre-CUDA-13 <<<>>> stub does, so under
 * nvtxcorr a launch crosses two hooks (cudaLaunchKernel, then the runtime's cuLaunchKernel
 * pointer) and gets one range. -hand, -k and the output are as in bench_launch.c and
 * bench_common.h. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "bench_common.h"
#include "cudart_abi.h" /* what nvcc-generated host code calls (crt/host_runtime.h is C++ only) */

/* The layout of __fatBinC_Wrapper_t (fatbinary_section.h); the fake reads no device code. */
static const struct {
    int magic, version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} fatbin = {0x466243B1, 1, NULL, NULL};

enum { STUB_STRIDE = 64 }; /* host stubs are functions: distinct, aligned addresses */

static float arg_in, arg_out;
static int arg_n;

#define RUNTIME_CALL cudaLaunchKernel(h, (dim3){1, 1, 1}, (dim3){32, 1, 1}, args, 0, s)

static void runtime_plain(bench_worker_t *w, long n)
{
    void *const *hs = w->handles;
    cudaStream_t s = (cudaStream_t)w->stream;
    void *args[] = {&arg_in, &arg_out, &arg_n};
    long k = 0, nk = w->nhandles, errors = 0;
    for (long i = 0; i < n; i++) {
        const void *h = hs[k];
        if (++k == nk) k = 0;
        errors += RUNTIME_CALL != cudaSuccess;
    }
    w->errors += errors;
}

static void runtime_hand(bench_worker_t *w, long n)
{
    void *const *hs = w->handles;
    const nvtxEventAttributes_t *as = w->attrs;
    cudaStream_t s = (cudaStream_t)w->stream;
    void *args[] = {&arg_in, &arg_out, &arg_n};
    long k = 0, nk = w->nhandles, errors = 0;
    for (long i = 0; i < n; i++) {
        const void *h = hs[k];
        nvtxDomainRangePushEx(bench_domain, &as[k]);
        if (++k == nk) k = 0;
        errors += RUNTIME_CALL != cudaSuccess;
        nvtxDomainRangePop(bench_domain);
    }
    w->errors += errors;
}

static char primer_stub[STUB_STRIDE];

/* The process's first launch, never wrapped by the program. Its name is mangled, so that
 * loading the demangler (libstdc++) counts as initialisation. */
static int primer(bench_worker_t *w)
{
    void *args[] = {&arg_in, &arg_out, &arg_n};
    return cudaLaunchKernel(primer_stub, (dim3){1, 1, 1}, (dim3){32, 1, 1}, args, 0,
                            (cudaStream_t)w->stream) != cudaSuccess;
}

static const bench_entry_t entries[] = {
    {"runtime", runtime_plain, runtime_hand},
    {NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    bench_opts_t o;
    const bench_entry_t *e = bench_parse(argc, argv, entries, &o);
    long nk = o.kernels;
    char **names = calloc((size_t)nk, sizeof *names);
    void **handles = calloc((size_t)nk, sizeof *handles);
    char *stubs = calloc((size_t)nk, STUB_STRIDE);
    bench_worker_t *workers = calloc((size_t)o.threads, sizeof *workers);
    if (names == NULL || handles == NULL || stubs == NULL || workers == NULL) {
        perror("calloc");
        return 1;
    }
    void **fb = __cudaRegisterFatBinary((void *)&fatbin);
    __cudaRegisterFunction(fb, primer_stub, (char *)"_Z12bench_primerv", "_Z12bench_primerv", -1,
                           NULL, NULL, NULL, NULL, NULL);
    for (long i = 0; i < nk; i++) {
        char id[32];
        int len = snprintf(id, sizeof id, "kernel_%ld", i);
        if (asprintf(&names[i], "_Z%d%sPKfPfi", len, id) < 0) {
            perror("asprintf");
            return 1;
        }
        handles[i] = stubs + i * STUB_STRIDE;
        __cudaRegisterFunction(fb, handles[i], names[i], names[i], -1, NULL, NULL, NULL, NULL,
                               NULL);
    }
    __cudaRegisterFatBinaryEnd(fb);

    const nvtxEventAttributes_t *attrs = o.hand ? bench_hand_attrs(names, nk) : NULL;
    for (int t = 0; t < o.threads; t++) {
        cudaStream_t s;
        cudaError_t r = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        if (r != cudaSuccess) {
            fprintf(stderr, "bench_runtime: cudaStreamCreateWithFlags failed: %d\n", (int)r);
            return 1;
        }
        workers[t] =
            (bench_worker_t){.stream = s, .handles = handles, .attrs = attrs, .nhandles = nk};
    }
    bench_run(&o, e, workers, primer);

    /* The fake driver's counter, from the libcuda.so.1 the runtime loaded. */
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    unsigned long long (*count)(const char *) =
        drv ? (unsigned long long (*)(const char *))dlsym(drv, "fakecuda_count") : NULL;
    printf("driver %llu\n", count ? count("cuLaunchKernel") : 0ull);
    return 0;
}
