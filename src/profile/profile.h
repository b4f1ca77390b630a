/* Standalone profiling (NVTXCORR_PROFILE, NVTXCORR_TRACE): the narrow interface between the
 * core and src/profile/. With either variable set the core runs in NVTXCORR_MODE_PROFILE:
 * launch hooks stay active whether or not an NVTX tool is attached, and each outermost launch
 * goes through NVTXCORR_PROFILE_LAUNCH below instead of the plain NVTX bracket. It still
 * pushes the launch's range when a tool is attached, and otherwise makes no NVTX call.
 *
 * What the core calls, and from where:
 *   nvtxcorr_profile_prepare    init.c, once, first thing when initialising
 *   nvtxcorr_profile_init       init.c, once, while initialising (after the NVTX tool)
 *   nvtxcorr_profile_mode, _started  init.c, the mode to run in, and once it is stored
 *   nvtxcorr_profile_profiler_api    hook_bodies.h, cuProfilerStart/Stop (window.c)
 *   NVTXCORR_PROFILE_LAUNCH     hook_bodies.h, the launch body in profile mode
 * What a launch counts under travels in the core's record for its handle (nvtxcorr_record_t:
 * label, names, and the site slot that profile mode alone fills). Graph events reach profile
 * mode the other way round: it registers a listener with the core while it initialises
 * (nvtxcorr_on_graph_event in core/graphs.h), and graphs.c calls through it.
 * Everything else (per-thread records, the summary, the trace, exit and signal handling) is
 * private to src/profile/. docs/profile.md describes the outputs. */
#ifndef NVTXCORR_PROFILE_H
#define NVTXCORR_PROFILE_H

#include <stdint.h>
#include "core/map.h"
#include "core/record.h"
#include "profile/counting/launch.h"
/* Re-exported for the hooks: the front door's entries that lower pieces define. */
#include "profile/lifecycle/window.h"
#include "profile/output/trace_api.h"
/* Before anything slow (the NVTX tool's load): the process's facts, the signal handlers and
 * the trace's file, so that a SIGTERM while nvtxcorr initialises still writes the summary and
 * ends the trace. 0, or -1 when neither mode can start (then nvtxcorr_profile_init is not
 * called, and the core runs as if neither variable were set). */
int nvtxcorr_profile_prepare(void);
/* 0 when profile or trace mode is on; -1 when neither could start. Registers profile mode's
 * listeners for the core's events. */
int nvtxcorr_profile_init(void);
/* The mode profile mode runs in: NVTXCORR_MODE_PROFILE, or with NVTXCORR_WINDOW the mode
 * between windows (PROFILE_IDLE, or ACTIVE when an NVTX tool is attached: `tool`). */
int nvtxcorr_profile_mode(int tool);
/* Once the mode is stored (hooks/init.c): windows start (their signal handler, their helper). */
void nvtxcorr_profile_started(void);

/* `slow` and `map`: the core's slow path and handle map for the kind (hook_bodies.h). */
void nvtxcorr_profile_begin(nvtxcorr_profile_launch_t *pl, nvtxcorr_profile_kind_t kind,
                            nvtxcorr_label_slow_fn slow, nvtxcorr_map_t *map, const void *key,
                            const void *stream, int ptsz);
/* Returns nonzero when the trace wants this launch (then call nvtxcorr_profile_trace). */
int nvtxcorr_profile_end(nvtxcorr_profile_launch_t *pl, int failed);

/* The x86-64 entry stub's profile path (hook_bodies.h): begin with the handle's record, whose
 * site is made already, and end with the real call's result (nonzero counts as an error),
 * which _end returns. While a trace is written the stub ends with _trace_end instead, which
 * returns it with bit 32 set when the trace wants the launch: then the stub calls the entry
 * point's trace function, which calls nvtxcorr_profile_stub_trace, and takes the result back
 * from nvtxcorr_stub_prof_result. */
void nvtxcorr_stub_prof_begin(nvtxcorr_record_t *r);
int nvtxcorr_stub_prof_end(int result);
uint64_t nvtxcorr_stub_trace_end(int result);
void nvtxcorr_profile_stub_trace(const void *stream, const char *api, unsigned gx, unsigned gy,
                                 unsigned gz);
int nvtxcorr_stub_prof_result(void);

#define NVTXCORR_PROFILE_GRID(x, y, z) (unsigned)(x), (unsigned)(y), (unsigned)(z)

/* The body of an outermost launch in profile mode; `call` is the real call, made exactly once,
 * and its result is returned unchanged (any nonzero result counts as an error). `grid` is
 * "(x, y, z)", evaluated only when the trace records the launch; `api` the entry point's name. */
#define NVTXCORR_PROFILE_LAUNCH(R, call, kind, slow, map, key, stream, ptsz, grid, api)            \
    do {                                                                                           \
        nvtxcorr_profile_launch_t pl_;                                                             \
        nvtxcorr_profile_begin(&pl_, kind, slow, map, (const void *)(key), (const void *)(stream), \
                               ptsz);                                                              \
        R r_ = call;                                                                               \
        if (nvtxcorr_profile_end(&pl_, r_ != 0))                                                   \
            nvtxcorr_profile_trace(&pl_, api, NVTXCORR_PROFILE_GRID grid);                         \
        return r_;                                                                                 \
    } while (0)

#endif
