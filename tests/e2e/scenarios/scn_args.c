/* Every launch entry point nvtxcorr wraps, driver and runtime, called by its direct symbol with
 * arguments that differ from call to call. For each call the program prints "args ..." with
 * what it passed, in the line the fake driver writes to FAKECUDA_ARGS with what it received
 * (fake_cuda_launch.c), and "rc <entry> <code>". The runtime entry points reach the driver
 * through the fake libcudart, which passes grid, block, shared memory, stream and arguments on
 * unchanged. Each entry point is called three times per handle: the first launch of a handle
 * takes nvtxcorr's slow path, the later ones its fast path (the x86-64 entry stub's, which
 * saves and copies the arguments itself: hook_bodies.h). e2e.launch-arguments-arrive-intact
 * compares the two lists. */
#define __CUDA_API_VERSION_INTERNAL 1 /* declare every ABI symbol (cuLaunchKernel_ptsz, ...) */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "cudart_abi.h" /* what nvcc-generated host code calls */
#include "scn_common.h"

/* The runtime's per-thread-stream ABI names, which cuda_runtime_api.h declares only under
 * __CUDART_API_PER_THREAD_DEFAULT_STREAM. */
cudaError_t cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *, void **);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *, dim3, dim3, void **, size_t,
                                             cudaStream_t);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t, cudaStream_t);

/* The layout of __fatBinC_Wrapper_t (fatbinary_section.h); the fake reads no device code. */
static const struct {
    int magic, version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} fatbin = {0x466243B1, 1, NULL, NULL};

static char stub_a[64], stub_b[64]; /* host stubs: distinct addresses */
static int arg0, arg1;
static void *params_a[] = {&arg0, &arg1}, *params_b[] = {&arg1, &arg0};
static void *extra_a[] = {NULL};

