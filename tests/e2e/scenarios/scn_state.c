/* Scenario program for the library's process-state guarantees
 * (tests/e2e/test_reliability_state.py). A pure C driver-API program linked with the fake
 * libcuda.so.1:
 *
 *   forkstorm N   4 threads make first launches of distinct kernels and instantiate, launch
 *                 and destroy graphs while the main thread forks N times; each child
 *                 instantiates, launches and destroys a graph, makes the first launch of a
 *                 kernel and _exits. Children still running after 3 s are killed and
 *                 counted (the storm stops at 5): prints "forks N hung H failed F".
 *   stack BYTES   a thread whose stack is BYTES long makes the first launch of a kernel with
 *                 a long mangled C++ name and instantiates a graph of it; then, on a thread
 *                 with a 1 MiB stack, the stack each call uses below its caller is measured
 *                 by painting: "stack_used_first_launch N", "stack_used_seen_launch N",
 *                 "stack_used_instantiate N".
 *   signals N     N iterations of launch, instantiate, launch graph, destroy on the main
 *                 thread while SIGALRM fires every 50 us; the handler launches an already-seen
 *                 kernel, and, when it interrupts cuGraphExecDestroy, a never-seen one (which
 *                 must pass through). Prints "handler_launches N".
 *
 * It prints "rc <what> <CUresult>" for failed calls only. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scn_common.h"

extern int fakecuda_make_function(const char *mangled, CUfunction *out);

static CUstream stream;

static int launch(CUfunction f)
{
    return (int)cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
}

/* ---- forkstorm ---- */

static atomic_int stop;
static CUfunction *child_kernels;
static CUgraph child_graph;

static void *churn_thread(void *arg)
{
    long id = (long)arg;
    CUfunction f0 = scn_make_function("_Z10churn_basei%ld", id);
    CUgraph g = scn_graph_of(f0);
    for (long i = 0; !atomic_load(&stop); i++) {
        /* Distinct kernels: each launch is a first launch (names, matching, registration). */
        CUfunction f = scn_make_function("_ZN6worker6kernelILi%ldEEEvPfi", id * 10000000 + i);
        if (launch(f) != 0 || scn_graph_cycle(g, stream) != 0) {
            printf("rc churn-thread 1\n");
            return NULL;
        }
    }
    return NULL;
}

static int forkstorm(int n)
{
    child_kernels = calloc((size_t)n, sizeof *child_kernels);
    for (int i = 0; i < n; i++) /* made before the threads start: the fake's arena lock */
        child_kernels[i] = scn_make_function("_Z12child_kerneli%ld", i);
    child_graph = scn_graph_of(scn_make_function("_Z11child_graphv%ld", 0));
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn_thread, (void *)i);
    usleep(20000);
    int hung = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            break;
        }
        if (pid == 0) {
            int r = scn_graph_cycle(child_graph, stream);
            if (r == 0) r = launch(child_kernels[i]);
            _exit(r == 0 ? 0 : 1);
        }
        int status = 0, done = 0;
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                done = 1;
                break;
            }
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec >= 3) break;
            usleep(1000);
        }
        if (!done) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            if (++hung == 5) { /* enough to know; the rest would only take time */
                n = i + 1;
                break;
            }
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed++;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("forks %d hung %d failed %d\n", n, hung, failed);
    return 0;
}

/* ---- stack ---- */

/* A CUTLASS-like kernel: 489 bytes mangled, about 29 KB demangled. */
static const char *long_name =
    "_ZN7cutlass6KernelINS_4gemm13GemmUniversalINS1_3MmaINS3_INS1_5ShapeILi128ELi128ELi32EEEN"
    "S1_5ArrayINS1_6half_tELi8ELb1EEESt5tupleIJNS1_8RowMajorENS1_11ColumnMajorENS4_ILi64ELi64"
    "ELi32EEEEESt3mapIiS9_IJNS4_ILi16ELi8ELi16EEENS6_IfLi4ELb1EEEEESt4lessIiESaISt4pairIKiSH_"
    "EEEEENS1_8EpilogueIJSP_NS4_ILi1ELi8ELi1EEES9_IJSP_NS6_IS7_Li8ELb0EEESt8functionIFiSP_NS4"
    "_ILi2ELi2ELi2EEEEEEENS3_ISP_SP_NS4_ILi3ELi3ELi3EEESA_EEEEESP_S10_EENSQ_IJS10_SP_S10_EEES"
    "9_IJS10_SP_NS4_ILi9ELi9ELi9EEEEEEEEEvNT_6ParamsE";

static CUfunction stack_kernel;

static void *first_launch_thread(void *arg)
{
    (void)arg;
    CUfunction f;
    /* A new handle each time: its first launch takes the slow path. */
    if (fakecuda_make_function(long_name, &f) != 0) return (void *)1;
    stack_kernel = f;
    int r = launch(f);
    if (r == 0) {
        CUgraph g = scn_graph_of(f);
        r = scn_graph_cycle(g, stream);
        cuGraphDestroy(g);
    }
    return (void *)(long)r;
}

