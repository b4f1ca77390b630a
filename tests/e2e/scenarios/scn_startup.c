/* Start-up race with the dynamic loader. One thread makes the process's first CUDA call, which
 * initialises nvtxcorr and loads the NVTX tool (a slow one: NVTXREC_INIT_SLEEP_MS). Meanwhile
 * the main thread dlopens libctor_dlsym.so, whose constructor, run under the loader lock,
 * asks dlsym(libcuda, "cuLaunchKernel"). A dlsym that waited for initialisation there would
 * wait for a thread that itself waits for the loader lock.
 *
 * Prints "rc <what> <CUresult>" for the first call and for a launch through the pointer the
 * constructor got. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern int fakecuda_make_function(const char *mangled, CUfunction *out);

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
static CUfunction add1;

static void *first_call(void *arg)
{
    (void)arg;
    printf("rc first-call %d\n", (int)cuLaunchKernel(add1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    return NULL;
}

/* The tool is loaded from inside nvtxcorr's initialisation: once it is, the first call is
 * past pthread_once and (with NVTXREC_INIT_SLEEP_MS) sleeping in the tool's init. */
static void wait_for_tool(void)
{
    const char *tool = getenv("NVTX_INJECTION64_PATH");
    for (int i = 0; tool && i < 10000; i++) {
        void *h = dlopen(tool, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            dlclose(h);
            return;
        }
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    printf("tool not loaded\n");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (fakecuda_make_function("_Z4add1Pii", &add1) != 0) return 3;
    pthread_t t;
    pthread_create(&t, NULL, first_call, NULL);
    wait_for_tool();
    void *lib = dlopen("libctor_dlsym.so", RTLD_NOW);
    launch_fn *from_ctor = lib ? (launch_fn *)dlsym(lib, "ctor_cuLaunchKernel") : NULL;
    pthread_join(t, NULL);
    if (from_ctor == NULL || *from_ctor == NULL) {
        printf("constructor got no cuLaunchKernel: %s\n", dlerror());
        return 4;
    }
    printf("rc from-ctor %d\n", (int)(*from_ctor)(add1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    return 0;
}
