/* Stand-in for tests/e2e/scenarios/app.cu built with nvcc's default -cudart static, on the fakes
 * (the stub nvcc "builds" app_static from it): the real static cudart cannot run on the fake
 * driver, so the program carries the fake runtime built in (libfake_cudart_static.a, nothing
 * exported), which no preload can interpose and which reports its calls to CUPTI as runtime
 * calls, as the real one does. Its kernels are registered under the names nvcc gives app.cu's,
 * and its `launch` and `graph` modes make the same calls and print the same lines. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "cudart_abi.h"

static void **fatbin;
static const int fatbin_stand_in = 0;
static char add1_name[] = "_Z4add1Pii",
            flash_name[] = "_ZN5flash16flash_fwd_kernelILi128EEEvNS_16Flash_fwd_paramsE",
            triton_name[] = "triton_poi_fused_add_0";
#define STUB(name)                                                                                 \
    __attribute__((noinline, used)) static void name(void *arg)                                    \
    {                                                                                              \
        __asm__ volatile("" ::"r"(arg), "i"(__LINE__));                                            \
    }
STUB(add1)
STUB(flash_fwd_kernel)
STUB(triton_poi_fused_add_0)

/* As nvcc's host code registers a program's kernels with its runtime. */
__attribute__((constructor)) static void register_all(void)
{
    fatbin = __cudaRegisterFatBinary((void *)&fatbin_stand_in);
    __cudaRegisterFunction(fatbin, (const char *)add1, add1_name, add1_name, -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFunction(fatbin, (const char *)flash_fwd_kernel, flash_name, flash_name, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFunction(fatbin, (const char *)triton_poi_fused_add_0, triton_name, triton_name,
                           -1, NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(fatbin);
}

static int report(const char *what, cudaError_t e)
{
    printf("rc %s %d\n", what, (int)e);
    return e != cudaSuccess;
}

/* <<<>>> in CUDA 13: the kernel's handle from the host stub, then __cudaLaunchKernel; its error
 * is what cudaGetLastError says next. */
static void chevron(const void *stub, dim3 grid, dim3 block, cudaStream_t s)
{
    cudaKernel_t k;
    void *args[] = {NULL};
    if (__cudaGetKernel(&k, stub) == cudaSuccess) __cudaLaunchKernel(k, grid, block, args, 0, s);
}

static int launches(void)
{
    dim3 one = {1, 1, 1}, b16 = {16, 1, 1}, b32 = {32, 1, 1};
    void *args[] = {NULL};
    int failed = 0;
    chevron((const void *)add1, one, b16, 0);
    failed |= report("<<<add1>>>", cudaGetLastError());
    chevron((const void *)flash_fwd_kernel, one, b32, 0);
    failed |= report("<<<flash>>>", cudaGetLastError());
    chevron((const void *)triton_poi_fused_add_0, one, one, 0);
    failed |= report("<<<triton>>>", cudaGetLastError());
    failed |=
        report("cudaLaunchKernel", cudaLaunchKernel((const void *)add1, one, b16, args, 0, 0));
    cudaLaunchConfig_t cfg = {0};
    cfg.gridDim = one;
    cfg.blockDim = b16;
    failed |= report("cudaLaunchKernelExC", cudaLaunchKernelExC(&cfg, (const void *)add1, args));
    failed |= report("cudaLaunchCooperativeKernel",
                     cudaLaunchCooperativeKernel((const void *)add1, one, b16, args, 0, 0));
    return failed;
}

static int graph(void)
{
    dim3 one = {1, 1, 1}, b16 = {16, 1, 1};
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t e;
    int failed = 0;
    cudaStreamCreate(&s);
    failed |= report("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 4; i++)
        chevron((const void *)add1, one, b16, s);
    chevron((const void *)triton_poi_fused_add_0, one, one, s);
    failed |= report("end", cudaStreamEndCapture(s, &g));
    failed |= report("instantiate", cudaGraphInstantiate(&e, g, 0));
    for (int i = 0; i < 3; i++)
        failed |= report("cudaGraphLaunch", cudaGraphLaunch(e, s));
    failed |= report("sync", cudaStreamSynchronize(s));
    return failed;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "launch";
    void *d = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (report("cudaMalloc", cudaMalloc(&d, 1024))) return 1;
    if (!strcmp(mode, "launch")) return launches();
    if (!strcmp(mode, "graph")) return graph();
    return 2;
}
