/* The x86-64 entry stubs of the launch hooks (hook_bodies.h explains the scheme): the
 * assembly of each stub and its fast paths, the argument layout of each launch entry point,
 * and what the stubs assume of the core's structures. Elsewhere, or built with
 * NVTXCORR_NO_ENTRY_STUBS, the C body is the exported symbol itself. Part of hook_bodies.h,
 * which includes it after the headers it uses. */
#ifndef NVTXCORR_HOOK_BODIES_H
#error "entry_stubs.h is included by hook_bodies.h only"
#endif
#ifndef NVTXCORR_ENTRY_STUBS_H
#define NVTXCORR_ENTRY_STUBS_H

#if defined(__x86_64__) && !defined(NVTXCORR_NO_ENTRY_STUBS)
/* What the stub's instructions assume: `cmpl $0, %fs:(nvtxcorr_thread)` reads the depth; a
 * map is one pointer to its table, whose byte mask is at 8 and whose 16-byte slots (key,
 * value) start at 32; a record's label is first; a route's current target is first. */
_Static_assert(offsetof(nvtxcorr_thread_t, depth) == 0, "the entry stub reads depth at offset 0");
_Static_assert(offsetof(nvtxcorr_thread_t, outer_sp) == 8, "the entry stub reads outer_sp at 8");
_Static_assert(sizeof(unsigned) == 4, "the entry stub compares depth as 4 bytes");
_Static_assert(offsetof(nvtxcorr_map_t, table) == 0 && sizeof(nvtxcorr_map_t) == 8,
               "the entry stub reads a map as its table pointer");
_Static_assert(offsetof(nvtxcorr_map_table_t, byte_mask) == 8, "the stub reads byte_mask at 8");
_Static_assert(offsetof(nvtxcorr_map_table_t, slots) == 32, "the entry stub reads slots at 32");
_Static_assert(sizeof(nvtxcorr_map_slot_t) == 16 && offsetof(nvtxcorr_map_slot_t, value) == 8,
               "the entry stub reads a slot as key, value");
_Static_assert(offsetof(nvtxcorr_label_t, attr) == 0, "the entry stub pushes a record's attr");
_Static_assert(offsetof(nvtxcorr_stub_routes_t, entry) == 0, "the stub jumps through entry at 0");

#define NVTXCORR_LAUNCH_BODY_NAME(sym) nvtxcorr_body_##sym
#define NVTXCORR_LAUNCH_BODY_ATTRS static __attribute__((used, noipa))
/* `abi` is the row's System V argument layout (hooks.def): (register of the handle, integer
 * registers, stack words). */
#define NVTXCORR_UNPAREN(...) __VA_ARGS__
#define NVTXCORR_LAUNCH_STUB(R, sym, params, map, stream, grid, abi)                               \
    NVTXCORR_STUB_TRACE_FN(sym, params, stream, grid)                                              \
    NVTXCORR_LAUNCH_STUB_(R, sym, params, map, NVTXCORR_UNPAREN abi)
/* The entry point's trace function, which the stub's profile path calls with the caller's
 * arguments once the launch is counted, when the trace wants it: the stream and the grid
 * named from the arguments by hooks.def's expressions, as the C body names them. */
/* clang-format off */
#define NVTXCORR_STUB_TRACE_FN(sym, params, stream, grid)                                          \
    _Pragma("GCC diagnostic push")                                                                 \
    _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")                                       \
    static __attribute__((used, noipa)) void nvtxcorr_trace_##sym params                           \
    {                                                                                              \
        nvtxcorr_profile_stub_trace((const void *)(stream), #sym, NVTXCORR_PROFILE_GRID grid);     \
    }                                                                                              \
    _Pragma("GCC diagnostic pop")
#define NVTXCORR_LAUNCH_STUB_(R, sym, params, map, abi)                                            \
    NVTXCORR_LAUNCH_STUB__(R, sym, params, map, abi)
#include "entry_stub_paths.h"

/* The stub's route, in the routes section (routes.c walks it): where its entry jumps now, to
 * start with the C body, which initialises. */
#define NVTXCORR_STUB_ROUTES(sym)                                                                  \
    extern const char nvtxcorr_stub_active_##sym[] NVTXCORR_HIDDEN;                                \
    extern const char nvtxcorr_stub_profile_##sym[] NVTXCORR_HIDDEN;                               \
    extern const char nvtxcorr_stub_trace_##sym[] NVTXCORR_HIDDEN;                                 \
    NVTXCORR_HIDDEN __attribute__((used, section(NVTXCORR_ROUTES_SECTION)))                        \
    nvtxcorr_stub_routes_t nvtxcorr_routes_##sym = {                                               \
        (void *)nvtxcorr_body_##sym,    0, (void *)nvtxcorr_body_##sym,                            \
        (const void *)nvtxcorr_stub_active_##sym, (const void *)nvtxcorr_stub_profile_##sym,       \
        (const void *)nvtxcorr_stub_trace_##sym,  NVTXCORR_SLOT_##sym};
#define NVTXCORR_LAUNCH_STUB__(R, sym, params, map, keyreg, nreg, nstack)                          \
    NVTXCORR_STUB_ROUTES(sym)                                                                      \
    NVTXCORR_EXPORT __attribute__((naked, used)) R sym params                                      \
    {                                                                                              \
        __asm__ volatile("    jmp *nvtxcorr_routes_" #sym "(%%rip)\n"                              \
                         NVTXCORR_STUB_LABEL(active, sym)                                          \
                         NVTXCORR_STUB_ACTIVE(sym, map, keyreg, nreg, nstack)                      \
                         NVTXCORR_STUB_LABEL(profile, sym)                                         \
                         NVTXCORR_STUB_PROFILE(sym, map, keyreg, nreg, nstack)                     \
                         NVTXCORR_STUB_LABEL(trace, sym)                                           \
                         NVTXCORR_STUB_TRACE(sym, map, keyreg, nreg, nstack)                       \
                         "4:  cmpq %%fs:8(%%r11), %%rsp\n"                                         \
                         "    ja nvtxcorr_body_" #sym "\n"                                         \
                         "    jmp *nvtxcorr_real_fn+%c0(%%rip)\n"                                  \
                         :                                                                         \
                         : "i"(sizeof(void *) * NVTXCORR_SLOT_##sym),                              \
                           "i"(NVTXCORR_MAP_HASH_SHIFT - 4),                                       \
                           "i"(offsetof(nvtxcorr_record_t, site)),                                 \
                           "i"(NVTXCORR_MAP_HASH_DROP));                                           \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)
/* clang-format on */
#else
#define NVTXCORR_LAUNCH_BODY_NAME(sym) sym
#define NVTXCORR_LAUNCH_BODY_ATTRS NVTXCORR_EXPORT
#define NVTXCORR_LAUNCH_STUB(R, sym, params, map, stream, grid, abi) NVTXCORR_LOCAL_ALIAS(sym)
#endif

#endif