/* The bytes of stack op() used below this function's frame: the region below is painted
 * first, then scanned for the deepest byte that changed. */
static unsigned char *stack_low;

static unsigned char *stack_pointer(void)
{
    unsigned char *sp;
#if defined(__x86_64__)
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    __asm__ volatile("mov %0, sp" : "=r"(sp));
#else
    sp = (unsigned char *)__builtin_frame_address(0) - 512;
#endif
    return sp;
}

__attribute__((noinline)) static long measure(int (*op)(void), int *rc)
{
    unsigned char *sp = stack_pointer();
    /* Painted by hand, not memset, which would run in the region it paints. */
    for (volatile unsigned char *p = stack_low; p < sp - 128; p++)
        *p = 0xA5;
    *rc = op();
    unsigned char *p = stack_low;
    while (p < sp - 128 && *p == 0xA5)
        p++;
    return (long)(sp - p);
}

static CUfunction measured;

static int op_first_launch(void)
{
    if (fakecuda_make_function(long_name, &measured) != 0) return 1;
    return launch(measured);
}

static int op_seen_launch(void)
{
    return launch(measured);
}

static int op_instantiate(void)
{
    CUgraph g = scn_graph_of(measured);
    CUgraphExec e;
    int r = (int)cuGraphInstantiateWithFlags(&e, g, 0);
    if (r == 0) r = (int)cuGraphExecDestroy(e);
    return r;
}

static void *measuring_thread(void *arg)
{
    int rc[3];
    stack_low = arg;
    cuStreamQuery(stream); /* not hooked: the fake's per-thread block, malloc's thread cache */
    free(malloc(64));
    long first = measure(op_first_launch, &rc[0]);
    long seen = measure(op_seen_launch, &rc[1]);
    long inst = measure(op_instantiate, &rc[2]);
    printf("stack_used_first_launch %ld rc %d\n", first, rc[0]);
    printf("stack_used_seen_launch %ld rc %d\n", seen, rc[1]);
    printf("stack_used_instantiate %ld rc %d\n", inst, rc[2]);
    return NULL;
}

static int stack(long bytes)
{
    /* A first launch on a thread with a tiny stack: before, this overflowed it. */
    pthread_attr_t a;
    pthread_t t;
    void *ret;
    pthread_attr_init(&a);
    if (bytes < PTHREAD_STACK_MIN) bytes = PTHREAD_STACK_MIN;
    if (pthread_attr_setstacksize(&a, (size_t)bytes)) return 2;
    if (pthread_create(&t, &a, first_launch_thread, NULL)) return 2;
    pthread_join(t, &ret);
    printf("small_stack %ld rc %ld\n", bytes, (long)ret);
    /* Then measured on a 1 MiB stack of our own. */
    size_t size = 1 << 20;
    void *mem = NULL;
    if (posix_memalign(&mem, 65536, size)) return 2;
    pthread_attr_init(&a);
    pthread_attr_setstack(&a, mem, size);
    if (pthread_create(&t, &a, measuring_thread, mem)) return 2;
    pthread_join(t, NULL);
    return 0;
}

/* ---- signals ---- */

static CUfunction seen, *unseen;
static volatile sig_atomic_t in_destroy;
static atomic_long handler_launches, handler_failures, next_unseen, unseen_count;

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    if (launch(seen) != 0) atomic_fetch_add(&handler_failures, 1);
    atomic_fetch_add(&handler_launches, 1);
    if (in_destroy) {
        long i = atomic_fetch_add(&next_unseen, 1);
        if (i < atomic_load(&unseen_count) && launch(unseen[i]) != 0)
            atomic_fetch_add(&handler_failures, 1);
    }
    errno = saved;
}

static int signals(int n)
{
    seen = scn_make_function("seen_kernel_%ld", 0);
    launch(seen);
    atomic_store(&unseen_count, 100000);
    unseen = calloc(100000, sizeof *unseen);
    for (long i = 0; i < 100000; i++)
        unseen[i] = scn_make_function("unseen_kernel_%ld", i);
    CUfunction body = scn_make_function("main_body_%ld", 0);
    CUgraph g = scn_graph_of(body);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        CUgraphExec e;
        bad |= launch(body);
        bad |= (int)cuGraphInstantiateWithFlags(&e, g, 0);
        bad |= (int)cuGraphLaunch(e, stream);
        in_destroy = 1;
        bad |= (int)cuGraphExecDestroy(e);
        in_destroy = 0;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    if (bad) printf("rc main-loop %d\n", bad);
    if (atomic_load(&handler_failures)) printf("rc handler %ld\n", atomic_load(&handler_failures));
    printf("handler_launches %ld unseen_launches %ld\n", atomic_load(&handler_launches),
           atomic_load(&next_unseen));
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    long arg = argc > 2 ? atol(argv[2]) : 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    stream = scn_context();
    if (!strcmp(mode, "forkstorm")) return forkstorm(arg ? (int)arg : 300);
    if (!strcmp(mode, "stack")) return stack(arg);
    if (!strcmp(mode, "signals")) return signals(arg ? (int)arg : 20000);
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
