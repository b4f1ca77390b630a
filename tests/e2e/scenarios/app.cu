// Scenario program built by nvcc, the way users build: `-cudart shared` (against the fake
// libcudart.so.13 at run time), `--default-stream per-thread`, and the default static cudart.
//   launch  <<<>>> (CUDA 13: __cudaLaunchKernel), cudaLaunchKernel, cudaLaunchKernelExC,
//           cudaLaunchCooperativeKernel
//   graph   stream capture, cudaGraphInstantiate, cudaGraphLaunch x3
//   entry   cudaGetDriverEntryPoint(ByVersion) for cuLaunchKernel, then a driver launch
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void add1(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

namespace flash {
struct Flash_fwd_params { int *o; };
template <int D> __global__ void flash_fwd_kernel(Flash_fwd_params params) { params.o[0] = D; }
}

extern "C" __global__ void triton_poi_fused_add_0(float *x) { x[0] += 1.0f; }

static int report(const char *what, cudaError_t e)
{
    printf("rc %s %d\n", what, (int)e);
    return e != cudaSuccess;
}

static int launches(int *d)
{
    int n = 16, failed = 0;
    void *args[] = {&d, &n};
    add1<<<1, 16>>>(d, n);
    failed |= report("<<<add1>>>", cudaGetLastError());
    flash::Flash_fwd_params prm = {d};
    flash::flash_fwd_kernel<128><<<1, 32>>>(prm);
    failed |= report("<<<flash>>>", cudaGetLastError());
    triton_poi_fused_add_0<<<1, 1>>>((float *)d);
    failed |= report("<<<triton>>>", cudaGetLastError());
    failed |= report("cudaLaunchKernel",
                     cudaLaunchKernel((const void *)add1, dim3(1), dim3(16), args, 0, 0));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(16);
    failed |= report("cudaLaunchKernelExC", cudaLaunchKernelExC(&cfg, (const void *)add1, args));
    failed |= report("cudaLaunchCooperativeKernel",
                     cudaLaunchCooperativeKernel((const void *)add1, dim3(1), dim3(16), args, 0, 0));
    return failed;
}

static int graph(int *d, bool mode_all)
{
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t e;
    int failed = 0;
    cudaStreamCreate(&s);
    failed |= report("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 4; i++)
        add1<<<1, 16, 0, s>>>(d, 16);
    triton_poi_fused_add_0<<<1, 1, 0, s>>>((float *)d);
    failed |= report("end", cudaStreamEndCapture(s, &g));
    failed |= report("instantiate", cudaGraphInstantiate(&e, g, 0));
    for (int i = 0; i < 3; i++)
        failed |= report("cudaGraphLaunch", cudaGraphLaunch(e, s));
    failed |= report("sync", cudaStreamSynchronize(s));
    if (mode_all) {
        // Every other runtime instantiation path, an update and a destroy.
        cudaGraphExec_t e2, e3;
        cudaGraphInstantiateParams ip = {};
        cudaGraphExecUpdateResultInfo info;
        failed |= report("instantiate-flags", cudaGraphInstantiateWithFlags(&e2, g, 0));
        failed |= report("instantiate-params", cudaGraphInstantiateWithParams(&e3, g, &ip));
        failed |= report("update", cudaGraphExecUpdate(e3, g, &info));
        failed |= report("launch-e2", cudaGraphLaunch(e2, s));
        failed |= report("launch-e3", cudaGraphLaunch(e3, s));
        failed |= report("destroy-e2", cudaGraphExecDestroy(e2));
        cudaGraph_t into;
        cudaGraphCreate(&into, 0);
        failed |= report("begin-to-graph",
                         cudaStreamBeginCaptureToGraph(s, into, nullptr, nullptr, 0,
                                                       cudaStreamCaptureModeGlobal));
        triton_poi_fused_add_0<<<1, 1, 0, s>>>((float *)d);
        failed |= report("end-to-graph", cudaStreamEndCapture(s, &into));
        add1<<<1, 16, 0, s>>>(d, 16);
    }
    return failed;
}

static int entry(int *d)
{
    typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 unsigned, unsigned, CUstream, void **, void **);
    launch_t a = nullptr, b = nullptr;
    cudaDriverEntryPointQueryResult q;
    int failed = 0;
    // Deprecated since CUDA 12.5, and still what older frameworks call: the scenario exercises
    // it on purpose, so its warning would only flood the build log.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    failed |= report("entry", cudaGetDriverEntryPoint("cuLaunchKernel", (void **)&a,
                                                      cudaEnableDefault, &q));
#pragma GCC diagnostic pop
    failed |= report("entry-by-version",
                     cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&b, 12000,
                                                      cudaEnablePerThreadDefaultStream, &q));
    cudaFunction_t f;
    failed |= report("func-by-symbol", cudaGetFuncBySymbol(&f, (const void *)add1));
    if (a && b) {
        // add1(int *, int) takes two arguments: kernelParams must point at them (NULL is
        // undefined on a real driver).
        int n = 16;
        void *args[] = {&d, &n};
        int ra = (int)a((CUfunction)f, 1, 1, 1, 16, 1, 1, 0, 0, args, 0);
        printf("rc driver-entry %d\n", ra);
        int rb = (int)b((CUfunction)f, 1, 1, 1, 16, 1, 1, 0, 0, args, 0);
        printf("rc driver-entry-ptsz %d\n", rb);
        failed |= ra != 0 || rb != 0;
    }
    return failed;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "launch";
    int *d = nullptr;
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (report("cudaMalloc", cudaMalloc(&d, 1024)))
        return 1;
    if (!strcmp(mode, "launch"))
        return launches(d);
    if (!strcmp(mode, "graph"))
        return graph(d, false);
    if (!strcmp(mode, "graphs"))
        return graph(d, true);
    if (!strcmp(mode, "entry"))
        return entry(d);
    return 2;
}