/* The "args" line of a kernel launch about to be made (the fake's format). */
static void sent(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                 unsigned shmem, void *stream, void **params, void **extra)
{
    printf("args grid=%u,%u,%u block=%u,%u,%u shmem=%u stream=%p params=%p extra=%p\n", gx, gy, gz,
           bx, by, bz, shmem, stream, (void *)params, (void *)extra);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUstream stream = scn_context();
    CUfunction add1, flash, triton;
    scn_load_kernels(&add1, &flash, &triton);
    void **fb = __cudaRegisterFatBinary((void *)&fatbin);
    __cudaRegisterFunction(fb, stub_a, (char *)"_Z6kern_av", "_Z6kern_av", -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFunction(fb, stub_b, (char *)"_Z6kern_bv", "_Z6kern_bv", -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFatBinaryEnd(fb);
    cudaKernel_t kern_a = NULL;
    CHECK("__cudaGetKernel", (CUresult)__cudaGetKernel(&kern_a, stub_a));
    CUgraphExec exec;
    CHECK("instantiate", cuGraphInstantiateWithFlags(&exec, scn_graph_of(add1), 0));

    for (unsigned i = 0; i < 3; i++) {
        /* Every value differs by call and by position: a register or stack word out of place
         * shows. Block sizes stay within 1,024 threads; params and extra never both set. */
        unsigned gx = 2 + i, gy = 3 + i, gz = 4 + i, bx = 5 + i, by = 6, bz = 7 + i;
        unsigned shmem = 100 + i;
        void **params = i & 1 ? params_b : params_a, **extra = i == 2 ? extra_a : NULL;
        if (extra) params = NULL;
        CUstream s = i == 1 ? NULL : stream;

        sent(gx, gy, gz, bx, by, bz, shmem, s, params, extra);
        CHECK("cuLaunchKernel",
              cuLaunchKernel(add1, gx, gy, gz, bx, by, bz, shmem, s, params, extra));
        sent(gz, gx, gy, bz, bx, by, shmem + 1, s, params, extra);
        CHECK("cuLaunchKernel_ptsz",
              cuLaunchKernel_ptsz(flash, gz, gx, gy, bz, bx, by, shmem + 1, s, params, extra));

        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = gy, cfg.gridDimY = gz, cfg.gridDimZ = gx;
        cfg.blockDimX = by, cfg.blockDimY = bz, cfg.blockDimZ = bx;
        cfg.sharedMemBytes = shmem + 2, cfg.hStream = s;
        sent(gy, gz, gx, by, bz, bx, shmem + 2, s, params, extra);
        CHECK("cuLaunchKernelEx", cuLaunchKernelEx(&cfg, triton, params, extra));
        sent(gy, gz, gx, by, bz, bx, shmem + 2, s, params, extra);
        CHECK("cuLaunchKernelEx_ptsz", cuLaunchKernelEx_ptsz(&cfg, add1, params, extra));

        void **coop = params ? params : params_b;
        sent(gx, gz, gy, bx, bz, by, shmem + 3, s, coop, NULL);
        CHECK("cuLaunchCooperativeKernel",
              cuLaunchCooperativeKernel(flash, gx, gz, gy, bx, bz, by, shmem + 3, s, coop));
        sent(gz, gy, gx, bz, by, bx, shmem + 4, s, coop, NULL);
        CHECK("cuLaunchCooperativeKernel_ptsz",
              cuLaunchCooperativeKernel_ptsz(triton, gz, gy, gx, bz, by, bx, shmem + 4, s, coop));

        printf("args exec=%p stream=%p\n", (void *)exec, (void *)s);
        CHECK("cuGraphLaunch", cuGraphLaunch(exec, s));
        printf("args exec=%p stream=%p\n", (void *)exec, (void *)stream);
        CHECK("cuGraphLaunch_ptsz", cuGraphLaunch_ptsz(exec, stream));

        /* The runtime's _ptsz entry points pass the legacy stream on as the per-thread one:
         * its calls name a stream. */
        dim3 grid = {gx, gy, gz}, block = {bx, by, bz};
        cudaStream_t rs = (cudaStream_t)stream;
        s = stream;
        /* The host-stub entry points, then <<<>>>'s (a kernel handle): the same grid and
         * block, the shared memory apart. */
        typedef cudaError_t (*host_launch_fn)(const void *, dim3, dim3, void **, size_t,
                                              cudaStream_t);
        const struct {
            const char *name;
            host_launch_fn fn;
            const void *func;
        } host[] = {
            {"cudaLaunchKernel", cudaLaunchKernel, stub_a},
            {"cudaLaunchKernel_ptsz", cudaLaunchKernel_ptsz, stub_b},
            {"cudaLaunchCooperativeKernel", cudaLaunchCooperativeKernel, stub_a},
            {"cudaLaunchCooperativeKernel_ptsz", cudaLaunchCooperativeKernel_ptsz, stub_b},
        };
        unsigned m = shmem + 5;
        for (size_t k = 0; k < sizeof host / sizeof host[0]; k++, m++) {
            sent(gx, gy, gz, bx, by, bz, m, s, coop, NULL);
            CHECK(host[k].name, (CUresult)host[k].fn(host[k].func, grid, block, coop, m, rs));
        }
        sent(gx, gy, gz, bx, by, bz, m, s, coop, NULL);
        CHECK("__cudaLaunchKernel", (CUresult)__cudaLaunchKernel(kern_a, grid, block, coop, m, rs));
        m++;
        sent(gx, gy, gz, bx, by, bz, m, s, coop, NULL);
        CHECK("__cudaLaunchKernel_ptsz",
              (CUresult)__cudaLaunchKernel_ptsz(kern_a, grid, block, coop, m, rs));

        cudaLaunchConfig_t rcfg;
        memset(&rcfg, 0, sizeof rcfg);
        rcfg.gridDim = (dim3){gz, gx, gy}, rcfg.blockDim = (dim3){bz, bx, by};
        rcfg.dynamicSmemBytes = shmem + 11, rcfg.stream = rs;
        sent(gz, gx, gy, bz, bx, by, shmem + 11, s, coop, NULL);
        CHECK("cudaLaunchKernelExC", (CUresult)cudaLaunchKernelExC(&rcfg, stub_a, coop));
        sent(gz, gx, gy, bz, bx, by, shmem + 11, s, coop, NULL);
        CHECK("cudaLaunchKernelExC_ptsz", (CUresult)cudaLaunchKernelExC_ptsz(&rcfg, stub_b, coop));

        printf("args exec=%p stream=%p\n", (void *)exec, (void *)s);
        CHECK("cudaGraphLaunch", (CUresult)cudaGraphLaunch((cudaGraphExec_t)exec, rs));
        printf("args exec=%p stream=%p\n", (void *)exec, (void *)stream);
        CHECK("cudaGraphLaunch_ptsz",
              (CUresult)cudaGraphLaunch_ptsz((cudaGraphExec_t)exec, (cudaStream_t)stream));
    }
    return 0;
}
