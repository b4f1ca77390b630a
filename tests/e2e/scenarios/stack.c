/* Another preload library, listed after libnvtxcorr.so: it interposes puts and
 * cuLaunchKernel itself and finds the next definitions with dlsym(RTLD_NEXT). With our dlsym
 * override in front, RTLD_NEXT must still mean "after this library": libc's puts and the
 * driver's cuLaunchKernel, not this library's own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*puts_fn)(const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
static unsigned long launches;

int puts(const char *s);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra);

__attribute__((constructor)) static void check_next(void)
{
    puts_fn next = (puts_fn)dlsym(RTLD_NEXT, "puts");
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    puts_fn libc_puts = libc ? (puts_fn)dlsym(libc, "puts") : NULL;
    fprintf(stderr, "stack: RTLD_NEXT puts is %s\n",
            next == libc_puts ? "libc"
            : next == puts    ? "self"
                              : "other");
}

int puts(const char *s)
{
    puts_fn next = (puts_fn)dlsym(RTLD_NEXT, "puts");
    return next ? next(s) : EOF;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
    static launch_fn next;
    if (next == NULL) next = (launch_fn)dlsym(RTLD_NEXT, "cuLaunchKernel");
    launches++;
    return next ? next(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra) : 999;
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "stack: cuLaunchKernel calls %lu\n", launches);
}
