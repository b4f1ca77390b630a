/* The slow-path stacks (slowstack.c). */
#ifndef NVTXCORR_SLOWSTACK_H
#define NVTXCORR_SLOWSTACK_H

#include <stddef.h>

/* Runs fn(arg) on this thread's private slow-path stack (directly when already there, or when
 * it cannot be mapped), so a hook's first call for a kernel or graph uses little of the
 * caller's stack. */
void nvtxcorr_on_slow_stack(void (*fn)(void *), void *arg);
/* Runs fn(arg) on a stack of `size` bytes mapped for this call alone (with a guard page
 * below it) and unmapped after: for rare work deeper than the slow-path stack (CUPTI's
 * start). Directly, when it cannot be mapped. */
void nvtxcorr_on_fresh_stack(size_t size, void (*fn)(void *), void *arg);

#endif
