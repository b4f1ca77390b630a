/* Scenario program for profile mode's windows (tests/e2e/test_windows.py), on the fake driver
 * and the fake runtime.
 *
 *   api PATH        three windows opened and closed with the profiler API reached by PATH:
 *                   direct (the linked cuProfilerStart/Stop), dlsym (on a libcuda handle),
 *                   procaddr (cuGetProcAddress_v2), entrypoint (cudaGetDriverEntryPoint),
 *                   runtime (cudaProfilerStart/Stop of libcudart). Window k (1..3): add1 x(k+1)
 *                   and flash x k; before, between and after the windows: triton x5;
 *                   `api PATH MS`: then MS ms of sleep before the exit
 *   signal-threads DIR  8 threads launch add1 until told to stop; the main thread sends
 *                   SIGUSR2 20 times, each to the next of the 8 (pthread_kill: a thread's own
 *                   pending signal, so none merges with another), 40 ms apart, and after each
 *                   second one waits for that window's summary, DIR/w.<k>.json; prints
 *                   "launched N" (all threads together)
 *   signal-burst N DIR  raise(SIGUSR2) (each handled before raise returns): a window around
 *                   add1, then N more toggles at once (the window's cut almost surely still
 *                   pending), then, once the window's summary DIR/w.1.json is there, flash
 *   loop MS         add1 once a millisecond for MS ms; prints "launched N"
 *   loop-windows DIR N  add1 once a millisecond until DIR holds N files *.json (window
 *                   summaries, or a test's marks), 60 s at most; prints "launched N"
 *   nvtx            NVTX3 ranges: "step" (default domain) three times around add1 x(k+1) with
 *                   a nested "step.inner" around flash x k; triton x5 before, between and
 *                   after; then a "step" range in domain "other" around triton x3
 *   nvtx-steps N [handler]  N times a "step" range (default domain) around add1 x1; with
 *                   `handler`, all but the first made by a SIGUSR1 handler the main thread
 *                   raises (a new range path and a kernel's first launch are not for a signal
 *                   handler to make: docs/design.md, Signal handlers); prints "loop_us N" (the
 *                   N steps' time) and peak_rss_kb
 *   nvtx-domains    one range pushed and popped in each of 10 domains ("d0".."d9"), then a
 *                   "step" range (default domain) around add1 x2
 *   own-handler WHEN  the program's own SIGUSR2 handler, installed before the first CUDA call
 *                   or after the first launch; add1 x3, raise(SIGUSR2), add1 x2; the handler
 *                   prints "handler ran"
 *   storm-exit US MS  a thread sends the process SIGUSR2 every US microseconds, without end,
 *                   while the main thread launches add1 for MS ms and then calls exit(0)
 *   fork N WINDOWS CHILD  N times: add1 x20 (inside a window the parent opens and closes
 *                   itself with WINDOWS: `api`, cuProfilerStart/Stop; `signal`, raise(SIGUSR2)
 *                   before and after; `none`) and a millisecond's sleep, then a child that
 *                   launches flash x3 and ends with CHILD: `exit`, exit(0); `raise`,
 *                   raise(SIGUSR2) first (it exits 0 only if the signal did not kill it);
 *                   prints "parent PID", each child's "child PID status S" (its wait status)
 *                   and "launched N" (the parent's launches) */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaProfiler.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scn_common.h"

static CUfunction add1, flash, triton;
static CUstream stream;

static void launch(CUfunction f, int n)
{
    for (int i = 0; i < n; i++)
        if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL) != CUDA_SUCCESS)
            printf("launch failed\n");
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

typedef int (*profiler_fn)(void);

