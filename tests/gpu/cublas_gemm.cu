// GPU check: a cuBLAS SGEMM (cuBLAS reaches the driver through cuGetProcAddress) and a
// captured-graph replay of it.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

int main()
{
    const int n = 512;
    float *a, *b, *c, alpha = 1.0f, beta = 0.0f;
    cudaMalloc(&a, n * n * sizeof(float));
    cudaMalloc(&b, n * n * sizeof(float));
    cudaMalloc(&c, n * n * sizeof(float));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        printf("cublasCreate failed\n");
        return 1;
    }
    for (int i = 0; i < 3; i++)
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cublasSetStream(h, s);
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    for (int i = 0; i < 2; i++)
        cudaGraphLaunch(e, s);
    cudaError_t err = cudaDeviceSynchronize();
    printf("cublas gemm: %s\n", cudaGetErrorString(err));
    return err != cudaSuccess;
}
