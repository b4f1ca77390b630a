/* The dlsym override. Triton and others get driver functions with dlopen("libcuda.so.1") +
 * dlsym, and cudart gets its first one (cuGetProcAddress_v2) the same way, so dlsym has to
 * be interposed. For a hooked name the answer is wrapped (nvtxcorr_claim); every other name,
 * which is nearly all of a program's dlsym traffic, is answered by glibc unchanged.
 *
 * RTLD_NEXT is the hard part. glibc decides what "next" means from its caller's return
 * address, and inside an override that caller is the override: a library preloaded after
 * this one that asks for the next "puts" would be handed its own. So a call with RTLD_NEXT
 * must reach glibc's dlsym as a genuine tail call, with the original return address still on
 * the stack. C cannot promise a tail call (GCC 12 has no musttail), hence the few lines of
 * assembly below, on x86-64 and AArch64. Other architectures fall back to redoing the search
 * in C, after the caller's object in load order.
 *
 * The override is exported as dlsym@@GLIBC_2.34 and as the architecture's older dlsym
 * version, because programs bind to dlsym with a version (exports.map.in). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include "core/attributes.h"
#include "core/resolve.h"
#include "hooks.h"
/* Used by the assembly entry, hence not static. glibc's dlsym (nvtxcorr_real_dlsym_ptr, found
 * by nvtxcorr_real_dlsym_resolve) is core/resolve.c's. */
void *nvtxcorr_dlsym_lookup(void *handle, const char *name);

/* Every handle but RTLD_NEXT: glibc answers; a hooked name gets its hook. Never waits for
 * initialisation: library constructors call dlsym holding the loader lock, and initialisation
 * on another thread needs that lock to load the NVTX tool (e2e.startup-dlsym-in-constructor). */
NVTXCORR_NO_SANITIZE __attribute__((visibility("hidden"))) void *
nvtxcorr_dlsym_lookup(void *handle, const char *name)
{
    void *p = nvtxcorr_real_dlsym(handle, name);
    int id = p ? nvtxcorr_slot_of_symbol(name) : -1;
    return id < 0 ? p : nvtxcorr_claim_nowait((nvtxcorr_slot_id_t)id, p);
}

#if defined(__x86_64__)
/* if (handle != RTLD_NEXT) tail-call nvtxcorr_dlsym_lookup; else jump to glibc's dlsym,
 * resolving it first if needed (a normal call, then still a jump). RTLD_NEXT is -1. */
__asm__(".text\n"
        ".globl nvtxcorr_dlsym_entry\n"
        ".globl nvtxcorr_dlsym_compat\n"
        ".type nvtxcorr_dlsym_entry, @function\n"
        ".type nvtxcorr_dlsym_compat, @function\n"
        "nvtxcorr_dlsym_entry:\n"
        "nvtxcorr_dlsym_compat:\n"
        "    cmpq $-1, %rdi\n"
        "    jne nvtxcorr_dlsym_lookup\n"
        "    movq nvtxcorr_real_dlsym_ptr(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jnz 1f\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n" /* keep the stack 16-byte aligned for the call */
        "    call nvtxcorr_real_dlsym_resolve\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 2f\n"
        "1:  jmp *%rax\n"
        "2:  ret\n"
        ".size nvtxcorr_dlsym_entry, .-nvtxcorr_dlsym_entry\n"
        ".size nvtxcorr_dlsym_compat, .-nvtxcorr_dlsym_compat\n");
__asm__(".symver nvtxcorr_dlsym_entry, dlsym@@GLIBC_2.34");
__asm__(".symver nvtxcorr_dlsym_compat, dlsym@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl nvtxcorr_dlsym_entry\n"
        ".globl nvtxcorr_dlsym_compat\n"
        ".type nvtxcorr_dlsym_entry, %function\n"
        ".type nvtxcorr_dlsym_compat, %function\n"
        "nvtxcorr_dlsym_entry:\n"
        "nvtxcorr_dlsym_compat:\n"
        "    cmn x0, #1\n"
        "    b.ne nvtxcorr_dlsym_lookup\n"
        "    adrp x16, nvtxcorr_real_dlsym_ptr\n"
        "    ldr x16, [x16, :lo12:nvtxcorr_real_dlsym_ptr]\n"
        "    cbnz x16, 1f\n"
        "    stp x29, x30, [sp, #-32]!\n"
        "    stp x0, x1, [sp, #16]\n"
        "    bl nvtxcorr_real_dlsym_resolve\n"
        "    mov x16, x0\n"
        "    ldp x0, x1, [sp, #16]\n"
        "    ldp x29, x30, [sp], #32\n"
        "    cbnz x16, 1f\n"
        "    mov x0, #0\n"
        "    ret\n"
        "1:  br x16\n"
        ".size nvtxcorr_dlsym_entry, .-nvtxcorr_dlsym_entry\n"
        ".size nvtxcorr_dlsym_compat, .-nvtxcorr_dlsym_compat\n");
__asm__(".symver nvtxcorr_dlsym_entry, dlsym@@GLIBC_2.34");
__asm__(".symver nvtxcorr_dlsym_compat, dlsym@GLIBC_2.17");
#else
/* No tail call available: search again from the caller's object, in load order, one object
 * at a time. Approximates glibc for objects loaded at start-up and preloads. */
static void *next_after(const void *caller, const char *name)
{
    struct link_map *m = nvtxcorr_object_of(caller);
    if (m == NULL) return nvtxcorr_real_dlsym(RTLD_NEXT, name);
    for (m = m->l_next; m; m = m->l_next) {
        void *p = nvtxcorr_lookup_in(m, name);
        if (p) return p;
    }
    return NULL;
}

void *nvtxcorr_dlsym_entry(void *handle, const char *name);
void *nvtxcorr_dlsym_entry(void *handle, const char *name)
{
    if (handle == RTLD_NEXT) return next_after(__builtin_return_address(0), name);
    return nvtxcorr_dlsym_lookup(handle, name);
}
__asm__(".symver nvtxcorr_dlsym_entry, dlsym@@GLIBC_2.34");
#endif
