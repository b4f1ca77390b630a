/* Zeroed memory from mmap rather than malloc, for everything profile mode allocates on the
 * program's threads: a thread's first launch may be made from a signal handler that
 * interrupted malloc on that thread (design.md, "Signal handlers"), and malloc is not
 * async-signal-safe (glibc's arena lock would deadlock, or its heap be corrupted); and a
 * handler may call exit() while this thread was inside nvtxcorr's own allocation (the first
 * launch of a kernel, CUPTI's buffer callbacks), whose exit path must then allocate nothing
 * that waits for the arena lock. mmap is a plain system call. Never given back but where
 * said: what is allocated here (a thread's block, its record chunks, its trace buffer, sites,
 * labels, interned names, histograms) lives as long as the process, and a retired block is
 * reused by a later thread. Untouched pages cost no memory. */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include "pages.h"
void *nvtxcorr_prof_zalloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Small blocks, carved from 1 MiB mappings without a lock (a block never spans two; the rest
 * of a mapping that a block does not fit is left unused). */
enum { ARENA_BYTES = 1 << 20, ARENA_LARGE = ARENA_BYTES / 16 };
typedef struct arena {
    _Atomic size_t used;
    _Alignas(16) unsigned char data[];
} arena_t;
static arena_t *_Atomic arena;

void *nvtxcorr_prof_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size > ARENA_LARGE) return nvtxcorr_prof_zalloc(size);
    const size_t room = ARENA_BYTES - sizeof(arena_t);
    for (;;) {
        arena_t *a = atomic_load_explicit(&arena, memory_order_acquire);
        if (a != NULL) {
            size_t at = atomic_fetch_add_explicit(&a->used, size, memory_order_relaxed);
            if (at + size <= room) return a->data + at;
        }
        arena_t *fresh = nvtxcorr_prof_zalloc(ARENA_BYTES);
        if (fresh == NULL) return NULL;
        if (!atomic_compare_exchange_strong_explicit(&arena, &a, fresh, memory_order_acq_rel,
                                                     memory_order_acquire))
            munmap(fresh, ARENA_BYTES); /* another thread's is there: take from it */
    }
}

char *nvtxcorr_prof_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = nvtxcorr_prof_alloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
