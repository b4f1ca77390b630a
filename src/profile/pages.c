/* Zeroed memory for per-thread state, from mmap rather than malloc: a thread's first launch
 * may be made from a signal handler that interrupted malloc on that thread (design.md,
 * "Signal handlers"), and malloc is not async-signal-safe (glibc's arena lock would deadlock,
 * or its heap be corrupted). mmap is a plain system call. Never given back: what is allocated
 * here (a thread's block, its record chunks, its trace buffer) lives as long as the process,
 * and a retired block is reused by a later thread. Untouched pages cost no memory. */
#include <sys/mman.h>

#include "internal.h"

void *nvtxcorr_prof_zalloc(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}
