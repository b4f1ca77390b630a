/* The instructions of the x86-64 entry stubs' fast paths (entry_stubs.h): reloading the
 * caller's arguments, the probe of the handle map, and one path per route (ACTIVE, PROFILE,
 * TRACE), each one string of assembly. */
#ifndef NVTXCORR_ENTRY_STUBS_H
#error "entry_stub_paths.h is included by entry_stubs.h only"
#endif
#ifndef NVTXCORR_ENTRY_STUB_PATHS_H
#define NVTXCORR_ENTRY_STUB_PATHS_H

/* clang-format off */
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
/* clang-format on */

#endif
