/* The x86-64 entry stubs of the launch hooks (hook_bodies.h explains the scheme): the
 * assembly of each stub and its fast paths, the argument layout of each launch entry point,
 * and what the stubs assume of the core's structures. Elsewhere, or built with
 * NVTXCORR_NO_ENTRY_STUBS, the C body is the exported symbol itself. Part of hook_bodies.h,
 * which includes it after nvtxcorr.h and profile/profile.h. */
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

#endif
