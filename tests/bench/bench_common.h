/* What the two launch-loop benchmark programs (bench_launch.c for the driver entry points,
 * bench_runtime.c for cudaLaunchKernel) share: option parsing, the hand-written NVTX setup,
 * the timed batches run on one or more threads, and the lines they print for
 * tests/bench/run_bench.py. Each program supplies its setup and one pair of loops per entry
 * point (plain, and with nvtxDomainRangePushEx/Pop written around the launch: the
 * hand-instrumented reference); everything here is outside the timed loops.
 *
 * Output, one fact per line, so the driver needs no parser beyond split():
 *   init <ns>       the process's first launch (a primer kernel, never NVTX-wrapped by the
 *                   program): whatever a library initialises lazily happens here
 *   first <ns>      mean time of the first launch of each kernel (labels are made there)
 *   batch <ns>      one timed batch: ns per launch, averaged over the threads
 *   launches <n>    launches this process made, all threads, warm-up included
 *   driver <n>      launches the fake driver counted for the entry point
 *   errors <n>      launches that did not return success (must be 0) */
#ifndef NVTXCORR_BENCH_COMMON_H
#define NVTXCORR_BENCH_COMMON_H

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_opts {
    const char *entry; /* which entry point the loop calls */
    int hand;          /* 1: hand-written NVTX around each launch */
    long n;            /* launches per batch, per thread */
    int batches;
    long kernels; /* distinct kernels, launched round-robin */
    int threads;
    long warmup; /* untimed launches per thread before the batches */
    long pace;   /* 0, or a 1 ms pause after every `pace` launches (for instruction counts:
                    a program that does other work between launches; times include it) */
} bench_opts_t;

/* One launching thread. The loops read only their own worker (and the shared, read-only
 * handle arrays), so two threads share no written cache line. */
typedef struct bench_worker {
    void *stream;                       /* CUstream / cudaStream_t */
    void *const *handles;               /* CUfunction, CUgraphExec or host stub, per kernel */
    const nvtxEventAttributes_t *attrs; /* per kernel, for the hand-written loop */
    long nhandles;
    long errors;
    double *batch_ns;
    char pad[64]; /* keeps the next worker's counters off this one's cache line */
} bench_worker_t;

typedef void (*bench_loop_fn)(bench_worker_t *w, long n);

typedef struct bench_entry {
    const char *name;
    bench_loop_fn plain, hand;
} bench_entry_t;

static nvtxDomainHandle_t bench_domain;

static double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void bench_usage(const char *prog, const bench_entry_t *entries)
{
    fprintf(stderr,
            "usage: %s ENTRY [-hand] [-n LAUNCHES] [-b BATCHES] [-k KERNELS] [-t THREADS] "
            "[-w WARMUP] [-p PACE]\n  ENTRY:",
            prog);
    for (const bench_entry_t *e = entries; e->name; e++)
        fprintf(stderr, " %s", e->name);
    fputc('\n', stderr);
    exit(2);
}

static const bench_entry_t *bench_parse(int argc, char **argv, const bench_entry_t *entries,
                                        bench_opts_t *o)
{
    *o = (bench_opts_t){.n = 100000, .batches = 5, .kernels = 1, .threads = 1, .warmup = 20000};
    if (argc < 2) bench_usage(argv[0], entries);
    o->entry = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-hand")) {
            o->hand = 1;
            continue;
        }
        if (v == NULL) bench_usage(argv[0], entries);
        i++;
        if (!strcmp(a, "-n"))
            o->n = atol(v);
        else if (!strcmp(a, "-b"))
            o->batches = atoi(v);
        else if (!strcmp(a, "-k"))
            o->kernels = atol(v);
        else if (!strcmp(a, "-t"))
            o->threads = atoi(v);
        else if (!strcmp(a, "-w"))
            o->warmup = atol(v);
        else if (!strcmp(a, "-p"))
            o->pace = atol(v);
        else
            bench_usage(argv[0], entries);
    }
    if (o->n < 0 || o->batches < 0 || o->kernels < 1 || o->threads < 1 || o->warmup < 0 ||
        o->pace < 0)
        bench_usage(argv[0], entries);
    for (const bench_entry_t *e = entries; e->name; e++)
        if (!strcmp(e->name, o->entry)) return e;
    bench_usage(argv[0], entries);
    return NULL;
}

