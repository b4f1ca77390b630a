/* Scenario program for profile mode's files (tests/e2e/test_reliability_io.py): what the
 * program does to its descriptors, limits and disk around nvtxcorr's trace and summary. A pure
 * C program linked with the fake libcuda.so.1.
 *
 *   loop N RC          N launches of add1, then returns RC
 *   own-write PATH     one launch, then writes 200 KB to PATH itself, twice (under a file-size
 *                      limit the second must still raise SIGXFSZ, as without nvtxcorr)
 *   closefds PATH N    N launches, closes every descriptor >= 3 (as a daemon does), opens PATH
 *                      and writes its 4,088 bytes of data, N more launches, then returns 0
 *                      with PATH still open
 *   threads-term T [MS]  T threads launch without end; MS ms later (default 50) the main
 *                      thread sends the process SIGTERM (no handler: the default action ends it)
 *   names              loads a module whose kernel names are not all UTF-8 (bytes 0xff, a lone
 *                      continuation byte, an overlong '/', a UTF-16 surrogate, C0 and C1
 *                      control characters) and launches each twice
 *   init-term          a second thread sends the process SIGTERM while the main thread's first
 *                      CUDA call is initialising nvtxcorr (run with a slow NVTX tool: once the
 *                      file $NVTXREC_INIT_MARK is there, which the tool creates as it starts
 *                      loading; 100 ms after start without it); without nvtxcorr the process
 *                      just ends by SIGTERM
 *   gpu N              N launches of add1 on the main thread and N on a second one; prints
 *                      "done" (stdout) before returning 5
 *   term N             N launches of add1, then SIGTERM to itself (no handler)
 *   until-gone DIR N RC  launches add1 until DIR no longer exists (looked at every 64
 *                      launches, for at most 60 s: then "DIR still there" and 9), then N more
 *                      launches, and returns RC */
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scn_common.h"

static CUfunction add1, flash, triton;
static CUstream stream;

static void launch(CUfunction f, long n)
{
    for (long i = 0; i < n; i++)
        if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL) != CUDA_SUCCESS)
            printf("launch failed\n");
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void *forever(void *arg)
{
    (void)arg;
    for (;;)
        launch(add1, 1);
    return NULL;
}

static void *terminate_soon(void *arg)
{
    const char *mark = getenv("NVTXREC_INIT_MARK");

    if (!mark) sleep_ms((long)arg);
    for (int i = 0; mark && access(mark, F_OK) != 0 && i < 60000; i++)
        sleep_ms(1);
    kill(getpid(), SIGTERM);
    return NULL;
}

static void *second_launcher(void *arg)
{
    launch(add1, (long)arg);
    return NULL;
}

/* Kernel names the driver hands back as given: not all of them UTF-8. */
static const char odd_image[] = "FAKEIMAGE\n"
                                "bad_\xff\xfe_kernel\n"
                                "lone_\x80_continuation\n"
                                "overlong_\xc0\xaf_slash\n"
                                "surrogate_\xed\xa0\x80_half\n"
                                "control_\x01\x1b[31m_red\n"
                                "fine_\xc3\xa9t\xc3\xa9_\xe2\x82\xac\n"
                                "c1_\xc2\x9b_csi\n";
static const char *const odd_names[] = {
    "bad_\xff\xfe_kernel",      "lone_\x80_continuation",
    "overlong_\xc0\xaf_slash",  "surrogate_\xed\xa0\x80_half",
    "control_\x01\x1b[31m_red", "fine_\xc3\xa9t\xc3\xa9_\xe2\x82\xac",
    "c1_\xc2\x9b_csi"};

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "loop";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "init-term")) {
        pthread_t t;
        pthread_create(&t, NULL, terminate_soon, (void *)100L);
    }
    stream = scn_context();
    scn_load_kernels(&add1, &flash, &triton);
    if (!strcmp(mode, "loop")) {
        launch(add1, argc > 2 ? atol(argv[2]) : 1000);
        return argc > 3 ? atoi(argv[3]) : 0;
    } else if (!strcmp(mode, "own-write")) {
        launch(add1, 1);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        static char block[200 * 1024];
        memset(block, 'x', sizeof block);
        for (int i = 0; i < 2; i++) /* the second starts at the limit: SIGXFSZ */
            printf("own write returned %zd\n", write(fd, block, sizeof block));
        return 0;
    } else if (!strcmp(mode, "closefds")) {
        long n = atol(argv[3]);
        launch(add1, n);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char data[4088];
        for (size_t i = 0; i < sizeof data; i++)
            data[i] = (char)('a' + i % 26);
        printf("data fd %d wrote %zd\n", fd, write(fd, data, sizeof data));
        launch(add1, n);
        launch(flash, n);
        return 0;
    } else if (!strcmp(mode, "threads-term")) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            pthread_t t;
            pthread_create(&t, NULL, forever, NULL);
        }
        sleep_ms(argc > 3 ? atol(argv[3]) : 50);
        kill(getpid(), SIGTERM);
        for (;;)
            pause();
    } else if (!strcmp(mode, "names")) {
        CUmodule mod;
        CHECK("load", cuModuleLoadData(&mod, odd_image));
        for (size_t i = 0; i < sizeof odd_names / sizeof *odd_names; i++) {
            CUfunction f;
            CHECK("get", cuModuleGetFunction(&f, mod, odd_names[i]));
            launch(f, 2);
        }
        return 0;
    } else if (!strcmp(mode, "init-term")) {
        launch(add1, 3);
        for (;;)
            pause();
    } else if (!strcmp(mode, "gpu")) {
        long n = atol(argv[2]);
        launch(add1, n);
        pthread_t t;
        pthread_create(&t, NULL, second_launcher, (void *)n);
        pthread_join(t, NULL);
        printf("done\n");
        return 5;
    } else if (!strcmp(mode, "until-gone")) {
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (long i = 0;; i++) {
            launch(add1, 1);
            if (i % 64) continue;
            if (access(argv[2], F_OK) != 0) break;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec > 60) {
                printf("%s still there\n", argv[2]);
                return 9;
            }
        }
        launch(add1, atol(argv[3]));
        return atoi(argv[4]);
    } else if (!strcmp(mode, "term")) {
        launch(add1, atol(argv[2]));
        kill(getpid(), SIGTERM);
        for (;;)
            pause();
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
