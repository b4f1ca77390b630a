/* A library whose constructor resolves a driver function with dlsym on a libcuda handle, as
 * plugins do when they are dlopen'ed (scn_startup.c). Constructors run under the loader lock. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

__attribute__((visibility("default"))) void *ctor_cuLaunchKernel;

__attribute__((constructor)) static void resolve(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    ctor_cuLaunchKernel = h ? dlsym(h, "cuLaunchKernel") : NULL;
}
