// GPU check: cuBLAS SGEMMs (cuBLAS reaches the driver through cuGetProcAddress) and a
// captured-graph replay of one. The phases are NVTX ranges of the default domain
// (check:eager, check:capture, check:replay) so that scripts/gpu-check can count nvtxcorr's
// ranges inside each; every call's return code is checked, and C is compared with the CPU's.
#include <cmath>
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <vector>

static int failed;
#define CHECK(what, call, ok)                                                               \
    do {                                                                                    \
        auto rc_ = (call);                                                                  \
        if (rc_ != (ok)) {                                                                  \
            printf("cublas_gemm: %s: error %d\n", what, (int)rc_);                          \
            failed = 1;                                                                     \
        }                                                                                   \
    } while (0)

int main()
{
    const int n = 256;
    float *a, *b, *c, alpha = 1.0f, beta = 1.0f; // C += A B: each GEMM that runs shows
    std::vector<float> ha(n * n), hb(n * n), hc(n * n, 0.0f);
    for (int i = 0; i < n * n; i++) {
        ha[i] = (float)(i % 7) / 7.0f;
        hb[i] = (float)(i % 5) / 5.0f;
    }
    CHECK("cudaMalloc", cudaMalloc(&a, n * n * sizeof(float)), cudaSuccess);
    CHECK("cudaMalloc", cudaMalloc(&b, n * n * sizeof(float)), cudaSuccess);
    CHECK("cudaMalloc", cudaMalloc(&c, n * n * sizeof(float)), cudaSuccess);
    if (failed) return 1;
    CHECK("copy A", cudaMemcpy(a, ha.data(), n * n * sizeof(float), cudaMemcpyHostToDevice),
          cudaSuccess);
    CHECK("copy B", cudaMemcpy(b, hb.data(), n * n * sizeof(float), cudaMemcpyHostToDevice),
          cudaSuccess);
    CHECK("clear C", cudaMemset(c, 0, n * n * sizeof(float)), cudaSuccess);
    cublasHandle_t h;
    CHECK("cublasCreate", cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    if (failed) return 1;
    cudaStream_t s;
    CHECK("cudaStreamCreate", cudaStreamCreate(&s), cudaSuccess);
    CHECK("cublasSetStream", cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);
    nvtxRangePushA("check:eager");
    for (int i = 0; i < 3; i++)
        CHECK("cublasSgemm", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n,
                                         &beta, c, n),
              CUBLAS_STATUS_SUCCESS);
    CHECK("sync", cudaStreamSynchronize(s), cudaSuccess);
    nvtxRangePop();
    cudaGraph_t g;
    cudaGraphExec_t e;
    nvtxRangePushA("check:capture");
    CHECK("begin capture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK("cublasSgemm (captured)",
          cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n),
          CUBLAS_STATUS_SUCCESS);
    CHECK("end capture", cudaStreamEndCapture(s, &g), cudaSuccess);
    nvtxRangePop();
    if (failed) return 1;
    CHECK("instantiate", cudaGraphInstantiate(&e, g, 0), cudaSuccess);
    nvtxRangePushA("check:replay");
    for (int i = 0; i < 2; i++)
        CHECK("cudaGraphLaunch", cudaGraphLaunch(e, s), cudaSuccess);
    CHECK("sync", cudaStreamSynchronize(s), cudaSuccess);
    nvtxRangePop();
    CHECK("copy C", cudaMemcpy(hc.data(), c, n * n * sizeof(float), cudaMemcpyDeviceToHost),
          cudaSuccess);
    // 3 eager GEMMs and 2 replays: C = 5 A B (column-major). Check a few entries.
    double worst = 0;
    for (int k = 0; k < n * n; k += 997) {
        int i = k % n, j = k / n;
        double ref = 0;
        for (int l = 0; l < n; l++) ref += (double)ha[i + l * n] * hb[l + j * n];
        worst = fmax(worst, fabs(hc[k] - 5 * ref) / fmax(1.0, fabs(5 * ref)));
    }
    printf("cublas gemm: %s, C = 5 A B %s\n", failed ? "errors" : "no errors",
           worst < 1e-3 ? "ok" : "WRONG");
    return failed || worst >= 1e-3;
}
