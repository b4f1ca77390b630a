/* Helpers shared by the scenario programs; see scn_common.h. */
#include "scn_common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern int fakecuda_make_function(const char *mangled, CUfunction *out);

/* The fake driver's module format: a magic line, then one mangled kernel name per line. */
static const char image[] = "FAKEIMAGE\n"
                            "_Z4add1Pii\n"
                            "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params\n"
                            "triton_poi_fused_add_0\n";

CUstream scn_context(void)
{
    CUcontext ctx;
    CUdevice dev;
    CUstream stream = NULL;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    cuStreamCreate(&stream, 0);
    return stream;
}

CUresult scn_load_kernels(CUfunction *add1, CUfunction *flash, CUfunction *triton)
{
    CUmodule mod;
    CUresult r = cuModuleLoadData(&mod, image);
    cuModuleGetFunction(add1, mod, "_Z4add1Pii");
    cuModuleGetFunction(flash, mod, "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params");
    cuModuleGetFunction(triton, mod, "triton_poi_fused_add_0");
    return r;
}

void scn_print_peak_rss(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) printf("peak_rss_kb %ld\n", strtol(line + 6, NULL, 10));
    if (f) fclose(f);
}

CUfunction scn_make_function(const char *fmt, long i)
{
    char name[512];
    CUfunction f = NULL;
    snprintf(name, sizeof name, fmt, i);
    if (fakecuda_make_function(name, &f) != 0) {
        fprintf(stderr, "make_function %s failed\n", name);
        _exit(3); /* also from a forked child or a handler: no atexit work */
    }
    return f;
}

CUgraph scn_graph_of(CUfunction f)
{
    CUgraph g;
    CUgraphNode node;
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 32, p.blockDimY = p.blockDimZ = 1;
    cuGraphCreate(&g, 0);
    cuGraphAddKernelNode_v2(&node, g, NULL, 0, &p);
    return g;
}

int scn_graph_cycle(CUgraph g, CUstream stream)
{
    CUgraphExec e;
    int r = (int)cuGraphInstantiateWithFlags(&e, g, 0);
    if (r == 0) r = (int)cuGraphLaunch(e, stream);
    if (r == 0) r = (int)cuGraphExecDestroy(e);
    return r;
}
