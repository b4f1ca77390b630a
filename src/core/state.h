/* The process state every hook and route reads (state.c): the mode, each thread's launch
 * bracket, the label table in use, and what the routes depend on besides (the captures open,
 * the NVTX tool's push and pop). Written by the hooks' initialisation (hooks/init.c) and the
 * parts it starts; owned here, below all of them, so that none calls up to read it. */
#ifndef NVTXCORR_STATE_H
#define NVTXCORR_STATE_H

#include <stdint.h>

/* PROFILE: NVTXCORR_PROFILE or NVTXCORR_TRACE is set (src/profile/profile.h). The hooks are
 * active as in ACTIVE, with or without an NVTX tool, and launches take the profile path. */
enum {
    NVTXCORR_MODE_UNINIT = 0,
    NVTXCORR_MODE_PASSTHROUGH,
    NVTXCORR_MODE_INITIALISING, /* on some thread: the others pass through, never wait */
    NVTXCORR_MODE_ACTIVE,
    NVTXCORR_MODE_PROFILE, /* from here on, the hooks are active */
    /* Profile mode between windows (NVTXCORR_WINDOW) with no NVTX tool attached: launches pass
     * through as in PASSTHROUGH (the entry stub jumps straight to the real function), the
     * other hooks stay active so graphs, captures and names are still tracked. With a tool
     * attached the mode between windows is ACTIVE instead. */
    NVTXCORR_MODE_PROFILE_IDLE
};
/* Profile or trace mode started (hooks/init.c): set once, whatever mode windows switch to. */
extern int nvtxcorr_profiling;
extern _Atomic int nvtxcorr_mode;
/* Launches that passed through, uncounted, while initialisation ran (on another thread, or
 * re-entered on the initialising one): profile mode's summary reports them. */
extern _Atomic unsigned long long nvtxcorr_launches_while_starting;
void nvtxcorr_passed_while_starting(void);
/* The label table loaded at initialisation, or NULL for default labels. */
struct nvtxcorr_label_table;
extern const struct nvtxcorr_label_table *nvtxcorr_labels_in_use;
/* Stream captures open in the process (capture.c counts them). */
extern _Atomic unsigned nvtxcorr_captures_open;
/* The NVTX tool's own range push and pop for this library's NVTX instance, read once the
 * tool is loaded (emit.c), or NULL: the x86-64 entry stubs call them directly
 * (hooks/hook_bodies.h), and lower the depth after the pop. */
extern void *nvtxcorr_tool_push, *nvtxcorr_tool_pop;

/* Per-thread state. */
typedef struct nvtxcorr_capture_entry {
    const void *stream;
    unsigned generation;
    unsigned char ptsz, capturing;
} nvtxcorr_capture_entry_t;

enum { NVTXCORR_CAPTURE_CACHE = 4 };
typedef struct nvtxcorr_thread {
    /* Hooked calls in progress on this thread: a runtime launch reaches the driver through a
     * hooked pointer too, and only the outermost call gets a range. */
    unsigned depth;
    unsigned capture_next;
    /* The frame of the outermost launch in progress (nvtxcorr_launch_outermost). */
    uintptr_t outer_sp;
    nvtxcorr_capture_entry_t capture[NVTXCORR_CAPTURE_CACHE];
} nvtxcorr_thread_t;

extern __thread nvtxcorr_thread_t nvtxcorr_thread __attribute__((tls_model("initial-exec")));

#endif
