/* A slow allocator, for the races of tests/e2e/test_reliability_windows.py, preloaded in front
 * of nvtxcorr so that its calloc calls come here first:
 *   SLOWALLOC_MS=n    a calloc of SLOWALLOC_MIN bytes or more (default 1 MiB) waits n ms
 *                     before it is made
 * so that what nvtxcorr allocates when GPU time starts (its correlation map and record sets)
 * takes long enough for another thread, a window's helper, to run meanwhile. The allocation
 * itself is glibc's (__libc_calloc), so free() and the rest are unchanged. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

void *__libc_calloc(size_t n, size_t size);

static long env_long(const char *name)
{
    const char *v = getenv(name);
    return v ? atol(v) : 0;
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t size)
{
    static long delay = -1, min = 1 << 20;
    if (delay < 0) {
        if (env_long("SLOWALLOC_MIN") > 0) min = env_long("SLOWALLOC_MIN");
        delay = env_long("SLOWALLOC_MS");
    }
    if (delay > 0 && size && n >= (size_t)min / size) {
        struct timespec ts = {delay / 1000, (delay % 1000) * 1000000};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    return __libc_calloc(n, size);
}
