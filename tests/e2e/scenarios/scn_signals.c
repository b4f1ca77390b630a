/* Scenario program for signals and exit (tests/e2e/test_reliability_signals.py). A pure C
 * driver-API program linked with the fake libcuda.so.1. The trial modes run each trial in a
 * child process (this program again, exec'd, so that CUPTI starts in it) and count the
 * children still alive 30 s after their signal as hung (the exit path's own bounded waits add
 * up to about 9 s: CUPTI's flush 3 s, another thread's summary 5 s; a loaded two-core machine
 * stretches them, and a deadlock is forever):
 *
 *   exit-in-handler N  N children; each installs a SIGTERM handler that calls exit(3) and an
 *                      atexit handler that unloads a module (as cudart's unregisters its fat
 *                      binaries), then loops: graph instantiate, launch, destroy, the first
 *                      launch of a new kernel (made before the loop), a known launch. Once
 *                      it is in the loop, the parent waits 0-1 ms and sends SIGTERM. A child
 *                      that exits with 3 is fine. Prints "trials N hung H wrong W". With
 *                      SCN_ATEXIT_LAUNCH=1 the atexit handler also launches add1 after the
 *                      unload (a program's clean-up that runs kernels).
 *
 *   fresh-thread N     N children; each launches add1 on its main thread, then starts a thread
 *                      that has never launched and loops malloc/free; SIGUSR1 (blocked on
 *                      every other thread) lands on it, and its handler launches add1 (a
 *                      known kernel) and lets the thread end. A child that exits with 0 is
 *                      fine. Prints "trials N hung H wrong W".
 *
 *   chain KIND         add1 x5, then a SIGTERM handler that saves the previous disposition and
 *                      chains to it, then SIGTERM to itself; after the handler, a shutdown:
 *                      flash x3, "shutdown done", return 0. The handler prints "handler ran",
 *                      chains, prints "handler done". KIND says how it chains:
 *                        call     calls the previous handler if it is a function (sigaction)
 *                        reraise  also, if it was SIG_DFL, restores it and re-raises
 *                        signal   as reraise, with signal() instead of sigaction()
 *                        sysv     as call, installed with sysv_signal() (not interposed)
 *
 *   longjmp            add1 x1; then flash x1, inside which (the fake driver's activity hook,
 *                      on the launching thread) SIGUSR2 is raised, whose handler siglongjmps
 *                      out of the launch; then triton x3 and a graph launch x2 from the same
 *                      frame. Prints "jumped".
 *
 *   starting N         a second thread makes the process's first launch, which initialises
 *                      nvtxcorr (held open by a slow NVTX tool, NVTXREC_INIT_SLEEP_MS); 100 ms
 *                      later the main thread launches a kernel of its own N times, then joins
 *                      it.
 *
 * It prints "rc <what> <CUresult>" for failed calls only. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scn_common.h"

/* The fake driver's side channels (tests/fakes/fakecuda.h). */
extern int fakecuda_make_function(const char *mangled, CUfunction *out);
typedef struct fakecuda_op fakecuda_op_t;
extern void fakecuda_set_activity_hook(void (*fn)(const fakecuda_op_t *ops, size_t n));

static CUstream stream;
static CUfunction add1, flash, triton;
static const char *self;

static void say(const char *s);

static const char spare_image[] = "FAKEIMAGE\n_Z5sparev\n";

static int launch(CUfunction f)
{
    return (int)cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
}

static void setup(void)
{
    stream = scn_context();
    scn_load_kernels(&add1, &flash, &triton);
}

/* ---- trials: one child per trial ---- */

typedef struct trial {
    pid_t pid;
    struct timespec signalled;
} trial_t;

static double since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* Starts `child_mode` with the write end of a pipe; returns its pid once it wrote "r"
 * (ready: in its loop), or -1. */
