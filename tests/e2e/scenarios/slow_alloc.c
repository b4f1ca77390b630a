/* A slow allocator, for the races of tests/e2e/test_reliability_profile.py, preloaded in front
 * of nvtxcorr so that its allocations come here first:
 *   SLOWALLOC_MS=n    a calloc of SLOWALLOC_MIN bytes or more (default 1 MiB) waits n ms
 *                     before it is made
 *   SLOWALLOC_FROM=s  ... only a calloc called from an object whose path contains s
 *   SLOWALLOC_LOCK=1  the slowed calloc holds a lock while it waits, which every malloc,
 *                     calloc, realloc and aligned allocation takes first: glibc's arena lock,
 *                     made to be held long, so that a signal handler that interrupts the
 *                     allocation and calls exit() finds it held, as it would by chance
 * so that what nvtxcorr allocates when GPU time starts (its correlation map and record sets)
 * takes long enough for another thread, a window's helper, to run meanwhile; and so that an
 * exit path that allocates after a signal interrupted nvtxcorr's own allocation deadlocks
 * every time rather than once in a while. The allocations themselves are glibc's (__libc_*),
 * so free() and the rest are unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);

static pthread_mutex_t arena = PTHREAD_MUTEX_INITIALIZER;
static long delay = -1, min = 1 << 20, locking;
static const char *from;

static void settings(void)
{
    if (delay >= 0) return;
    const char *v = getenv("SLOWALLOC_MIN");
    if (v && atol(v) > 0) min = atol(v);
    v = getenv("SLOWALLOC_LOCK");
    locking = v && atol(v) > 0;
    from = getenv("SLOWALLOC_FROM");
    v = getenv("SLOWALLOC_MS");
    delay = v ? atol(v) : 0;
}

static void wait_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Every allocation waits for a slowed one in progress (SLOWALLOC_LOCK). */
static void gate(void)
{
    settings();
    if (locking) {
        pthread_mutex_lock(&arena);
        pthread_mutex_unlock(&arena);
    }
}

static int called_from(const void *caller)
{
    Dl_info info;
    return from == NULL ||
           (dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, from) != NULL);
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t size)
{
    settings();
    if (delay > 0 && size && n >= (size_t)min / size && called_from(__builtin_return_address(0))) {
        if (locking) pthread_mutex_lock(&arena);
        wait_ms(delay);
        void *p = __libc_calloc(n, size);
        if (locking) pthread_mutex_unlock(&arena);
        return p;
    }
    gate();
    return __libc_calloc(n, size);
}

__attribute__((visibility("default"))) void *malloc(size_t size)
{
    gate();
    return __libc_malloc(size);
}

__attribute__((visibility("default"))) void *realloc(void *p, size_t size)
{
    gate();
    return __libc_realloc(p, size);
}

__attribute__((visibility("default"))) void *aligned_alloc(size_t align, size_t size)
{
    gate();
    return __libc_memalign(align, size);
}

__attribute__((visibility("default"))) int posix_memalign(void **out, size_t align, size_t size)
{
    gate();
    void *p = __libc_memalign(align, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}
