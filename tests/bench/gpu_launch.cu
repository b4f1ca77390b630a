/* Real-GPU launch-loop benchmark (tests/bench/gpu-bench builds and runs it; it needs a GPU).
 * An empty kernel is launched many times and the host-side time per launch is measured, the
 * number nvtxcorr adds to. Launches go out in chunks small enough never to fill the launch
 * queue (so a launch never waits for the GPU), and the synchronisation between chunks is not
 * timed.
 *
 *   gpu_launch driver|runtime [-hand] [-n LAUNCHES] [-b BATCHES] [-c CHUNK]
 *     driver   cuLaunchKernel on the kernel's CUfunction (cudaGetFuncBySymbol)
 *     runtime  empty_kernel<<<1, 32, 0, stream>>>() (CUDA 13: __cudaLaunchKernel)
 *     -hand    nvtxDomainRangePushEx (registered string) / nvtxDomainRangePop around each
 *              launch: the hand-instrumented reference
 *
 * Prints "batch <ns per launch>" per batch and "launches <n>", like the fake-driver
 * benchmark programs. Build: nvcc -O2 -cudart shared -lcuda gpu_launch.cu */
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__global__ void empty_kernel(void) {}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void check_rt(const char *what, cudaError_t e)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "gpu_launch: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "driver") && strcmp(argv[1], "runtime"))) {
        fprintf(stderr, "usage: %s driver|runtime [-hand] [-n N] [-b B] [-c CHUNK]\n", argv[0]);
        return 2;
    }
    int driver = !strcmp(argv[1], "driver"), hand = 0;
    long n = 200000, batches = 5, chunk = 256;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-hand"))
            hand = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "-n"))
            n = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-b"))
            batches = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-c"))
            chunk = atol(argv[++i]);
    }
    if (n < chunk || chunk < 1 || batches < 1)
        return 2;

    cudaStream_t stream;
    cudaFunction_t fn;
    check_rt("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    check_rt("cudaGetFuncBySymbol", cudaGetFuncBySymbol(&fn, (const void *)empty_kernel));
    CUfunction f = (CUfunction)fn;

    nvtxDomainHandle_t domain = NULL;
    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof attr);
    if (hand) {
        domain = nvtxDomainCreateA("bench");
        attr.version = NVTX_VERSION;
        attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        attr.message.registered = nvtxDomainRegisterStringA(domain, "empty_kernel");
    }

    long launches = 0, errors = 0;
    /* Warm-up: one chunk, untimed (initialisation, first launch, labels). */
    for (long b = -1; b < batches; b++) {
        long chunks = b < 0 ? 1 : n / chunk;
        double t = 0;
        for (long c = 0; c < chunks; c++) {
            double t0 = now_ns();
            for (long i = 0; i < chunk; i++) {
                if (hand)
                    nvtxDomainRangePushEx(domain, &attr);
                if (driver)
                    errors += cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)stream, NULL,
                                             NULL) != CUDA_SUCCESS;
                else
                    empty_kernel<<<1, 32, 0, stream>>>();
                if (hand)
                    nvtxDomainRangePop(domain);
            }
            t += now_ns() - t0;
            launches += chunk;
            check_rt("cudaStreamSynchronize", cudaStreamSynchronize(stream));
        }
        if (b >= 0)
            printf("batch %.1f\n", t / (double)(chunks * chunk));
    }
    check_rt("launches", cudaGetLastError());
    printf("launches %ld\nerrors %ld\n", launches, errors);
    return errors != 0;
}
