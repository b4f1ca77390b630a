/* libkeep_summary.so, preloaded after libnvtxcorr.so: a summary's publish fails as if a file of
 * its name had appeared meanwhile (renameat2 answers EEXIST for the library's temporary file),
 * and the temporary file the library then removes is kept as <name>.kept. So one run leaves
 * both the JSON summary and the text table the library prints to stderr instead, drawn from the
 * same numbers (tests/e2e/test_frontend.py: the exit table and the report's are the same). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static int temporary(const char *path)
{
    static const char suffix[] = ".nvtxcorr-tmp";
    size_t n = strlen(path), k = sizeof suffix - 1;
    return n > k && strcmp(path + n - k, suffix) == 0;
}

EXPORT long syscall(long number, ...)
{
    static long (*real)(long, ...);
    va_list ap;
    long a[6];
    va_start(ap, number);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_renameat2 && temporary((const char *)a[1])) {
        errno = EEXIST;
        return -1;
    }
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

EXPORT int unlink(const char *path)
{
    static int (*real)(const char *);
    if (temporary(path)) {
        char kept[4096];
        snprintf(kept, sizeof kept, "%s.kept", path);
        return rename(path, kept);
    }
    if (!real) real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    return real(path);
}
