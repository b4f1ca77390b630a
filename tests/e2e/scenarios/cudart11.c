/* Stands in for a CUDA 11 runtime (soname libcudart.so.11.0, symbols versioned
 * libcudart.so.11.0), whose cudaGraphInstantiate takes five arguments. A program built
 * against it must reach it with its arguments intact: nvtxcorr's three-argument CUDA 13 hook
 * must not bind to it. */
#include <stddef.h>
#include <stdio.h>

int cudaGraphInstantiate(void **exec, void *graph, void **err_node, char *log, size_t size);
int cudaGraphInstantiate(void **exec, void *graph, void **err_node, char *log, size_t size)
{
    printf("cudart11: log=%s size=%zu\n", log ? log : "(null)", size);
    (void)exec, (void)graph, (void)err_node;
    return size == 64 ? 0 : 1;
}
