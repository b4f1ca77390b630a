/* Stand-in for tests/gpu/cublas_gemm.cu on the fakes (the stub nvcc "builds" it): what that
 * program does as nvtxcorr sees it, with cuBLAS's habits: the kernel function comes from
 * cuGetProcAddress, each SGEMM is one cuLaunchKernel of an nvjet kernel, the phases are
 * default-domain NVTX ranges, then one captured SGEMM replayed twice. Same output lines. */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

int fakecuda_make_function(const char *mangled, CUfunction *out);

typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);

int main(void)
{
    launch_t launch = NULL;
    CUdriverProcAddressQueryResult q;
    CUfunction f;
    CUstream s;
    CUgraph g;
    CUgraphExec e;
    int failed = cuInit(0) != CUDA_SUCCESS;
    failed |= cuGetProcAddress_v2("cuLaunchKernel", (void **)&launch, 12000, 0, &q) != 0;
    failed |= fakecuda_make_function("nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT", &f) != 0;
    failed |= cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != 0;
    if (failed || !launch) return 1;
    nvtxRangePushA("check:eager");
    for (int i = 0; i < 3; i++)
        failed |= launch(f, 16, 16, 1, 128, 1, 1, 0, s, NULL, NULL) != 0;
    nvtxRangePop();
    nvtxRangePushA("check:capture");
    failed |= cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL) != 0;
    failed |= launch(f, 16, 16, 1, 128, 1, 1, 0, s, NULL, NULL) != 0;
    failed |= cuStreamEndCapture(s, &g) != 0;
    nvtxRangePop();
    failed |= cuGraphInstantiateWithFlags(&e, g, 0) != 0;
    nvtxRangePushA("check:replay");
    for (int i = 0; i < 2; i++)
        failed |= cuGraphLaunch(e, s) != 0;
    nvtxRangePop();
    failed |= cuStreamSynchronize(s) != 0;
    printf("cublas gemm: %s, C = 5 A B %s\n", failed ? "errors" : "no errors", "ok");
    return failed;
}
