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

#include "nvtxcorr.h"

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
#else

/* Enough for the demangler on the longest name we pass it (1023 bytes: about 70 KiB), with
 * room for a signal handler that interrupts the slow path. */
enum { SLOW_STACK_SIZE = 256 * 1024 };

typedef struct slow_stack {
    ucontext_t caller, callee;
    void (*fn)(void *);
    void *arg;
} slow_stack_t;

static __thread slow_stack_t *self __attribute__((tls_model("initial-exec")));
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

__attribute__((noinline)) static slow_stack_t *stack_of_this_thread(void)
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

static void trampoline(void)
{
    self->fn(self->arg);
}

void nvtxcorr_on_slow_stack(void (*fn)(void *), void *arg)
{
    slow_stack_t *s = running ? NULL : stack_of_this_thread();
    if (s == NULL || getcontext(&s->callee) != 0) {
        fn(arg);
        return;
    }
    /* The control block sits at the low end of the mapping, the stack grows down from the
     * top towards it. */
    s->callee.uc_stack.ss_sp = (char *)s + sizeof *s;
    s->callee.uc_stack.ss_size = SLOW_STACK_SIZE - sizeof *s;
    s->callee.uc_link = &s->caller;
    s->fn = fn;
    s->arg = arg;
    makecontext(&s->callee, trampoline, 0);
    running = 1;
    if (swapcontext(&s->caller, &s->callee) != 0) fn(arg);
    running = 0;
}
#endif
