/* A plugin loaded with dlopen(RTLD_LOCAL) that looks up the next malloc, as memory-hook
 * libraries (UCX and others) do: glibc answers with libc's malloc, and so must we. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int model_run(int steps);
int model_run(int steps)
{
    void *next = dlsym(RTLD_NEXT, "malloc");
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *libc_malloc = libc ? dlsym(libc, "malloc") : NULL;
    printf("plugin: RTLD_NEXT malloc is %s\n", next == NULL          ? "NULL"
                                               : next == libc_malloc ? "libc"
                                                                     : "other");
    (void)steps;
    return next == libc_malloc ? 0 : 1;
}