/* cudaProfilerStart/Stop return cudaError_t, cuProfilerStart/Stop CUresult: both an int. */
static void profiler_api(const char *path, profiler_fn *start, profiler_fn *stop)
{
    void *p = NULL, *q = NULL;
    if (!strcmp(path, "direct")) {
        p = (void *)cuProfilerStart, q = (void *)cuProfilerStop;
    } else if (!strcmp(path, "dlsym")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        p = dlsym(h, "cuProfilerStart"), q = dlsym(h, "cuProfilerStop");
    } else if (!strcmp(path, "procaddr")) {
        CUdriverProcAddressQueryResult st;
        CHECK("getprocaddress", cuGetProcAddress_v2("cuProfilerStart", &p, 4000, 0, &st));
        CHECK("getprocaddress", cuGetProcAddress_v2("cuProfilerStop", &q, 4000, 0, &st));
    } else {
        void *rt = dlopen("libcudart.so.13", RTLD_NOW);
        if (rt == NULL) {
            printf("no libcudart: %s\n", dlerror());
            exit(3);
        }
        if (!strcmp(path, "runtime")) {
            p = dlsym(rt, "cudaProfilerStart"), q = dlsym(rt, "cudaProfilerStop");
        } else {
            typedef int (*entry_fn)(const char *, void **, unsigned long long, int *);
            entry_fn entry = (entry_fn)dlsym(rt, "cudaGetDriverEntryPoint");
            int st;
            CHECK("entrypoint", (CUresult)entry("cuProfilerStart", &p, 0, &st));
            CHECK("entrypoint", (CUresult)entry("cuProfilerStop", &q, 0, &st));
        }
    }
    if (p == NULL || q == NULL) {
        printf("profiler API not found by %s\n", path);
        exit(3);
    }
    memcpy(start, &p, sizeof p);
    memcpy(stop, &q, sizeof q);
}

static void api(const char *path)
{
    profiler_fn start, stop;
    profiler_api(path, &start, &stop);
    launch(triton, 5);
    for (int k = 1; k <= 3; k++) {
        CHECK("start", (CUresult)start());
        launch(add1, k + 1);
        launch(flash, k);
        CHECK("stop", (CUresult)stop());
        launch(triton, 5);
    }
}

static void nvtx(void)
{
    launch(triton, 5);
    for (int k = 1; k <= 3; k++) {
        nvtxRangePushA("step");
        launch(add1, k + 1);
        nvtxRangePushA("step.inner");
        launch(flash, k);
        nvtxRangePop();
        nvtxRangePop();
        launch(triton, 5);
    }
    nvtxDomainHandle_t other = nvtxDomainCreateA("other");
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "step";
    nvtxDomainRangePushEx(other, &a);
    launch(triton, 3);
    nvtxDomainRangePop(other);
}

static void one_step(void)
{
    nvtxRangePushA("step");
    launch(add1, 1);
    nvtxRangePop();
}

static void step_handler(int sig)
{
    (void)sig;
    int saved = errno;
    one_step();
    errno = saved;
}

static void nvtx_steps(int n, int in_handler)
{
    if (in_handler) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = step_handler;
        sigaction(SIGUSR1, &sa, NULL);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < n; i++) {
        if (in_handler && i > 0)
            raise(SIGUSR1);
        else
            one_step();
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("loop_us %ld\n",
           (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
    scn_print_peak_rss();
}

static void nvtx_domains(void)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "work";
    for (int i = 0; i < 10; i++) {
        char name[8];
        snprintf(name, sizeof name, "d%d", i);
        nvtxDomainHandle_t d = nvtxDomainCreateA(name);
        nvtxDomainRangePushEx(d, &a);
        launch(triton, 1);
        nvtxDomainRangePop(d);
    }
    nvtxRangePushA("step");
    launch(add1, 2);
    nvtxRangePop();
}

static atomic_int stop_launching;
static atomic_long launched;

static void *launcher(void *arg)
{
    (void)arg;
    long n = 0;
    while (!atomic_load(&stop_launching)) {
        launch(add1, 1);
        n++;
    }
    atomic_fetch_add(&launched, n);
    return NULL;
}

/* Until DIR/w.<k>.json exists (a minute at most). */
static void wait_for_window(const char *dir, int k)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/w.%d.json", dir, k);
    for (int ms = 0; ms < 60000 && access(path, F_OK) != 0; ms++)
        sleep_ms(1);
}

static void signal_threads(const char *dir)
{
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, launcher, NULL);
    sleep_ms(20);
    for (int i = 0; i < 20; i++) {
        pthread_kill(t[i % 8], SIGUSR2);
        sleep_ms(40);
        if (i % 2) wait_for_window(dir, i / 2 + 1);
    }
    atomic_store(&stop_launching, 1);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    printf("launched %ld\n", atomic_load(&launched));
}

static void loop(long ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long n = 0;
    do {
        launch(add1, 1);
        n++;
        sleep_ms(1);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    printf("launched %ld\n", n);
}

static int json_files_in(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d) return 0;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' && strlen(e->d_name) > 5 &&
             !strcmp(e->d_name + strlen(e->d_name) - 5, ".json");
    closedir(d);
    return n;
}

