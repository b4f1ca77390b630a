/* Scenario program for profile mode (tests/e2e/test_profile.py): process lifecycles around
 * launches. A pure C program linked with the fake libcuda.so.1.
 *
 *   fork           parent: add1 x3; child: flash x2, then exit(0); parent then: triton x1
 *   exit-thread    main: add1 x3; a second thread: flash x2, then exit(7) while main waits
 *   signal MODE    add1 x5, then SIGTERM to itself. MODE: default (no handler), before (own
 *                  handler installed before the first CUDA call), after (installed after the
 *                  first launch); the handler prints "handler ran" and the program returns 0
 *   signal-twice   add1 x5, then SIGTERM to the main thread and, 50 ms later while the first
 *                  is being handled, another SIGTERM to a second thread
 *   threads        8 threads: 4 launch and exit at once, then 4 more start (reusing their
 *                  records); thread i launches add1 (i+1)*10 times and flash i times
 *   nolaunch       loads a module and looks up a function, launches nothing
 *   cupti-late     prints whether a libcupti is loaded after set-up (module load, function
 *                  look-up, no launch yet), then launches add1 once and prints it again
 *   loop N         N launches of add1; prints peak_rss_kb
 *   exit-code N    add1 x1, then returns N
 *   underscore-exit HOW N  add1 x14 (10 on the main thread, 4 on another), then ends with
 *                  HOW: _exit(N), _Exit(N), or `vfork`: a vfork child that calls _exit(N)
 *                  at once, the parent then _exit(0); prints "child status S" for vfork
 *   fork-loop N M  parent: add1 xN; child: add1 xM, then exit(0)
 *   memory T K     K kernels, each launched once by each of T threads alive at once; prints
 *                  rss_kb (VmRSS) then; then forks: the child prints child_private_kb (the
 *                  Private_Dirty it has made since the fork, before launching), launches the
 *                  first kernel again, prints child_private_after_launch_kb and exits */
#define _GNU_SOURCE
#include <cuda.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scn_common.h"

static CUfunction add1, flash, triton;
static CUstream stream;

static void setup(void)
{
    stream = scn_context();
    scn_load_kernels(&add1, &flash, &triton);
}

static void launch(CUfunction f, int n)
{
    for (int i = 0; i < n; i++)
        if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL) != CUDA_SUCCESS)
            printf("launch failed\n");
}

static void *four_launches(void *arg)
{
    (void)arg;
    launch(add1, 4);
    return NULL;
}

static void *exiting_thread(void *arg)
{
    (void)arg;
    launch(flash, 2);
    exit(7);
}

static volatile sig_atomic_t handled;
static void handler(int sig)
{
    (void)sig;
    handled = 1;
    static const char msg[] = "handler ran\n";
    write(STDOUT_FILENO, msg, sizeof msg - 1);
}

static int find_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    /* The file's name, not its directory's (a clone may live under a "cupti" directory). */
    const char *file = strrchr(info->dlpi_name, '/');
    return strstr(file ? file + 1 : info->dlpi_name, "cupti") != NULL;
}

static void print_cupti(const char *when)
{
    printf("cupti %s: %s\n", when, dl_iterate_phdr(find_cupti, NULL) ? "loaded" : "not loaded");
}

static void *second_signal(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    raise(SIGTERM); /* this thread's own: handled here, while main is still in its handler */
    return NULL;
}

extern int fakecuda_make_function(const char *mangled, CUfunction *out);

static CUfunction *many;
static long n_many;
static pthread_barrier_t launched, measured;

static void *many_worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < n_many; i++)
        if (cuLaunchKernel(many[i], 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL) != CUDA_SUCCESS)
            printf("launch failed\n");
    pthread_barrier_wait(&launched);
    pthread_barrier_wait(&measured); /* alive until main has measured and forked */
    return NULL;
}

static long status_kb(const char *path, const char *key)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) kb = strtol(line + strlen(key), NULL, 10);
    if (f) fclose(f);
    return kb;
}

