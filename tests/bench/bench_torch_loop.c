/* A PyTorch-shaped op loop on the fakes, for profile mode's GPU time (torch_loop_bench.py,
 * docs/performance.md "GPU time in a PyTorch-shaped loop"). Each op makes the CUDA calls an
 * eager PyTorch op makes around its launch, most of them not launches: the current device
 * (cudaGetDevice), the stream's capture state (cudaStreamIsCapturing, the caching allocator),
 * the current context (cuCtxGetCurrent), the launch through the shared runtime
 * (cudaLaunchKernel), and the error check (cudaGetLastError, C10_CUDA_KERNEL_LAUNCH_CHECK).
 * Every fourth op is a GEMM through the fake cuBLAS instead (libfake_blas.so: its own
 * runtime, which LD_PRELOAD cannot see; two launches and two other calls).
 *
 *   bench_torch_loop OPS BATCHES
 * Prints "ns_per_op X" (the fastest batch) and "launches N". */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cudart_abi.h"
#include "fake_blas.h"

static void **fatbin;
static const int fatbin_stand_in = 0;
static char kernel_name[] = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
                            "11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";

__attribute__((noinline, used)) static void kernel_stub(void *arg)
{
    __asm__ volatile("" ::"r"(arg));
}

__attribute__((constructor)) static void register_all(void)
{
    fatbin = __cudaRegisterFatBinary((void *)&fatbin_stand_in);
    __cudaRegisterFunction(fatbin, (const char *)kernel_stub, kernel_name, kernel_name, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(fatbin);
}

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static long errors, launches;

static void op(cudaStream_t s, long i)
{
    int device;
    enum cudaStreamCaptureStatus st;
    CUcontext ctx;
    if (i % 4 == 3) { /* a GEMM */
        errors += fakeblas_gemm(s) != 0;
        launches += 2;
        return;
    }
    errors += cudaGetDevice(&device) != cudaSuccess;
    errors += cudaStreamIsCapturing(s, &st) != cudaSuccess;
    errors += cuCtxGetCurrent(&ctx) != CUDA_SUCCESS;
    void *args[] = {NULL};
    errors += cudaLaunchKernel((const void *)kernel_stub, (dim3){64, 1, 1}, (dim3){128, 1, 1}, args,
                               0, s) != cudaSuccess;
    errors += cudaGetLastError() != cudaSuccess;
    launches++;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000, batches = argc > 2 ? atol(argv[2]) : 5;
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess) return 1;
    for (long i = 0; i < n / 10 + 4; i++) /* warm: first launches, CUPTI's start */
        op(s, i);
    unsigned long long best = ~0ull;
    for (long b = 0; b < batches; b++) {
        unsigned long long t0 = now_ns();
        for (long i = 0; i < n; i++)
            op(s, i);
        unsigned long long t = now_ns() - t0;
        if (t < best) best = t;
    }
    cudaStreamSynchronize(s);
    printf("ns_per_op %.1f\nlaunches %ld\n", (double)best / (double)n, launches);
    return errors != 0;
}
