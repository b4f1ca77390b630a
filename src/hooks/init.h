/* Lazy initialisation (init.c): the first hooked call decides the mode (core/state.h). Only
 * the hooks ask for it: everything below them reads the mode and is started by it. */
#ifndef NVTXCORR_INIT_H
#define NVTXCORR_INIT_H

#include <stdatomic.h>
#include "core/attributes.h"
#include "core/state.h"
int nvtxcorr_init_slow(void);
/* Whether this thread is the one initialising. */
int nvtxcorr_initialising_here(void);

/* True when this call must be bracketed. The first hooked call initialises; a call made while
 * another thread initialises, or re-entered from inside initialisation, passes through. */
static inline int nvtxcorr_active(void)
{
    int m = atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire);
    if (NVTXCORR_LIKELY(m != NVTXCORR_MODE_UNINIT)) return m >= NVTXCORR_MODE_ACTIVE;
    return nvtxcorr_init_slow();
}

/* The mode for a launch hook: one load, as nvtxcorr_active, but ACTIVE and PROFILE apart. */
static inline int nvtxcorr_launch_mode(void)
{
    int m = atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire);
    if (NVTXCORR_LIKELY(m != NVTXCORR_MODE_UNINIT)) return m;
    return nvtxcorr_init_slow() ? atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire)
                                : NVTXCORR_MODE_PASSTHROUGH;
}

#endif
