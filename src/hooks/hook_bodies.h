/* Wrapper bodies, one per kind of hooked call in hooks.def, shared by the driver and runtime
 * hook files (which differ only in the result type and its codes). Each body forwards at
 * once when the library is disabled or no NVTX tool is attached; otherwise it brackets the
 * real call, which is always made exactly once with the caller's arguments, and its result
 * is returned unchanged. */
#ifndef NVTXCORR_HOOK_BODIES_H
#define NVTXCORR_HOOK_BODIES_H
#include "core/attributes.h"
#include "core/capture.h"
#include "core/emit.h"
#include "core/graphs.h"
#include "core/kernels.h"
#include "core/map.h"
#include "core/record.h"
#include "core/resolve.h"
#include "core/routes.h"
#include "core/state.h"
#include "hooks.h"
#include "init.h"
#include "launch.h"
#include "profile/counting/launch.h"
#include "profile/profile.h"
/* R: result type; NOTFOUND: returned only when no real function exists at all. */
#define NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
    __typeof__(&sym) real = (__typeof__(&sym))nvtxcorr_real(NVTXCORR_SLOT_##sym);                  \
    if (NVTXCORR_UNLIKELY(real == NULL)) return NOTFOUND;

/* Launch hooks. On x86-64 the exported symbol is an assembly entry stub whose first
 * instruction jumps where its route (nvtxcorr_stub_routes_t, routes.c) points: the real
 * function itself when the library is pass-through or profiling between windows
 * (PROFILE_IDLE), with the caller's registers and stack untouched; one of the stub's fast
 * paths (ACTIVE, PROFILE, PROFILE while a trace is written); or the C body below, a hidden
 * function, while nothing else applies (not yet initialised, the slot not yet resolved, a
 * capture open anywhere, an NVTX tool without a range push or pop). routes.c rewrites the
 * routes whenever one of those changes, so the launch itself tests none of them. A fast path
 * forwards straight to the real function when the launch is nested inside another hooked call
 * (a runtime launch reaching the driver: the depth is nonzero and the stack pointer below the
 * outermost launch's, nvtxcorr.h); an outermost launch whose handle has a record at its first
 * probe in the map, with a range to push, is bracketed by the stub itself. Anything else (a
 * first launch, a probe that misses, a "-" rule, a record without its profile site) goes to the
 * C body, which does all of it. In C, GCC cannot forward an 11-argument call without saving
 * every argument register and reloading the stack arguments, and it saves five callee-saved
 * registers it then barely uses: that was most of the cost of a range (docs/performance.md,
 * "The launch path at its floor"). Elsewhere the C body is the exported symbol itself. Either
 * way the entry has a second, hidden name, nvtxcorr_local_<sym>, for the hook table
 * (nvtxcorr.h). */
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

/* The System V x86-64 argument layout of each launch entry point of hooks.def, for its stub's
 * fast path: the register holding the handle looked up, how many integer registers carry
 * arguments (rdi, rsi, rdx, rcx, r8, r9 in that order), and how many 8-byte words are passed
 * on the stack. A dim3 (12 bytes of integers) takes two registers. The stub saves the
 * registers around the range push and copies the stack words for the real call, so a wrong
 * count would hand the driver wrong arguments: e2e.launch-arguments-arrive-intact compares
 * what the driver received through every entry point with and without nvtxcorr. */
#define NVTXCORR_ABI_cuLaunchKernel rdi, 6, 5
#define NVTXCORR_ABI_cuLaunchKernel_ptsz rdi, 6, 5
#define NVTXCORR_ABI_cuLaunchKernelEx rsi, 4, 0
#define NVTXCORR_ABI_cuLaunchKernelEx_ptsz rsi, 4, 0
#define NVTXCORR_ABI_cuLaunchCooperativeKernel rdi, 6, 4
#define NVTXCORR_ABI_cuLaunchCooperativeKernel_ptsz rdi, 6, 4
#define NVTXCORR_ABI_cuGraphLaunch rdi, 2, 0
#define NVTXCORR_ABI_cuGraphLaunch_ptsz rdi, 2, 0
#define NVTXCORR_ABI___cudaLaunchKernel rdi, 6, 2
#define NVTXCORR_ABI___cudaLaunchKernel_ptsz rdi, 6, 2
#define NVTXCORR_ABI_cudaLaunchKernel rdi, 6, 2
#define NVTXCORR_ABI_cudaLaunchKernel_ptsz rdi, 6, 2
#define NVTXCORR_ABI_cudaLaunchKernelExC rsi, 3, 0
#define NVTXCORR_ABI_cudaLaunchKernelExC_ptsz rsi, 3, 0
#define NVTXCORR_ABI_cudaLaunchCooperativeKernel rdi, 6, 2
#define NVTXCORR_ABI_cudaLaunchCooperativeKernel_ptsz rdi, 6, 2
#define NVTXCORR_ABI_cudaGraphLaunch rdi, 2, 0
#define NVTXCORR_ABI_cudaGraphLaunch_ptsz rdi, 2, 0

#define NVTXCORR_LAUNCH_BODY_NAME(sym) nvtxcorr_body_##sym
#define NVTXCORR_LAUNCH_BODY_ATTRS static __attribute__((used, noipa))
#define NVTXCORR_LAUNCH_STUB(R, sym, params, map, stream, grid)                                    \
    NVTXCORR_STUB_TRACE_FN(sym, params, stream, grid)                                              \
    NVTXCORR_LAUNCH_STUB_(R, sym, params, map, NVTXCORR_ABI_##sym)
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
/* The caller's arguments for a call from the stub's frame: the registers reloaded from their
 * save slots, and the stack words copied below them (after a word of padding when their count
 * is odd, so the call sees an aligned stack). */
#define NVTXCORR_STUB_ARGS(nreg, nstack)                                                           \
    "    .if " #nreg " > 4\n"                                                                      \
    "    movq -48(%%rbp), %%r9\n"                                                                  \
    "    movq -40(%%rbp), %%r8\n"                                                                  \
    "    .endif\n"                                                                                 \
    "    .if " #nreg " > 2\n"                                                                      \
    "    movq -32(%%rbp), %%rcx\n"                                                                 \
    "    movq -24(%%rbp), %%rdx\n"                                                                 \
    "    .endif\n"                                                                                 \
    "    movq -16(%%rbp), %%rsi\n"                                                                 \
    "    movq -8(%%rbp), %%rdi\n"                                                                  \
    "    .if " #nstack " & 1\n"                                                                    \
    "    subq $8, %%rsp\n"                                                                         \
    "    .endif\n"                                                                                 \
    "    .set .Lnvtxcorr_word, " #nstack "\n"                                                      \
    "    .rept " #nstack "\n"                                                                      \
    "    .set .Lnvtxcorr_word, .Lnvtxcorr_word - 1\n"                                              \
    "    pushq 16+8*.Lnvtxcorr_word(%%rbp)\n"                                                      \
    "    .endr\n"

/* The fast path's instructions, as one string, for the route it is (the stub's entry jumps
 * to it only in that mode, no capture open and the real function known: routes.c): the
 * depth is 0 (outermost; otherwise label 4, the nested test); the handle is the key of its
 * first probe's slot (nvtxcorr_map_hash, kept as a byte offset), whose value is a record with
 * a range (not NULL, bit 0 clear: rotated right by one, a tagged value turns negative and NULL
 * stays 0; the record is the rotated value doubled); and
 * `check`, the mode's own test of the record. Then: a frame, the argument registers saved (an
 * even count, so the calls below see an aligned stack), the depth 1 and this frame as the
 * outermost launch's (what nvtxcorr_launch_outermost stores), `begin` (the record in %r10 as
 * rotated), the registers reloaded from their save slots (which stay, so only an odd count of
 * stack words needs a word of padding), the stack words copied below them, the real call,
 * then `post` (the mode's end, which leaves the call's result in %eax), the depth lowered and
 * the result returned unchanged. The depth is lowered only after the end returns, as
 * nvtxcorr_launch_end does: a signal handler that launches while the tool's pop runs (holding
 * the tool's own lock, perhaps) must pass through, not push a range into the interrupted tool
 * (e2e.launches-from-signal-handler deadlocked under TSan, which runs handlers at such points,
 * when it was lowered first). The map's table is never NULL (NVTXCORR_MAP_EMPTY). */
#define NVTXCORR_STUB_FAST(sym, map, keyreg, nreg, nstack, check, begin, post)                     \
    "    movq nvtxcorr_thread@gottpoff(%%rip), %%r11\n"                                            \
    "    cmpl $0, %%fs:(%%r11)\n"                                                                  \
    "    jne 4f\n"                                                                                 \
    "    movq " #map "(%%rip), %%r10\n"                                                            \
    "    movq %%" #keyreg ", %%rax\n"                                                              \
    "    shrq $%c3, %%rax\n"                                                                       \
    "    imulq nvtxcorr_map_hash_mult(%%rip), %%rax\n"                                             \
    "    shrq $%c1, %%rax\n"                                                                       \
    "    andq 8(%%r10), %%rax\n"                                                                   \
    "    cmpq %%" #keyreg ", 32(%%r10,%%rax)\n"                                                    \
    "    jne nvtxcorr_body_" #sym "\n"                                                             \
    "    movq 40(%%r10,%%rax), %%r10\n"                                                            \
    "    rorq $1, %%r10\n"                                                                         \
    "    testq %%r10, %%r10\n"                                                                     \
    "    jle nvtxcorr_body_" #sym "\n"                                                             \
    check                                                                                          \
    "    pushq %%rbp\n"                                                                            \
    "    .cfi_adjust_cfa_offset 8\n"                                                               \
    "    .cfi_offset %%rbp, -16\n"                                                                 \
    "    movq %%rsp, %%rbp\n"                                                                      \
    "    .cfi_def_cfa_register %%rbp\n"                                                            \
    "    pushq %%rdi\n"                                                                            \
    "    pushq %%rsi\n"                                                                            \
    "    .if " #nreg " > 2\n"                                                                      \
    "    pushq %%rdx\n"                                                                            \
    "    pushq %%rcx\n"                                                                            \
    "    .endif\n"                                                                                 \
    "    .if " #nreg " > 4\n"                                                                      \
    "    pushq %%r8\n"                                                                             \
    "    pushq %%r9\n"                                                                             \
    "    .endif\n"                                                                                 \
    "    movl $1, %%fs:(%%r11)\n"                                                                  \
    "    movq %%rbp, %%fs:8(%%r11)\n"                                                              \
    begin                                                                                          \
    NVTXCORR_STUB_ARGS(nreg, nstack)                                                               \
    "    call *nvtxcorr_real_fn+%c0(%%rip)\n"                                                      \
    post                                                                                           \
    "    movq nvtxcorr_thread@gottpoff(%%rip), %%rcx\n"                                            \
    "    subl $1, %%fs:(%%rcx)\n"                                                                  \
    "    leave\n"                                                                                  \
    "    .cfi_def_cfa %%rsp, 8\n"                                                                  \
    "    .cfi_restore %%rbp\n"                                                                     \
    "    ret\n"

/* The stub is a naked function: GCC gives it its unwind entry (CFA = %rsp + 8 at entry) and
 * nothing else, and the directives above describe the one frame a fast path makes, so a
 * backtrace taken inside the real call (a debugger, nsys --cudabacktrace) still reaches the
 * caller. Its operands are constants only. The fast path is one template (NVTXCORR_STUB_FAST)
 * in three copies, each behind a hidden label its route names (nvtxcorr_stub_<mode>_<sym>,
 * with an end-branch instruction when the build marks indirect-branch targets): ACTIVE,
 * bracketing the call with the range by calling the NVTX tool's push and pop themselves
 * (nvtxcorr_tool_push, _pop, emit.c: NVTX's own functions would only load them and test them
 * again); PROFILE, bracketing it with profile mode's begin and end (nvtxcorr_stub_prof_begin,
 * _end, profile.c); and PROFILE while a trace is written, which also hands the launch to the
 * trace. Both PROFILE copies need the record's profile site made (its first launch in profile
 * mode goes to the C body, which makes it). */
#ifdef __CET__
#define NVTXCORR_STUB_ENDBR "    endbr64\n"
#else
#define NVTXCORR_STUB_ENDBR
#endif
#define NVTXCORR_STUB_LABEL(mode, sym)                                                             \
    "    .globl nvtxcorr_stub_" #mode "_" #sym "\n"                                                \
    "    .hidden nvtxcorr_stub_" #mode "_" #sym "\n"                                               \
    "nvtxcorr_stub_" #mode "_" #sym ":\n"                                                          \
    NVTXCORR_STUB_ENDBR
/* ACTIVE: the tool's push with the domain and the record's attributes, and its pop, the
 * result kept in the first save slot meanwhile. */
#define NVTXCORR_STUB_ACTIVE(sym, map, keyreg, nreg, nstack)                                       \
    NVTXCORR_STUB_FAST(sym, map, keyreg, nreg, nstack, "",                                         \
                       "    movq nvtxcorr_domain(%%rip), %%rdi\n"                                  \
                       "    leaq (%%r10,%%r10), %%rsi\n"                                           \
                       "    call *nvtxcorr_tool_push(%%rip)\n",                                    \
                       "    movl %%eax, -8(%%rbp)\n"                                               \
                       "    movq nvtxcorr_domain(%%rip), %%rdi\n"                                  \
                       "    call *nvtxcorr_tool_pop(%%rip)\n"                                      \
                       "    movl -8(%%rbp), %%eax\n")
/* The PROFILE copies' test of the record: its profile site is made (else the C body makes it). */
#define NVTXCORR_STUB_SITE_MADE(sym)                                                               \
    "    cmpq $0, %c2(%%r10,%%r10)\n"                                                              \
    "    je nvtxcorr_body_" #sym "\n"
#define NVTXCORR_STUB_PROF_BEGIN                                                                   \
    "    leaq (%%r10,%%r10), %%rdi\n"                                                              \
    "    call nvtxcorr_stub_prof_begin\n"
/* PROFILE, for a record whose site is made, no trace being written: profile mode's end gets
 * the call's result and gives it back. */
#define NVTXCORR_STUB_PROFILE(sym, map, keyreg, nreg, nstack)                                      \
    NVTXCORR_STUB_FAST(sym, map, keyreg, nreg, nstack,                                             \
                       NVTXCORR_STUB_SITE_MADE(sym), NVTXCORR_STUB_PROF_BEGIN,                    \
                       "    movl %%eax, %%edi\n"                                                   \
                       "    call nvtxcorr_stub_prof_end\n")
/* The same while a trace is written: the end gives the result back with bit 32 set when the
 * trace wants the launch (it may have stopped since); then the arguments are given once more
 * (the save slots are intact, the stack words copied again: the real function may have
 * written over its copies) to the entry point's trace function, which names the stream and
 * the grid as the C body does, and the result is asked back from profile mode. */
#define NVTXCORR_STUB_TRACE(sym, map, keyreg, nreg, nstack)                                        \
    NVTXCORR_STUB_FAST(sym, map, keyreg, nreg, nstack,                                             \
                       NVTXCORR_STUB_SITE_MADE(sym), NVTXCORR_STUB_PROF_BEGIN,                    \
                       "    movl %%eax, %%edi\n"                                                   \
                       "    call nvtxcorr_stub_trace_end\n"                                        \
                       "    btq $32, %%rax\n"                                                      \
                       "    jnc 8f\n"                                                              \
                       "    leaq -8*" #nreg "(%%rbp), %%rsp\n"                                     \
                       NVTXCORR_STUB_ARGS(nreg, nstack)                                            \
                       "    call nvtxcorr_trace_" #sym "\n"                                        \
                       "    call nvtxcorr_stub_prof_result\n"                                      \
                       "8:\n")
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
#define NVTXCORR_LAUNCH_STUB(R, sym, params, map, stream, grid) NVTXCORR_LOCAL_ALIAS(sym)
#endif

/* `pkind` names the launch's kind for profile mode; `grid` is "(x, y, z)", used only by
 * profile mode's trace. */
#define NVTXCORR_BODY_LAUNCH(R, NOTFOUND, sym, ptsz, params, args, slow, mapsym, key, stream,      \
                             pkind, grid)                                                          \
    NVTXCORR_LAUNCH_BODY_ATTRS R NVTXCORR_LAUNCH_BODY_NAME(sym) params                             \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        int mode = nvtxcorr_launch_mode();                                                         \
        if (NVTXCORR_UNLIKELY(mode != NVTXCORR_MODE_ACTIVE)) {                                     \
            if (mode != NVTXCORR_MODE_PROFILE) {                                                   \
                if (mode == NVTXCORR_MODE_INITIALISING) nvtxcorr_passed_while_starting();          \
                return real args;                                                                  \
            }                                                                                      \
            if (!nvtxcorr_launch_outermost()) {                                                    \
                nvtxcorr_thread.depth--;                                                           \
                return real args;                                                                  \
            }                                                                                      \
            NVTXCORR_PROFILE_LAUNCH(R, real args, pkind, slow, &mapsym, key, stream, ptsz, grid,   \
                                    #sym);                                                         \
        }                                                                                          \
        const nvtxcorr_label_t *pushed = nvtxcorr_launch_begin(slow, &mapsym, (const void *)(key), \
                                                               (const void *)(stream), ptsz);      \
        R r = real args;                                                                           \
        nvtxcorr_launch_end(pushed);                                                               \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LAUNCH_STUB(R, sym, params, mapsym, stream, grid)

/* A call that is not a launch: `after` runs once per outermost call, with the result r,
 * while the depth is still held, so anything an NVTX tool or the driver calls back into
 * from there passes through instead of re-entering our locks. */
#define NVTXCORR_BODY_AFTER(R, NOTFOUND, sym, params, args, after)                                 \
    NVTXCORR_EXPORT R sym params                                                                   \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        if (!nvtxcorr_active()) return real args;                                                  \
        int outer = nvtxcorr_enter();                                                              \
        R r = real args;                                                                           \
        if (outer) {                                                                               \
            after;                                                                                 \
        }                                                                                          \
        nvtxcorr_leave();                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

/* Name tracking and unloads act at any depth: cudart loads modules lazily from inside a
 * launch, and those names are the only ones an old driver gives. Both are idempotent. The
 * depth is still raised around them, as around every hook that takes our locks, so a signal
 * handler that launches while this thread is inside passes through instead of re-entering a
 * lock this thread holds. */
#define NVTXCORR_BODY_ALWAYS(R, NOTFOUND, sym, params, args, after)                                \
    NVTXCORR_EXPORT R sym params                                                                   \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        if (!nvtxcorr_active()) return real args;                                                  \
        (void)nvtxcorr_enter();                                                                    \
        R r = real args;                                                                           \
        after;                                                                                     \
        nvtxcorr_leave();                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

/* Destroy forgets the handle before the real call: once destroyed, the handle may be reused
 * by an instantiation on another thread, whose record must not be dropped. The depth is held
 * across both, as in every other body. */
#define NVTXCORR_BODY_BEFORE(R, NOTFOUND, sym, params, args, before)                               \
    NVTXCORR_EXPORT R sym params                                                                   \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NOTFOUND)                                                       \
        if (!nvtxcorr_active()) return real args;                                                  \
        if (nvtxcorr_enter()) {                                                                    \
            before;                                                                                \
        }                                                                                          \
        R r = real args;                                                                           \
        nvtxcorr_leave();                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

/* The kinds of hooks.def, written once for both layers. A file that includes this header
 * first defines its layer's result type and codes:
 *   NVTXCORR_HOOK_RESULT            CUresult / cudaError_t
 *   NVTXCORR_HOOK_OK, NVTXCORR_HOOK_NOTFOUND
 *   NVTXCORR_HOOK_CAPTURE_ENDED(r)  whether an end-capture call with result r ended the capture
 *                                   (an invalidated or unjoined capture has ended too)
 * and ends with hook_bodies_end.h, which undefines them and every NVTXCORR_HOOK_<kind>.
 * Handles are cast to the driver's types: the runtime's are the same objects. */
#define NVTXCORR_HOOK_LAUNCH_FN(sym, ptsz, params, args, f, s, grid)                               \
    NVTXCORR_BODY_LAUNCH(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, ptsz, params, args,    \
                         nvtxcorr_function_label_slow, nvtxcorr_function_labels, f, s,             \
                         NVTXCORR_PROFILE_FUNCTION, grid)
#define NVTXCORR_HOOK_LAUNCH_HOST(sym, ptsz, params, args, func, s, grid)                          \
    NVTXCORR_BODY_LAUNCH(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, ptsz, params, args,    \
                         nvtxcorr_host_label_slow, nvtxcorr_host_labels, func, s,                  \
                         NVTXCORR_PROFILE_HOST, grid)
#define NVTXCORR_HOOK_LAUNCH_GRAPH(sym, ptsz, params, args, e, s)                                  \
    NVTXCORR_BODY_LAUNCH(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, ptsz, params, args,    \
                         nvtxcorr_graph_label_slow, nvtxcorr_graph_labels, e, s,                   \
                         NVTXCORR_PROFILE_GRAPH, (0, 0, 0))
#define NVTXCORR_HOOK_INSTANTIATE(sym, ptsz, params, args, pe, g)                                  \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (r == NVTXCORR_HOOK_OK && (pe) && *(pe))                                \
                            nvtxcorr_graph_instantiated((CUgraphExec) * (pe), (CUgraph)(g)))
