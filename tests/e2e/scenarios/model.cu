// A "framework" shared library that uses the shared cudart, as libtorch_cuda does. The
// scenario program dlopens it RTLD_LOCAL, so libcudart.so.13 sits in a local scope that
// dlsym(RTLD_NEXT) cannot see.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void model_gemm_kernel(float *x) { x[0] *= 2.0f; }

extern "C" int model_run(int steps)
{
    float *d = nullptr;
    if (cudaMalloc(&d, 64) != cudaSuccess)
        return -1;
    for (int i = 0; i < steps; i++)
        model_gemm_kernel<<<1, 32>>>(d);
    return (int)cudaGetLastError();
}
