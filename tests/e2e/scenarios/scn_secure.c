/* A program that a test installs set-user-ID (tests/e2e/test_reliability_resolve.py). It is
 * linked against libnvtxcorr.so itself, ahead of libcuda.so.1, because the dynamic loader
 * ignores LD_PRELOAD paths in secure-execution mode: linked first, the library is loaded and
 * interposes exactly as a preload from /etc/ld.so.preload would. Prints whether the kernel
 * started it in secure-execution mode (AT_SECURE) and "rc <what> <CUresult>" per launch. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <sys/auxv.h>

extern int fakecuda_make_function(const char *mangled, CUfunction *out);

int main(void)
{
    CUfunction add1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("secure %lu\n", getauxval(AT_SECURE));
    if (fakecuda_make_function("_Z4add1Pii", &add1) != 0) return 3;
    for (int i = 0; i < 2; i++)
        printf("rc cuLaunchKernel %d\n",
               (int)cuLaunchKernel(add1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    return 0;
}