#define NVTXCORR_HOOK_EXEC_UPDATE(sym, ptsz, params, args, e, g)                                   \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (r == NVTXCORR_HOOK_OK)                                                 \
                            nvtxcorr_graph_updated((CUgraphExec)(e), (CUgraph)(g)))
#define NVTXCORR_HOOK_EXEC_DESTROY(sym, ptsz, params, args, e)                                     \
    NVTXCORR_BODY_BEFORE(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         nvtxcorr_graph_destroyed((CUgraphExec)(e)))
#define NVTXCORR_HOOK_CAPTURE_BEGIN(sym, ptsz, params, args, ...)                                  \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (r == NVTXCORR_HOOK_OK) nvtxcorr_capture_changed(+1))
#define NVTXCORR_HOOK_CAPTURE_END(sym, ptsz, params, args, ...)                                    \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        if (NVTXCORR_HOOK_CAPTURE_ENDED(r)) nvtxcorr_capture_changed(-1))
/* Driver only: kernel names for drivers older than cuFuncGetName (12.3). */
#define NVTXCORR_HOOK_TRACK_FUNCTION(sym, ptsz, params, args, pf, name)                            \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK && (pf) && *(pf))                               \
                             nvtxcorr_track_name(*(pf), name))
#define NVTXCORR_HOOK_TRACK_KERNEL(sym, ptsz, params, args, pk, name)                              \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK && (pk) && *(pk))                               \
                             nvtxcorr_track_name(*(pk), name))