static pid_t start_child(const char *child_mode)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", fds[1]);
        execl(self, self, child_mode, fd, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    struct pollfd p = {fds[0], POLLIN, 0};
    char c = 0;
    int ready = pid > 0 && poll(&p, 1, 20000) == 1 && read(fds[0], &c, 1) == 1 && c == 'r';
    close(fds[0]);
    if (!ready && pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

/* What a hung child's threads are doing, before it is killed: each thread's state, kernel
 * wait channel and system call (number and arguments: a futex's address), so a rare hang in a
 * loaded run says where it waits. */
static void describe_hung(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char line[256] = "", wchan[64] = "", sys[256] = "";
        const char *names[] = {"stat", "wchan", "syscall"};
        char *bufs[] = {line, wchan, sys};
        size_t sizes[] = {sizeof line, sizeof wchan, sizeof sys};
        for (int k = 0; k < 3; k++) {
            char f[128];
            snprintf(f, sizeof f, "/proc/%d/task/%s/%s", (int)pid, e->d_name, names[k]);
            FILE *fp = fopen(f, "r");
            if (fp == NULL) continue;
            if (fgets(bufs[k], (int)sizes[k], fp) == NULL) bufs[k][0] = '\0';
            fclose(fp);
            bufs[k][strcspn(bufs[k], "\n")] = '\0';
        }
        printf("hung child %d thread %s: stat %.80s | wchan %s | syscall %s\n", (int)pid, e->d_name,
               line, wchan, sys);
    }
    closedir(d);
}

/* Waits for pid up to `limit` seconds after *t; returns its status, or -1 when it is still
 * running then (it is described and killed). */
static int wait_bounded(pid_t pid, const struct timespec *t, double limit)
{
    int status;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) return status;
        if (w < 0 && errno != EINTR) return -2;
        if (since(t) > limit) break;
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    describe_hung(pid);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* N trials of child_mode, each sent `sig` 0-1 ms after it is ready; a child is fine when it
 * exits with `code` (or, code < 0, dies of signal -code). Stops after 3 hung children: enough
 * to know, and the rest would only take time. */
static int trials(const char *child_mode, int n, int sig, int code)
{
    int hung = 0, wrong = 0, done = 0;
    unsigned seed = 12345;
    for (; done < n && hung < 3; done++) {
        pid_t pid = start_child(child_mode);
        if (pid < 0) {
            wrong++;
            continue;
        }
        seed = seed * 1103515245u + 12345u;
        struct timespec delay = {0, (long)((seed >> 8) % 1000) * 1000}, at;
        nanosleep(&delay, NULL);
        kill(pid, sig);
        clock_gettime(CLOCK_MONOTONIC, &at);
        int status = wait_bounded(pid, &at, 30.0);
        if (status == -1)
            hung++;
        else if (code >= 0 ? !WIFEXITED(status) || WEXITSTATUS(status) != code
                           : !WIFSIGNALED(status) || WTERMSIG(status) != -code) {
            if (wrong++ < 3) printf("trial %d: status 0x%x\n", done, (unsigned)status);
        }
    }
    printf("trials %d hung %d wrong %d\n", done, hung, wrong);
    return 0;
}

static void ready(const char *fd)
{
    int f = atoi(fd);
    if (write(f, "r", 1) != 1) _exit(5);
    close(f);
}

/* ---- exit-in-handler ---- */

static CUmodule spare;

static void exit_from_handler(int sig)
{
    (void)sig;
    exit(3);
}

static void unload_at_exit(void)
{
    cuModuleUnload(spare);
    if (getenv("SCN_ATEXIT_LAUNCH")) launch(add1);
}

static int exit_child(const char *fd)
{
    /* The fake driver appends its counters with stdio at exit: exit() from a handler that
     * interrupted malloc would then fail in the fake, not in nvtxcorr. */
    unsetenv("FAKECUDA_COUNTS");
    setup();
    cuModuleLoadData(&spare, spare_image);
    atexit(unload_at_exit);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = exit_from_handler;
    sigaction(SIGTERM, &sa, NULL);
    CUgraph g = scn_graph_of(add1);
    scn_graph_cycle(g, stream);
    /* Every hooked entry point the exit path calls has been called once: resolving one pins
     * its library (dlopen), whose locks are not what this tests (a handler that interrupts
     * dlclose under TSan waits for TSan's own). */
    CUmodule once;
    cuModuleLoadData(&once, spare_image);
    cuModuleUnload(once);
    /* The new kernels the loop launches, made now: the fake makes them in an arena it grows
     * with malloc, and a handler that calls exit() after interrupting the program's own malloc
     * deadlocks in anything at exit that allocates (glibc's arena lock), with nvtxcorr or
     * without it: not what this tests. Caught once in about 500 trials under load, in the
     * first iteration's malloc. */
    enum { FRESH = 20000 };
    static CUfunction fresh[FRESH];
    for (long i = 0; i < FRESH; i++)
        fresh[i] = scn_make_function("_Z5freshILi%ldEEvv", i);
    ready(fd);
    for (long i = 0;; i++) {
        int r = scn_graph_cycle(g, stream);
        r |= launch(fresh[i % FRESH]);
        r |= launch(add1);
        if (r) printf("rc loop %d\n", r);
    }
}

/* ---- fresh-thread ---- */

static volatile sig_atomic_t handled, handler_failed;

static void launch_from_handler(int sig)
{
    (void)sig;
    int saved = errno;
    if (launch(add1) != 0) handler_failed = 1;
    handled = 1;
    errno = saved;
}

static void *allocating_thread(void *arg)
{
    (void)arg;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    /* The fake driver makes its own per-thread state (with calloc) at a thread's first call:
     * made now, by a call nvtxcorr does not hook, so that only nvtxcorr's first sight of the
     * thread happens in the handler. */
    CUcontext ctx;
    cuCtxGetCurrent(&ctx);
    pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
    void *keep[64] = {0};
    for (unsigned i = 0; !handled; i++) { /* mostly inside malloc and free */
        free(keep[i % 64]);
        keep[i % 64] = malloc(16 + (i * 7919u) % 4096);
    }
    for (int i = 0; i < 64; i++)
        free(keep[i]);
    return NULL;
}

static int fresh_child(const char *fd)
{
    unsetenv("FAKECUDA_COUNTS"); /* as in exit_child */
    setup();
    launch(add1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = launch_from_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* only the new thread takes it */
    pthread_t t;
    if (pthread_create(&t, NULL, allocating_thread, NULL) != 0) return 7;
    ready(fd);
    pthread_join(t, NULL);
    return handler_failed ? 8 : 0;
}

/* ---- chain ---- */

static struct sigaction previous;
static const char *chain_kind;

static void say(const char *s)
{
    if (write(STDOUT_FILENO, s, strlen(s)) < 0) _exit(6);
}

static void chaining_handler(int sig)
{
    say("handler ran\n");
    int reraise = strcmp(chain_kind, "call") && strcmp(chain_kind, "sysv");
    if (previous.sa_handler == SIG_DFL && reraise) {
        signal(sig, SIG_DFL);
        raise(sig); /* pending until this handler returns */
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
    }
    say("handler done\n");
}

static int chain(const char *kind)
{
    chain_kind = kind;
    setup();
    for (int i = 0; i < 5; i++)
        launch(add1);
    if (!strcmp(kind, "signal")) {
        previous.sa_handler = signal(SIGTERM, chaining_handler);
    } else if (!strcmp(kind, "sysv")) {
        previous.sa_handler = sysv_signal(SIGTERM, chaining_handler);
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = chaining_handler;
        sigaction(SIGTERM, &sa, &previous);
    }
    printf("previous %s\n", previous.sa_handler == SIG_DFL ? "default" : "a handler");
    raise(SIGTERM);
    for (int i = 0; i < 3; i++)
        launch(flash);
    printf("shutdown done\n");
    return 0;
}

/* ---- longjmp ---- */

static sigjmp_buf jump_back;
static volatile sig_atomic_t jump_armed;

static void jump_out(int sig)
{
    (void)sig;
    siglongjmp(jump_back, 1);
}

static void inside_launch(const fakecuda_op_t *ops, size_t n)
{
    (void)ops, (void)n;
    if (jump_armed) {
        jump_armed = 0;
        raise(SIGUSR2); /* taken here, inside the hooked launch */
    }
}

static int long_jump(void)
{
    setup();
    launch(add1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = jump_out;
    sigaction(SIGUSR2, &sa, NULL);
    fakecuda_set_activity_hook(inside_launch);
    CUgraph g = scn_graph_of(add1);
    CUgraphExec e;
    cuGraphInstantiateWithFlags(&e, g, 0);
    if (sigsetjmp(jump_back, 1) == 0) {
        jump_armed = 1;
        launch(flash);
        printf("not jumped\n");
    } else {
        printf("jumped\n");
    }
    for (int i = 0; i < 3; i++)
        launch(triton);
    for (int i = 0; i < 2; i++)
        cuGraphLaunch(e, stream);
    return 0;
}

/* ---- starting ---- */

static void *first_launch(void *arg)
{
    (void)arg;
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    scn_load_kernels(&add1, &flash, &triton); /* the first hooked call: initialises */
    if (launch(flash) != 0) printf("rc first-launch 1\n");
    return NULL;
}

static int starting(int n)
{
    stream = scn_context(); /* no hooked call */
    CUfunction f = scn_make_function("_Z5earlyv%ld", 0);
    pthread_t t;
    pthread_create(&t, NULL, first_launch, NULL);
    struct timespec ms100 = {0, 100 * 1000 * 1000};
    nanosleep(&ms100, NULL);
    for (int i = 0; i < n; i++)
        if (launch(f) != 0) printf("rc launch 1\n");
    pthread_join(t, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : "";
    self = argv[0];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "exit-in-handler")) return trials("exit-child", atoi(arg), SIGTERM, 3);
    if (!strcmp(mode, "exit-child")) return exit_child(arg);
    if (!strcmp(mode, "chain")) return chain(arg);
    if (!strcmp(mode, "longjmp")) return long_jump();
    if (!strcmp(mode, "starting")) return starting(atoi(arg));
    if (!strcmp(mode, "fresh-thread")) return trials("fresh-child", atoi(arg), SIGUSR1, 0);
    if (!strcmp(mode, "fresh-child")) return fresh_child(arg);
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