static int memory(int threads, long kernels)
{
    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); /* RSS in 4 KiB pages, not 2 MiB ones */
    many = calloc((size_t)kernels, sizeof *many);
    n_many = kernels;
    for (long i = 0; i < kernels; i++) {
        char base[32], name[64];
        snprintf(base, sizeof base, "kernel%ld", i);
        snprintf(name, sizeof name, "_Z%zu%sPf", strlen(base), base);
        if (fakecuda_make_function(name, &many[i]) != 0) return 3;
    }
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    pthread_barrier_init(&launched, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&measured, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, many_worker, NULL);
    pthread_barrier_wait(&launched);
    printf("rss_kb %ld\n", status_kb("/proc/self/status", "VmRSS:"));
    pid_t pid = fork();
    if (pid == 0) {
        printf("child_private_kb %ld\n", status_kb("/proc/self/smaps_rollup", "Private_Dirty:"));
        cuLaunchKernel(many[0], 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
        printf("child_private_after_launch_kb %ld\n",
               status_kb("/proc/self/smaps_rollup", "Private_Dirty:"));
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    pthread_barrier_wait(&measured);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    return status == 0 ? 0 : 5;
}

static void *worker(void *arg)
{
    long i = (long)arg;
    launch(add1, (int)(i + 1) * 10);
    launch(flash, (int)i);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fork";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "signal") && argc > 2 && !strcmp(argv[2], "before")) signal(SIGTERM, handler);
    setup();
    if (!strcmp(mode, "fork")) {
        launch(add1, 3);
        pid_t pid = fork();
        if (pid == 0) {
            launch(flash, 2);
            exit(0);
        }
        int status;
        waitpid(pid, &status, 0);
        launch(triton, 1);
        printf("child %d status %d\n", (int)pid, status);
    } else if (!strcmp(mode, "exit-thread")) {
        launch(add1, 3);
        pthread_t t;
        pthread_create(&t, NULL, exiting_thread, NULL);
        for (;;)
            pause();
    } else if (!strcmp(mode, "signal")) {
        launch(add1, 5);
        if (argc > 2 && !strcmp(argv[2], "after")) signal(SIGTERM, handler);
        kill(getpid(), SIGTERM);
        while (!handled)
            pause();
        printf("returned\n");
    } else if (!strcmp(mode, "signal-twice")) {
        launch(add1, 5);
        pthread_t t;
        pthread_create(&t, NULL, second_signal, NULL);
        raise(SIGTERM);
        pause();
    } else if (!strcmp(mode, "threads")) {
        pthread_t t[8];
        for (long i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, worker, (void *)i);
        for (long i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        for (long i = 4; i < 8; i++)
            pthread_create(&t[i], NULL, worker, (void *)i);
        for (long i = 4; i < 8; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(mode, "cupti-late")) {
        print_cupti("before the first launch");
        launch(add1, 1);
        print_cupti("after it");
    } else if (!strcmp(mode, "nolaunch")) {
        printf("no launch\n");
    } else if (!strcmp(mode, "loop")) {
        long n = argc > 2 ? atol(argv[2]) : 1000;
        for (long i = 0; i < n; i++)
            cuLaunchKernel(add1, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
        scn_print_peak_rss();
    } else if (!strcmp(mode, "fork-loop")) {
        int n = argc > 2 ? atoi(argv[2]) : 1000;
        launch(add1, n);
        pid_t pid = fork();
        if (pid == 0) {
            launch(add1, argc > 3 ? atoi(argv[3]) : n);
            exit(0);
        }
        int status;
        waitpid(pid, &status, 0);
        printf("child %d status %d\n", (int)pid, status);
    } else if (!strcmp(mode, "memory") && argc > 3) {
        return memory(atoi(argv[2]), atol(argv[3]));
    } else if (!strcmp(mode, "underscore-exit") && argc > 3) {
        pthread_t t;
        pthread_create(&t, NULL, four_launches, NULL);
        pthread_join(t, NULL);
        launch(add1, 10);
        int n = atoi(argv[3]);
        if (!strcmp(argv[2], "_Exit")) _Exit(n);
        if (!strcmp(argv[2], "vfork")) {
            pid_t pid = vfork();
            if (pid == 0) _exit(n);
            int status;
            waitpid(pid, &status, 0);
            printf("child status %d\n", status);
            fflush(stdout);
            n = 0;
        }
        _exit(n);
    } else if (!strcmp(mode, "exit-code")) {
        launch(add1, 1);
        return argc > 2 ? atoi(argv[2]) : 0;
    } else {
        return 2;
    }
    return 0;
}
