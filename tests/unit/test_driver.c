/* The CUDA calls nvtxcorr makes for itself (src/driver.c): nothing while the driver or the
 * runtime is not loaded, and asked again once it is (a program that dlopens them later);
 * then each row is the library's own function of the row's ABI and stream variant, found
 * even when the library was loaded RTLD_LOCAL. The fake driver and runtime come from the
 * directory given on the command line. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "core/cuda_calls.h"
#include "test_core.h"

static void *open_fake(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) fprintf(stderr, "test_driver.c: %s\n", dlerror());
    return h;
}

#define CHECK_ROW(id, h, sym) CHECK(nvtxcorr_cuda_fn(NVTXCORR_CUDA_##id) == dlsym(h, sym))

void test_driver(const char *fakes)
{
    /* Not loaded yet: nothing, and nothing remembered. */
    CHECK(nvtxcorr_cuda_fn(NVTXCORR_CUDA_cuFuncGetName) == NULL);
    CHECK(nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaFuncGetName) == NULL);
    CHECK(nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaGetLastError) == NULL);

    void *drv = open_fake(fakes, "libcuda.so.1");
    CHECK(drv != NULL);
    if (drv == NULL) return;
    CHECK(dlsym(drv, "cuFuncGetName") != NULL);
    CHECK_ROW(cuFuncGetName, drv, "cuFuncGetName");
    CHECK_ROW(cuKernelGetName, drv, "cuKernelGetName");
    CHECK_ROW(cuStreamIsCapturing, drv, "cuStreamIsCapturing");
    CHECK_ROW(cuStreamIsCapturing_ptsz, drv, "cuStreamIsCapturing_ptsz");
    CHECK_ROW(cuGraphKernelNodeGetParams_v2, drv, "cuGraphKernelNodeGetParams_v2");
    CHECK_ROW(cuGraphGetNodes, drv, "cuGraphGetNodes");
    /* Remembered: the same answer again. */
    CHECK_ROW(cuFuncGetName, drv, "cuFuncGetName");
    /* Still no runtime. */
    CHECK(nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaFuncGetName) == NULL);

    void *rt = open_fake(fakes, "libcudart.so.13");
    CHECK(rt != NULL);
    if (rt == NULL) return;
    CHECK(dlsym(rt, "cudaFuncGetName") != NULL);
    CHECK_ROW(cudaFuncGetName, rt, "cudaFuncGetName");
    CHECK_ROW(cudaGetFuncBySymbol, rt, "cudaGetFuncBySymbol");
    CHECK_ROW(cudaPeekAtLastError, rt, "cudaPeekAtLastError");
    CHECK_ROW(cudaGetLastError, rt, "cudaGetLastError");
}