/* Launches until dir holds n *.json files (the windows' summaries, the pushes a test's receiver
 * answered): what a test needs, however slowly a loaded or instrumented run goes. */
static void loop_windows(const char *dir, int n)
{
    struct timespec t0, t;
    long launched = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        launch(add1, 1);
        launched++;
        sleep_ms(1);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (json_files_in(dir) < n && t.tv_sec - t0.tv_sec < 60);
    printf("launched %ld\n", launched);
}

static void on_usr2(int sig)
{
    (void)sig;
    static const char msg[] = "handler ran\n";
    if (write(1, msg, sizeof msg - 1) < 0) abort();
}

static void own_handler(const char *when, int before)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    if (before == !strcmp(when, "before")) sigaction(SIGUSR2, &sa, NULL);
}

static void signal_burst(int n, const char *dir)
{
    raise(SIGUSR2);
    launch(add1, 1);
    raise(SIGUSR2);
    for (int i = 0; i < n; i++)
        raise(SIGUSR2);
    wait_for_window(dir, 1);
    launch(flash, 1);
}

static long storm_us;

static void *storm(void *arg)
{
    (void)arg;
    for (;;) {
        kill(getpid(), SIGUSR2);
        struct timespec ts = {0, storm_us * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void storm_exit(long us, long ms)
{
    pthread_t t;
    storm_us = us;
    pthread_create(&t, NULL, storm, NULL);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        launch(add1, 1);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    exit(0);
}

static void fork_children(int n, const char *windows, const char *child)
{
    long parent = 0;
    printf("parent %d\n", (int)getpid());
    for (int i = 0; i < n; i++) {
        if (!strcmp(windows, "api")) CHECK("start", cuProfilerStart());
        if (!strcmp(windows, "signal")) raise(SIGUSR2);
        launch(add1, 20);
        parent += 20;
        if (!strcmp(windows, "api")) CHECK("stop", cuProfilerStop());
        if (!strcmp(windows, "signal")) raise(SIGUSR2);
        sleep_ms(1);
        pid_t pid = fork();
        if (pid == 0) {
            launch(flash, 3);
            if (!strcmp(child, "raise")) raise(SIGUSR2);
            exit(0);
        }
        int status = -1;
        if (pid > 0) waitpid(pid, &status, 0);
        printf("child %d status %d\n", (int)pid, status);
    }
    printf("launched %ld\n", parent);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(argv[1], "own-handler") && argc > 2) own_handler(argv[2], 1);
    stream = scn_context();
    scn_load_kernels(&add1, &flash, &triton);
    if (!strcmp(argv[1], "api") && argc > 2) {
        api(argv[2]);
        if (argc > 3) sleep_ms(atol(argv[3])); /* the last window's GPU work ends meanwhile */
    } else if (!strcmp(argv[1], "nvtx")) {
        nvtx();
    } else if (!strcmp(argv[1], "nvtx-steps") && argc > 2) {
        nvtx_steps(atoi(argv[2]), argc > 3 && !strcmp(argv[3], "handler"));
    } else if (!strcmp(argv[1], "nvtx-domains")) {
        nvtx_domains();
    } else if (!strcmp(argv[1], "signal-threads") && argc > 2) {
        signal_threads(argv[2]);
    } else if (!strcmp(argv[1], "signal-burst") && argc > 3) {
        signal_burst(atoi(argv[2]), argv[3]);
    } else if (!strcmp(argv[1], "storm-exit") && argc > 3) {
        storm_exit(atol(argv[2]), atol(argv[3]));
    } else if (!strcmp(argv[1], "fork") && argc > 4) {
        fork_children(atoi(argv[2]), argv[3], argv[4]);
    } else if (!strcmp(argv[1], "loop") && argc > 2) {
        loop(atol(argv[2]));
    } else if (!strcmp(argv[1], "loop-windows") && argc > 3) {
        loop_windows(argv[2], atoi(argv[3]));
    } else if (!strcmp(argv[1], "own-handler") && argc > 2) {
        launch(add1, 1);
        own_handler(argv[2], 0);
        launch(add1, 2);
        raise(SIGUSR2);
        launch(add1, 2);
    } else {
        return 2;
    }
    return 0;
}
