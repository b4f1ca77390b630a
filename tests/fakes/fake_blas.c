/*
 * Fake cuBLAS (libfake_blas.so): a library that carries its own CUDA runtime, as cuBLAS and
 * cublasLt 13 do. The fake runtime is linked in statically (libfake_cudart_static.a, nothing
 * exported), so a preloaded profiler cannot interpose its entry points; it reaches the driver
 * the way every runtime does (dlopen of libcuda.so.1, cuGetProcAddress), and it reports its
 * calls to CUPTI as runtime calls (fakecuda_api_frame). Its two kernels are named after the
 * cuBLAS kernels the first real-GPU run found uncorrelated.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "cudart_abi.h"
#include "fake_blas.h"

#define BLAS_API __attribute__((visibility("default")))

static void **fatbin;
static const int fatbin_stand_in = 0;
static char gemm_name[] = "gemmSN_NN_kernel";
static char reduce_name[] = "splitKreduce_kernel";

/* The host stubs its runtime knows the kernels by. */
__attribute__((noinline, used)) static void gemm_stub(void *arg)
{
    (void)arg;
}
__attribute__((noinline, used)) static void reduce_stub(void *arg)
{
    __asm__ volatile("" ::"r"(arg)); /* not folded into gemm_stub */
}

static void unregister(void)
{
    __cudaUnregisterFatBinary(fatbin);
}

__attribute__((constructor)) static void register_all(void)
{
    fatbin = __cudaRegisterFatBinary((void *)&fatbin_stand_in);
    __cudaRegisterFunction(fatbin, (const char *)gemm_stub, gemm_name, gemm_name, -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFunction(fatbin, (const char *)reduce_stub, reduce_name, reduce_name, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(fatbin);
    atexit(unregister);
}

/* One "GEMM" on stream: the main kernel by cudaLaunchKernel, the split-K reduction by
 * cudaLaunchKernelExC, as cuBLAS launches; after a few API calls that are not launches, as
 * cuBLAS makes (its stream's capture state, the current device). Returns the first error. */
BLAS_API int fakeblas_gemm(void *stream)
{
    enum cudaStreamCaptureStatus st;
    int device = 0;
    cudaError_t e = cudaStreamIsCapturing((cudaStream_t)stream, &st);
    if (e == cudaSuccess) e = cudaGetDevice(&device);
    dim3 grid = {4, 2, 1}, block = {128, 1, 1};
    void *args[] = {NULL};
    if (e == cudaSuccess)
        e = cudaLaunchKernel((const void *)gemm_stub, grid, block, args, 0, stream);
    cudaLaunchConfig_t config = {0};
    config.gridDim = (dim3){2, 1, 1};
    config.blockDim = (dim3){64, 1, 1};
    config.stream = (cudaStream_t)stream;
    if (e == cudaSuccess) e = cudaLaunchKernelExC(&config, (const void *)reduce_stub, args);
    return (int)e;
}

/* The same GEMM captured by the library's own runtime into a graph, which that runtime then
 * launches `replays` times (cudaGraphLaunch inside the library). */
BLAS_API int fakeblas_gemm_graph(void *stream, int replays)
{
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t e = cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) return (int)e;
    int g = fakeblas_gemm(stream);
    e = cudaStreamEndCapture((cudaStream_t)stream, &graph);
    if (g != 0) return g;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    for (int i = 0; e == cudaSuccess && i < replays; i++)
        e = cudaGraphLaunch(exec, (cudaStream_t)stream);
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    return (int)e;
}
