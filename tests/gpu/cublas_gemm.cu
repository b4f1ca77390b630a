// GPU check: cuBLAS SGEMMs (cuBLAS carries its own CUDA runtime and reaches the driver through
// cuGetProcAddress) and a captured-graph replay of them. Each step is three GEMMs: a square
// one and the two small-N shapes of tests/gpu/torch_gpu_time.py's MLP (8 rows through 1024 x
// 4096 and 4096 x 1024), for which cuBLAS picks its small-N and split-K kernels
// (gemmSN_NN_kernel, splitKreduce_kernel on an H200). The phases are NVTX ranges of the default
// domain (check:eager, check:capture, check:replay) so that scripts/gpu-check can count
// nvtxcorr's ranges inside each; every call's return code is checked, and C is compared with
// the CPU's.
//   cublas_gemm [eager|captured]   3 eager steps, or one captured step replayed twice; both
//                                  without an argument
#include <cmath>
#include <cstdio>
#include <cstring>
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

// C (m x n) += A (m x k) B (k x n), column-major.
struct Gemm {
    int m, n, k;
    float *a, *b, *c;
    std::vector<float> ha, hb;

    void setup()
    {
        ha.resize((size_t)m * k);
        hb.resize((size_t)k * n);
        for (size_t i = 0; i < ha.size(); i++) ha[i] = (float)(i % 7) / 7.0f;
        for (size_t i = 0; i < hb.size(); i++) hb[i] = (float)(i % 5) / 5.0f;
        CHECK("cudaMalloc", cudaMalloc(&a, ha.size() * sizeof(float)), cudaSuccess);
        CHECK("cudaMalloc", cudaMalloc(&b, hb.size() * sizeof(float)), cudaSuccess);
        CHECK("cudaMalloc", cudaMalloc(&c, (size_t)m * n * sizeof(float)), cudaSuccess);
        if (failed) return;
        CHECK("copy A", cudaMemcpy(a, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
        CHECK("copy B", cudaMemcpy(b, hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
        CHECK("clear C", cudaMemset(c, 0, (size_t)m * n * sizeof(float)), cudaSuccess);
    }

    void run(cublasHandle_t h, const char *what)
    {
        const float alpha = 1.0f, beta = 1.0f; // C += A B: each GEMM that runs shows
        CHECK(what, cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m, b, k, &beta, c,
                                m),
              CUBLAS_STATUS_SUCCESS);
    }

    // The largest relative error of C against times * A B, on a sample of entries.
    double error(int times)
    {
        std::vector<float> hc((size_t)m * n);
        CHECK("copy C", cudaMemcpy(hc.data(), c, hc.size() * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
        double worst = 0;
        for (size_t x = 0; x < hc.size(); x += 997) {
            size_t i = x % m, j = x / m;
            double ref = 0;
            for (int l = 0; l < k; l++) ref += (double)ha[i + (size_t)l * m] * hb[l + j * k];
            worst = fmax(worst, fabs(hc[x] - times * ref) / fmax(1.0, fabs(times * ref)));
        }
        return worst;
    }
};

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "both";
    bool eager = strcmp(mode, "captured") != 0, captured = strcmp(mode, "eager") != 0;
    Gemm gemms[] = {{256, 256, 256}, {4096, 8, 1024}, {1024, 8, 4096}};
    for (Gemm &g : gemms) g.setup();
    if (failed) return 1;
    cublasHandle_t h;
    CHECK("cublasCreate", cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    if (failed) return 1;
    cudaStream_t s;
    CHECK("cudaStreamCreate", cudaStreamCreate(&s), cudaSuccess);
    CHECK("cublasSetStream", cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);
    if (eager) {
        nvtxRangePushA("check:eager");
        for (int i = 0; i < 3; i++)
            for (Gemm &g : gemms) g.run(h, "cublasSgemm");
        CHECK("sync", cudaStreamSynchronize(s), cudaSuccess);
        nvtxRangePop();
    }
    if (captured) {
        cudaGraph_t g;
        cudaGraphExec_t e;
        nvtxRangePushA("check:capture");
        CHECK("begin capture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
        for (Gemm &x : gemms) x.run(h, "cublasSgemm (captured)");
        CHECK("end capture", cudaStreamEndCapture(s, &g), cudaSuccess);
        nvtxRangePop();
        if (failed) return 1;
        CHECK("instantiate", cudaGraphInstantiate(&e, g, 0), cudaSuccess);
        nvtxRangePushA("check:replay");
        for (int i = 0; i < 2; i++)
            CHECK("cudaGraphLaunch", cudaGraphLaunch(e, s), cudaSuccess);
        CHECK("sync", cudaStreamSynchronize(s), cudaSuccess);
        nvtxRangePop();
    }
    // 3 eager steps and 2 replays: C = 5 A B. Check a sample of entries of each.
    int times = 3 * eager + 2 * captured;
    double worst = 0;
    for (Gemm &g : gemms) worst = fmax(worst, g.error(times));
    printf("cublas gemm: %s, C = %d A B %s\n", failed ? "errors" : "no errors", times,
           worst < 1e-3 ? "ok" : "WRONG");
    return failed || worst >= 1e-3;
}
