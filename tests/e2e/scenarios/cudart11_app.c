/* Built against the CUDA 11-style runtime of cudart11.c. */
#include <stddef.h>
#include <stdio.h>

int cudaGraphInstantiate(void **exec, void *graph, void **err_node, char *log, size_t size);

int main(void)
{
    char log[64] = "intact";
    void *exec = NULL;
    int rc = cudaGraphInstantiate(&exec, NULL, NULL, log, sizeof log);
    printf("rc cudaGraphInstantiate-11 %d\n", rc);
    return rc;
}
