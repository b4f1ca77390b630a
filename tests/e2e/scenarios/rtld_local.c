/* Loads a CUDA-using library RTLD_LOCAL (as Python loads libtorch_cuda) and runs it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *h = dlopen(argc > 1 ? argv[1] : "libmodel.so", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 3;
    }
    int (*run)(int) = (int (*)(int))dlsym(h, "model_run");
    int rc = run ? run(5) : -2;
    printf("rc model_run %d\n", rc);
    return rc != 0;
}
