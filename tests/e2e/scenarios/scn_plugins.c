/* Loads plugin A, launches its kernel, dlcloses it, loads plugin B (usually at A's address)
 * and launches B's kernel: "scn_plugins A.so B.so". Prints "rc <what> <code>" and
 * "same_address 0|1". The program keeps the runtime loaded, as a framework does. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

typedef int (*launch_fn)(void);
typedef const void *(*stub_fn)(void);

static const void *load_and_launch(const char *path, void **handle)
{
    *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (*handle == NULL) {
        printf("rc dlopen 1\n%s\n", dlerror());
        return NULL;
    }
    launch_fn launch = (launch_fn)dlsym(*handle, "plugin_launch");
    stub_fn stub = (stub_fn)dlsym(*handle, "plugin_stub");
    if (launch == NULL || stub == NULL) {
        printf("rc dlsym 1\n");
        return NULL;
    }
    printf("rc launch %d\n", launch());
    printf("rc launch-again %d\n", launch());
    return stub();
}

int main(int argc, char **argv)
{
    int n = 0;
    if (argc < 3) return 2;
    printf("rc cudaGetDeviceCount %d\n", (int)cudaGetDeviceCount(&n));
    void *a, *b;
    const void *first = load_and_launch(argv[1], &a);
    if (first == NULL) return 1;
    printf("rc dlclose %d\n", dlclose(a));
    const void *second = load_and_launch(argv[2], &b);
    if (second == NULL) return 1;
    printf("same_address %d\n", first == second);
    return 0;
}