/* The hand-written program's NVTX, set up the way a careful author would: one domain, and the
 * event attributes (a registered string) built once, outside the loop, so the reference pays
 * only for the push and the pop. */
static nvtxEventAttributes_t *bench_hand_attrs(char *const *names, long count)
{
    nvtxEventAttributes_t *a = calloc((size_t)count, sizeof *a);
    if (a == NULL) {
        perror("calloc");
        exit(1);
    }
    bench_domain = nvtxDomainCreateA("bench");
    for (long i = 0; i < count; i++) {
        a[i].version = NVTX_VERSION;
        a[i].size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a[i].messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a[i].message.registered = nvtxDomainRegisterStringA(bench_domain, names[i]);
    }
    return a;
}

typedef struct bench_run {
    const bench_opts_t *o;
    bench_loop_fn loop;
    bench_worker_t *w;
    pthread_barrier_t *barrier;
} bench_run_t;

/* n launches: in one call of the loop, or with -p in calls of `pace` and a pause after each. */
static void bench_launches(const bench_run_t *r, long n)
{
    long pace = r->o->pace ? r->o->pace : n;
    for (long done = 0; done < n; done += pace) {
        r->loop(r->w, n - done < pace ? n - done : pace);
        if (r->o->pace) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
}

static void *bench_thread(void *arg)
{
    bench_run_t *r = arg;
    bench_launches(r, r->o->warmup);
    for (int b = 0; b < r->o->batches; b++) {
        /* Threads start each batch together, so their batches overlap. */
        pthread_barrier_wait(r->barrier);
        double t0 = bench_now_ns();
        bench_launches(r, r->o->n);
        r->w->batch_ns[b] = (bench_now_ns() - t0) / (double)(r->o->n ? r->o->n : 1);
    }
    return NULL;
}

/* The primer launch (`primer` makes it and returns nonzero on failure), the first launch of
 * every kernel, timed as one pass (labels are made there), then the warm-up and the batches
 * on o->threads threads. Prints everything but "driver". */
static void bench_run(const bench_opts_t *o, const bench_entry_t *e, bench_worker_t *workers,
                      int (*primer)(bench_worker_t *w))
{
    bench_loop_fn loop = o->hand ? e->hand : e->plain;
    double t0 = bench_now_ns();
    workers[0].errors += primer(&workers[0]) != 0;
    printf("init %.0f\n", bench_now_ns() - t0);
    t0 = bench_now_ns();
    loop(&workers[0], workers[0].nhandles);
    printf("first %.2f\n", (bench_now_ns() - t0) / (double)workers[0].nhandles);

    pthread_t *tids = calloc((size_t)o->threads, sizeof *tids);
    bench_run_t *runs = calloc((size_t)o->threads, sizeof *runs);
    pthread_barrier_t barrier;
    if (tids == NULL || runs == NULL) {
        perror("calloc");
        exit(1);
    }
    pthread_barrier_init(&barrier, NULL, (unsigned)o->threads);
    for (int t = 0; t < o->threads; t++) {
        workers[t].batch_ns = calloc((size_t)o->batches + 1, sizeof(double));
        runs[t] = (bench_run_t){o, loop, &workers[t], &barrier};
        if (workers[t].batch_ns == NULL || pthread_create(&tids[t], NULL, bench_thread, &runs[t])) {
            fprintf(stderr, "cannot start thread %d\n", t);
            exit(1);
        }
    }
    long errors = 0;
    for (int t = 0; t < o->threads; t++) {
        pthread_join(tids[t], NULL);
        errors += workers[t].errors;
    }
    for (int b = 0; b < o->batches; b++) {
        double sum = 0;
        for (int t = 0; t < o->threads; t++)
            sum += workers[t].batch_ns[b];
        printf("batch %.3f\n", sum / o->threads);
    }
    printf("launches %ld\n",
           1 + workers[0].nhandles + (long)o->threads * (o->warmup + (long)o->batches * o->n));
    printf("errors %ld\n", errors);
    pthread_barrier_destroy(&barrier);
}

#endif
