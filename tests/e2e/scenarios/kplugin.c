/* A plugin with one kernel, registered with the runtime the way nvcc-generated host code does
 * it: a constructor registers the fat binary and the kernel's host stub, and an atexit handler
 * (run at dlclose for a shared object) unregisters it. Built twice, as libkplugin_alpha.so and
 * libkplugin_omega.so, differing only in the kernel's name (same length, so the same layout):
 * dlclosing one and dlopening the other usually maps the second at the first one's address. */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "cudart_abi.h"

#ifndef KERNEL_NAME
#error "KERNEL_NAME must be defined"
#endif

static void **fatbin;
static char device_name[] = KERNEL_NAME;
static const int fatbin_stand_in = 0;

/* The host stub: what programs launch the kernel by. */
__attribute__((noinline, used)) static void kernel_stub(void *arg)
{
    (void)arg;
}

static void unregister(void)
{
    __cudaUnregisterFatBinary(fatbin);
}

__attribute__((constructor)) static void register_all(void)
{
    fatbin = __cudaRegisterFatBinary((void *)&fatbin_stand_in);
    __cudaRegisterFunction(fatbin, (const char *)kernel_stub, device_name, device_name, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(fatbin);
    atexit(unregister);
}

__attribute__((visibility("default"))) const void *plugin_stub(void);
const void *plugin_stub(void)
{
    return (const void *)kernel_stub;
}

/* Launches the kernel by its host stub, as cudaLaunchKernel users (and <<<>>> before CUDA 13)
 * do. */
__attribute__((visibility("default"))) int plugin_launch(void);
int plugin_launch(void)
{
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    void *args[] = {NULL};
    return (int)cudaLaunchKernel((const void *)kernel_stub, grid, block, args, 0, NULL);
}
