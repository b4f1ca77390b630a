/* Stand-in for tests/gpu/cublas_gemm.cu on the fakes (the stub nvcc "builds" it): what that
 * program does as nvtxcorr and CUPTI see it. Each cuBLAS call is the fake cuBLAS's GEMM
 * (libfake_blas.so: a runtime of its own built in, reaching the driver by cuGetProcAddress,
 * reporting runtime calls to CUPTI; gemmSN_NN_kernel then splitKreduce_kernel), three GEMMs a
 * step as cublas_gemm.cu makes (its square and its two small-N shapes); the phases are
 * default-domain NVTX ranges; then a step captured by the program and replayed twice.
 * Modes as cublas_gemm.cu's: eager, captured, or both (no argument). Same output lines. */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>

#include "fake_blas.h"

static int step(CUstream s)
{
    int failed = 0;
    for (int i = 0; i < 3; i++)
        failed |= fakeblas_gemm(s) != 0;
    return failed;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "both";
    int eager = strcmp(mode, "captured") != 0, captured = strcmp(mode, "eager") != 0;
    CUstream s;
    CUgraph g;
    CUgraphExec e;
    int failed = cuInit(0) != CUDA_SUCCESS;
    failed |= cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != 0;
    if (failed) return 1;
    if (eager) {
        nvtxRangePushA("check:eager");
        for (int i = 0; i < 3; i++)
            failed |= step(s);
        failed |= cuStreamSynchronize(s) != 0;
        nvtxRangePop();
    }
    if (captured) {
        nvtxRangePushA("check:capture");
        failed |= cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL) != 0;
        failed |= step(s);
        failed |= cuStreamEndCapture(s, &g) != 0;
        nvtxRangePop();
        failed |= cuGraphInstantiateWithFlags(&e, g, 0) != 0;
        nvtxRangePushA("check:replay");
        for (int i = 0; i < 2; i++)
            failed |= cuGraphLaunch(e, s) != 0;
        failed |= cuStreamSynchronize(s) != 0;
        nvtxRangePop();
    }
    printf("cublas gemm: %s, C = %d A B %s\n", failed ? "errors" : "no errors",
           3 * eager + 2 * captured, "ok");
    return failed;
}
