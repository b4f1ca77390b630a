/* Where each x86-64 launch entry stub jumps (routes.c). */
#ifndef NVTXCORR_ROUTES_H
#define NVTXCORR_ROUTES_H

#include <stdint.h>

/* Where each x86-64 launch entry stub jumps.
 * The exported launch symbol's first instruction is `jmp *entry` of its route, one per launch
 * row of hooks.def, kept together in one section of the library. `entry` is the real
 * function (pass-through, and profile mode between windows), one of the stub's fast paths
 * (active, profile, trace), or the C body when none applies. It depends on the mode, on
 * whether a capture is open, on whether profile mode writes a trace, on the slot's real
 * function and on the NVTX tool's push and pop, and is rewritten (nvtxcorr_routes_refresh)
 * after any of those changes: the launch itself then tests none of them. */
typedef struct __attribute__((aligned(16))) nvtxcorr_stub_routes {
    void *entry;  /* read by the stub's first instruction */
    uint64_t gen; /* the refresh that wrote entry: both change together (routes.c) */
    void *body;   /* the C body (hook_bodies.h) */
    const void *active, *profile, *trace;
    unsigned slot;
} nvtxcorr_stub_routes_t;
#define NVTXCORR_ROUTES_SECTION "nvtxcorr_routes"
void nvtxcorr_routes_refresh(void);
/* Profile mode says whether it writes a trace (the trace route) through this. */
void nvtxcorr_routes_tracing(int on);
/* Stores the mode and refreshes the routes. */
void nvtxcorr_set_mode(int mode);

#endif