#define NVTXCORR_HOOK_TRACK_KERNEL_FUNCTION(sym, ptsz, params, args, pf, k)                        \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK && (pf) && *(pf))                               \
                             nvtxcorr_track_alias(*(pf), k))
/* An unloaded module's handles may come back for other kernels: drop cached labels. */
#define NVTXCORR_HOOK_UNLOAD(sym, ptsz, params, args, ...)                                         \
    NVTXCORR_BODY_ALWAYS(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,          \
                         if (r == NVTXCORR_HOOK_OK) nvtxcorr_forget_functions())
/* Driver only: cuProfilerStart (start 1) and cuProfilerStop (0) open and close profile
 * mode's windows (profile.h); the real call is made first, whatever it returns. */
#define NVTXCORR_HOOK_PROFILER(sym, ptsz, params, args, start)                                     \
    NVTXCORR_BODY_AFTER(NVTXCORR_HOOK_RESULT, NVTXCORR_HOOK_NOTFOUND, sym, params, args,           \
                        nvtxcorr_profile_profiler_api(start))
/* The resolvers: the real one answers, and only what it returned is wrapped (procaddr.c). */
#define NVTXCORR_HOOK_PROC_ADDRESS(sym, ptsz, params, args, symbol, pfn, version, flags)           \
    NVTXCORR_EXPORT NVTXCORR_HOOK_RESULT sym params                                                \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NVTXCORR_HOOK_NOTFOUND)                                         \
        NVTXCORR_HOOK_RESULT r = real args;                                                        \
        if (r == NVTXCORR_HOOK_OK && (pfn))                                                        \
            *(pfn) = nvtxcorr_wrap_driver(symbol, version, flags, *(pfn));                         \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)
/* Runtime only. The runtime resolves through a driver cuGetProcAddress that is usually
 * already ours, so most answers arrive wrapped; the version of the plain form is the
 * runtime's own and unknown here (-1): only pointers already held in a slot are wrapped. */
#define NVTXCORR_HOOK_ENTRY_POINT(sym, ptsz, params, args, symbol, pfn, flags, version)            \
    NVTXCORR_EXPORT NVTXCORR_HOOK_RESULT sym params                                                \
    {                                                                                              \
        NVTXCORR_REAL_OR_FAIL(sym, NVTXCORR_HOOK_NOTFOUND)                                         \
        NVTXCORR_HOOK_RESULT r = real args;                                                        \
        if (r == NVTXCORR_HOOK_OK && (pfn) && *(pfn)) {                                            \
            int v = (version);                                                                     \
            *(pfn) = nvtxcorr_wrap_driver(                                                         \
                symbol, v, nvtxcorr_entry_point_flags(symbol, v, flags, ptsz, *(pfn)), *(pfn));    \
        }                                                                                          \
        return r;                                                                                  \
    }                                                                                              \
    NVTXCORR_LOCAL_ALIAS(sym)

#endif
