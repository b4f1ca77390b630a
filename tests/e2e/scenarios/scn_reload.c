/* A program that probes libcuda (dlopen, dlsym, dlclose) and loads it again later, after
 * something else took the freed address range. A hook slot filled by the probe must not
 * point into unmapped memory: the library pins what it wraps. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL || dlsym(h, "cuGetProcAddress_v2") == NULL) return 3;
    dlclose(h);
    void *filler = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL); /* take the hole */
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    CUresult (*dev)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))dlsym(h, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult(*)(CUcontext *, CUdevice))dlsym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*set)(CUcontext) = (CUresult(*)(CUcontext))dlsym(h, "cuCtxSetCurrent");
    CUresult (*create)(CUgraph *, unsigned) =
        (CUresult(*)(CUgraph *, unsigned))dlsym(h, "cuGraphCreate");
    CUresult (*inst)(CUgraphExec *, CUgraph, unsigned long long) = (CUresult(*)(
        CUgraphExec *, CUgraph, unsigned long long))dlsym(h, "cuGraphInstantiateWithFlags");
    CUdevice d;
    CUcontext c;
    CUgraph g;
    CUgraphExec e;
    init(0);
    dev(&d, 0);
    retain(&c, d);
    set(c);
    create(&g, 0);
    printf("rc instantiate %d\n", (int)inst(&e, g, 0));
    (void)filler;
    return 0;
}
