/* The stack the slow paths run on. A hooked call can arrive on any thread, including one the
 * program made with a 16 KiB stack (PTHREAD_STACK_MIN), and the work done once per distinct
 * kernel or graph is deep: __cxa_demangle keeps arrays proportional to the name on the stack,
 * glibc's fnmatch and regexec use alloca, and the NVTX tool and the driver are called from
 * there. So that work runs on a private stack of SLOW_STACK_SIZE bytes per thread, mapped on
 * the thread's first slow path (untouched pages cost no memory) and unmapped when the thread
 * exits; the caller's stack only holds the hook's frame (docs/design.md, "Stack use").
 *
 * makecontext/swapcontext are used because they are in glibc for every architecture; the
 * signal-mask save and restore they do (two system calls) is paid once per distinct kernel.
 * If the stack cannot be mapped the work runs where it is, as it always did. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>
#include "slowstack.h"
#include "state.h"
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NVTXCORR_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(NVTXCORR_ASAN)
/* ASan does not follow swapcontext: it warns on stderr and may report false positives. The
 * sanitized build runs the slow paths where they are (e2e.sanitized skips the stack tests). */
void nvtxcorr_on_slow_stack(void (*fn)(void *), void *arg)
{
    fn(arg);
}
void nvtxcorr_on_fresh_stack(size_t size, void (*fn)(void *), void *arg)
{
    (void)size;
    fn(arg);
}
#else

/* Enough for the demangler on the longest name we pass it (1023 bytes: about 70 KiB), with
 * room for a signal handler that interrupts the slow path. */
enum { SLOW_STACK_SIZE = 256 * 1024, GUARD = 64 * 1024 };

/* The control block of a call on another stack. It sits at the low end of the stack's
 * mapping, and the stack grows down from the top towards it. */
typedef struct stack_call {
    ucontext_t caller, callee;
    void (*fn)(void *);
    void *arg;
} stack_call_t;

static __thread stack_call_t *current __attribute__((tls_model("initial-exec")));

static void trampoline(void)
{
    current->fn(current->arg);
}

/* Runs fn(arg) on the `size` bytes that start at c (control block included): 0, or -1 when
 * the switch failed and fn did not run. */
static int call_on(stack_call_t *c, size_t size, void (*fn)(void *), void *arg)
{
    if (getcontext(&c->callee) != 0) return -1;
    c->callee.uc_stack.ss_sp = (char *)c + sizeof *c;
    c->callee.uc_stack.ss_size = size - sizeof *c;
    c->callee.uc_link = &c->caller;
    c->fn = fn;
    c->arg = arg;
    makecontext(&c->callee, trampoline, 0);
    stack_call_t *outer = current;
    current = c;
    /* Frames on another stack cannot be compared with the thread's own: while nvtxcorr works
     * there, any launch (from a signal handler that interrupted it) counts as nested, so it
     * passes through (nvtxcorr_launch_outermost). */
    uintptr_t outer_sp = nvtxcorr_thread.outer_sp;
    nvtxcorr_thread.outer_sp = UINTPTR_MAX;
    int r = swapcontext(&c->caller, &c->callee);
    nvtxcorr_thread.outer_sp = outer_sp;
    current = outer;
    return r == 0 ? 0 : -1;
}

/* ---- the per-thread slow-path stack ---- */
static __thread stack_call_t *self __attribute__((tls_model("initial-exec")));
static __thread int running __attribute__((tls_model("initial-exec")));
static pthread_key_t key;
static int have_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* The key's destructor, at thread exit. Another destructor that runs after it and launches a
 * new kernel must not find the unmapped stack: it maps a fresh one (glibc calls destructors
 * again for keys set meanwhile). */
static void unmap(void *stack)
{
    if (self == stack) self = NULL;
    munmap(stack, SLOW_STACK_SIZE);
}

static void make_key(void)
{
    have_key = pthread_key_create(&key, unmap) == 0;
}

__attribute__((noinline)) static stack_call_t *stack_of_this_thread(void)
{
    if (self) return self;
    pthread_once(&key_once, make_key);
    if (!have_key) return NULL; /* could never be unmapped: a leak per thread */
    void *p = mmap(NULL, SLOW_STACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (pthread_setspecific(key, p) != 0) {
        munmap(p, SLOW_STACK_SIZE);
        return NULL;
    }
    return self = p;
}

void nvtxcorr_on_slow_stack(void (*fn)(void *), void *arg)
{
    stack_call_t *s = running ? NULL : stack_of_this_thread();
    if (s == NULL) {
        fn(arg);
        return;
    }
    running = 1;
    int r = call_on(s, SLOW_STACK_SIZE, fn, arg);
    running = 0;
    if (r != 0) fn(arg);
}

/* ---- a one-off stack ---- */
void nvtxcorr_on_fresh_stack(size_t size, void (*fn)(void *), void *arg)
{
    char *p = mmap(NULL, GUARD + size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) {
        fn(arg);
        return;
    }
    mprotect(p, GUARD, PROT_NONE); /* an overflow faults instead of writing below the mapping */
    if (call_on((stack_call_t *)(p + GUARD), size, fn, arg) != 0) fn(arg);
    munmap(p, GUARD + size);
}
#endif
