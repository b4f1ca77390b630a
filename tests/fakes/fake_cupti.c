/*
 * Fake CUPTI (libfake_cupti.so): the parts of the activity and callback APIs that nvtxcorr's
 * profile mode uses, written from the toolkit's cupti_activity.h and cupti_callbacks.h, turning
 * the fake driver's and runtimes' calls into callbacks and activity records. Load it with
 * NVTXCORR_CUPTI_LIBRARY=<build>/fakes/libfake_cupti.so.
 *
 * It finds the fake driver's side channels (fakecuda_set_activity_hook and fakecuda_set_api_hook
 * in libcuda.so.1) when the client registers its buffer callbacks. From then on every call the
 * driver or a runtime reports is a frame with a new correlation id (API frames, below); every
 * launch that runs produces, on the launching thread, one CONCURRENT_KERNEL record per kernel
 * (a MEMSET or MEMCPY record per memset or memcpy node of a graph) carrying the outermost
 * frame's correlation id. A kernel record carries the grid and block it was launched with (a
 * graph's kernel node: its parameters); in a graph replay every record carries graphId (the
 * executable graph's number, from 1) and graphNodeId (the node's position in the graph, from
 * 1). Durations are deterministic: a kernel takes 100 ns per character of its mangled name, a
 * memset 500 ns, a memcpy 700 ns; operations follow each other on one GPU timeline that starts
 * no earlier than the launch.
 *
 * Environment (read at the first call):
 *   FAKECUPTI_REFUSE=1          cuptiActivityEnable returns
 *                               CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (as under nsys)
 *   FAKECUPTI_BUFFER_RECORDS=n  complete a buffer after n records (default: when full)
 *   FAKECUPTI_DROP_EVERY=n      drop every n-th kernel record; cuptiActivityGetNumDroppedRecords
 *                               reports them
 *   FAKECUPTI_ASYNC_MS=n        buffers are given back on a worker thread, n ms after they
 *                               complete (a flush then returns before they are delivered)
 *   FAKECUPTI_FAIL_FLUSH=1      cuptiActivityFlushAll returns CUPTI_ERROR_UNKNOWN, delivering
 *                               nothing
 *   FAKECUPTI_KERNELS_FIRST=1   a launch's kernel records come before its API and external
 *                               correlation records (with small buffers: in earlier buffers)
 *   FAKECUPTI_FOREIGN=1         each completed buffer is followed by an empty one the client
 *                               did not lend (as another CUPTI client's), freed by the fake
 *                               after; if the client ever lends it back, stderr says
 *                               "fake_cupti: foreign buffer lent back"
 *   FAKECUPTI_HANG=CALLS        the CUPTI calls named (a comma-separated list of register,
 *                               enable, flush, dropped: cuptiActivityRegisterCallbacks,
 *                               cuptiActivityEnable, cuptiActivityFlushAll,
 *                               cuptiActivityGetNumDroppedRecords) never return
 *   FAKECUPTI_START_DELAY_MS=n  cuptiActivityRegisterCallbacks sleeps n ms first (a slow start,
 *                               as libcupti's is on a real driver)
 *   FAKECUPTI_SLOW_BUFFER_MS=n  the first cuptiActivityGetNumDroppedRecords sleeps n ms: the
 *                               client's processing of its first completed buffer is slow
 *   FAKECUPTI_PUSH_FAIL_AFTER=n cuptiActivityPushExternalCorrelationId succeeds n times, then
 *                               returns CUPTI_ERROR_UNKNOWN (0: every push fails)
 *   FAKECUPTI_NO_GRAPH_CALLBACKS=1  an older CUPTI: cuptiEnableCallback refuses the resource
 *                               callbacks GRAPHNODE_CREATED/_CLONED (CUPTI_ERROR_INVALID_PARAMETER)
 *   FAKECUPTI_NESTED_SAME_ID=1  a nested frame shares its outermost frame's correlation id
 *   FAKECUPTI_CALLBACK_NS=n     each callback made costs the calling thread n ns (spinning)
 *   FAKECUPTI_RECORD_NS=n       each API record written costs the calling thread n ns
 *   FAKECUPTI_NO_API_CALLBACKS=1  cuptiEnableCallback refuses the driver and runtime domains
 *   FAKECUPTI_NO_PER_CBID=1     cuptiActivityEnableDriverApi/RuntimeApi are not supported
 *   FAKECUPTI_LOG=path          one line per operation record made (tests/fakes/README.md)
 *   FAKECUPTI_STATS=path        at exit: frames, callbacks and API records per call
 *   FAKECUPTI_KERNEL_MS=n[:k]   a plain kernel launch's kernel (only the first k, with :k) runs
 *                               n ms from its launch, and its record is made only once it has
 *                               ended (as CUPTI makes it), at the first launch or flush after
 *                               that: a kernel that ends after a profiling window closed, its
 *                               record delivered after the stop
 *
 * The callback API's part for graphs: cuptiSubscribe (one subscriber; a second gets
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), cuptiEnableCallback for the resource domain's
 * GRAPHNODE_CREATED and GRAPHNODE_CLONED, which the fake driver reports (fakecuda_set_node_hook)
 * on the creating or instantiating thread with a CUpti_GraphData, and cuptiGetGraphNodeId, the
 * id the replay's records carry as graphNodeId.
 * A forked child records nothing (CUPTI does not follow fork).
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakecuda.h"

#define FC_API __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static CUpti_TimestampCallbackFunc timestamp_fn;
static uint32_t enabled_kinds[64];
static int refuse, buffer_records, drop_every, async_ms, fail_flush, kernels_first, foreign,
    start_delay_ms, slow_buffer_ms, configured;
static long push_fail_after = -1; /* FAKECUPTI_PUSH_FAIL_AFTER; -1: pushes never fail */
static int kernel_ms;             /* FAKECUPTI_KERNEL_MS */
static long long_kernels;         /* how many more kernels may run that long; -1: all */
/* Kernels still running (FAKECUPTI_KERNEL_MS): their records, made once they have ended. */
static struct held {
    fakecuda_op_t op;
    uint32_t corr;
    uint64_t start, end;
} held[1024];
static size_t nheld;
static _Atomic long pushes;
static uint8_t *foreign_seen[64]; /* foreign buffers completed so far (FAKECUPTI_FOREIGN) */
static size_t foreign_count;
static _Atomic uint32_t next_correlation;
static uint64_t gpu_clock, kernels_seen, dropped;

/* The buffer being filled (under lock). */
static uint8_t *buf;
static size_t buf_size, buf_used, buf_records;

/* Completed buffers waiting for the worker (FAKECUPTI_ASYNC_MS). */
typedef struct done {
    struct done *next;
    uint8_t *buf;
    size_t size, used;
    uint64_t due_ns;
} done_t;
static done_t *queue_head, **queue_tail = &queue_head;
static int worker_started;

static __thread uint64_t ext_stack[16] __attribute__((tls_model("initial-exec")));
/* The kind of each pushed id: the record names the kind of the innermost one. */
static __thread CUpti_ExternalCorrelationKind ext_kind[16]
    __attribute__((tls_model("initial-exec")));
static __thread int ext_depth __attribute__((tls_model("initial-exec")));
static uint32_t pid;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    return timestamp_fn ? timestamp_fn() : mono_ns();
}

/* FAKECUPTI_HANG: a call named there blocks its thread for good, as a CUPTI stuck on a lock
 * or on a driver that does not answer. */
static void maybe_hang(const char *call)
{
    const char *v = getenv("FAKECUPTI_HANG");
    size_t n = strlen(call);
    for (const char *p = v; p && *p; p += strcspn(p, ","), p += *p == ',')
        if (!strncmp(p, call, n) && (p[n] == ',' || p[n] == 0))
            for (;;)
                pause();
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    if (ms > 0) nanosleep(&ts, NULL);
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v ? atoi(v) : 0;
}

static char stats_path[4096];
static int nested_same_id, callback_ns, record_ns, no_api_callbacks, no_per_cbid;
static int log_fd = -1; /* FAKECUPTI_LOG */
static void after_fork_api(void);

static void after_fork_in_child(void)
{
    after_fork_api();
    pid = (uint32_t)getpid();
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
    memset(enabled_kinds, 0, sizeof enabled_kinds);
    buf = NULL;
    queue_head = NULL, queue_tail = &queue_head;
    worker_started = 0;
}

static void configure(void)
{
    if (configured) return;
    configured = 1;
    refuse = env_int("FAKECUPTI_REFUSE");
    buffer_records = env_int("FAKECUPTI_BUFFER_RECORDS");
    drop_every = env_int("FAKECUPTI_DROP_EVERY");
    async_ms = env_int("FAKECUPTI_ASYNC_MS");
    fail_flush = env_int("FAKECUPTI_FAIL_FLUSH");
    kernels_first = env_int("FAKECUPTI_KERNELS_FIRST");
    foreign = env_int("FAKECUPTI_FOREIGN");
    start_delay_ms = env_int("FAKECUPTI_START_DELAY_MS");
    slow_buffer_ms = env_int("FAKECUPTI_SLOW_BUFFER_MS");
    kernel_ms = env_int("FAKECUPTI_KERNEL_MS");
    const char *k = getenv("FAKECUPTI_KERNEL_MS");
    long_kernels = k && strchr(k, ':') ? atol(strchr(k, ':') + 1) : -1;
    if (getenv("FAKECUPTI_PUSH_FAIL_AFTER")) push_fail_after = env_int("FAKECUPTI_PUSH_FAIL_AFTER");
    nested_same_id = env_int("FAKECUPTI_NESTED_SAME_ID");
    callback_ns = env_int("FAKECUPTI_CALLBACK_NS");
    record_ns = env_int("FAKECUPTI_RECORD_NS");
    no_api_callbacks = env_int("FAKECUPTI_NO_API_CALLBACKS");
    no_per_cbid = env_int("FAKECUPTI_NO_PER_CBID");
    const char *log = getenv("FAKECUPTI_LOG");
    if (log && *log) log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const char *stats = getenv("FAKECUPTI_STATS");
    if (stats && strlen(stats) < sizeof stats_path) strcpy(stats_path, stats);
    pid = (uint32_t)getpid();
    pthread_atfork(NULL, NULL, after_fork_in_child);
}

static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return sizeof(CUpti_ActivityAPI);
    default:
        return 0;
    }
}

/* ---- delivery ---- */
static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (queue_head == NULL)
            pthread_cond_wait(&wake, &lock);
        done_t *d = queue_head;
        if ((queue_head = d->next) == NULL) queue_tail = &queue_head;
        pthread_mutex_unlock(&lock);
        uint64_t now = mono_ns();
        if (d->due_ns > now) {
            struct timespec ts = {(time_t)((d->due_ns - now) / 1000000000ull),
                                  (long)((d->due_ns - now) % 1000000000ull)};
            nanosleep(&ts, NULL);
        }
        completed(NULL, 0, d->buf, d->size, d->used);
        free(d);
        pthread_mutex_lock(&lock);
    }
    return NULL;
}

/* FAKECUPTI_FOREIGN: another client's buffer reaching this client's callback, then freed by
 * its owner. Its address is kept (not the memory) to catch it being lent back. */
static void complete_foreign(void)
{
    uint8_t *b = malloc(4096);
    if (b == NULL) return;
    completed(NULL, 0, b, 4096, 0);
    pthread_mutex_lock(&lock);
    if (foreign_count < sizeof foreign_seen / sizeof *foreign_seen)
        foreign_seen[foreign_count++] = b;
    pthread_mutex_unlock(&lock);
    free(b);
}

/* Hands the current buffer back; called with the lock held, which it releases for the
 * client's callback when delivering on this thread. */
static void complete_locked(void)
{
    if (buf == NULL) return;
    uint8_t *b = buf;
    size_t size = buf_size, used = buf_used;
    buf = NULL;
    if (async_ms > 0) {
        done_t *d = malloc(sizeof *d);
        if (d == NULL) return;
        *d = (done_t){NULL, b, size, used, mono_ns() + (uint64_t)async_ms * 1000000ull};
        *queue_tail = d, queue_tail = &d->next;
        if (!worker_started) {
            pthread_t t;
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            worker_started = pthread_create(&t, &attr, worker, NULL) == 0;
        }
        pthread_cond_signal(&wake);
        return;
    }
    pthread_mutex_unlock(&lock);
    completed(NULL, 0, b, size, used);
    if (foreign) complete_foreign();
    pthread_mutex_lock(&lock);
}

/* Room for one record of `size` bytes, asking the client for a buffer when needed. */
static void *room_locked(size_t size)
{
    /* The lock is released around the client's callbacks, so another thread may complete or
     * install a buffer meanwhile: look again after each. */
    for (;;) {
        if (buf != NULL && (buf_used + size > buf_size ||
                            (buffer_records > 0 && buf_records >= (size_t)buffer_records))) {
            complete_locked();
            continue;
        }
        if (buf != NULL) break;
        uint8_t *b = NULL;
        size_t s = 0, max = 0;
        pthread_mutex_unlock(&lock);
        requested(&b, &s, &max);
        pthread_mutex_lock(&lock);
        for (size_t i = 0; b != NULL && i < foreign_count; i++)
            if (b == foreign_seen[i]) {
                static const char msg[] = "fake_cupti: foreign buffer lent back\n";
                write(2, msg, sizeof msg - 1);
            }
        if (buf == NULL && b != NULL && s >= size) {
            buf = b, buf_size = s, buf_used = 0, buf_records = 0;
            break;
        }
        if (b != NULL) { /* not needed after all (or too small): given back empty */
            pthread_mutex_unlock(&lock);
            completed(NULL, 0, b, s, 0);
            pthread_mutex_lock(&lock);
        }
        if (b == NULL || s < size) return NULL; /* the client gave none: the record is lost */
    }
    void *r = buf + buf_used;
    memset(r, 0, size);
    buf_used += size;
    buf_records++;
    return r;
}

static int enabled(CUpti_ActivityKind k)
{
    return (unsigned)k < 64 && enabled_kinds[k];
}

static uint32_t stream_id(const void *stream)
{
    return (uint32_t)(((uintptr_t)stream >> 4) % 1000 + 1);
}

static void log_op(uint32_t corr, const char *what, uint64_t start, uint64_t end,
                   const fakecuda_op_t *op)
{
    if (log_fd < 0) return;
    char line[1024];
    int n = snprintf(line, sizeof line, "op\t%u\t%s\t%llu\t%llu\t%u\t%llu\n", corr, what,
                     (unsigned long long)start, (unsigned long long)end, op->graph_id,
                     (unsigned long long)op->node_id);
    if (n > 0 && (size_t)n < sizeof line) (void)!write(log_fd, line, (size_t)n);
}

static void kernel_record_locked(const fakecuda_op_t *op, uint32_t corr, uint64_t start,
                                 uint64_t end);

static void op_records_locked(const fakecuda_op_t *ops, size_t n, uint32_t corr, uint64_t launch)
{
    if (gpu_clock < launch) gpu_clock = launch;
    for (size_t i = 0; i < n; i++) {
        uint64_t dur = ops[i].name ? 100 * strlen(ops[i].name) : ops[i].copy ? 700 : 500;
        uint64_t start = gpu_clock;
        gpu_clock += dur;
        if (ops[i].name == NULL && ops[i].copy) {
            if (!enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) continue;
            CUpti_ActivityMemcpy6 *m = room_locked(sizeof *m);
            if (m == NULL) continue;
            m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
            m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
            m->start = start, m->end = start + dur;
            m->streamId = stream_id(ops[i].stream);
            m->correlationId = corr;
            m->graphId = ops[i].graph_id, m->graphNodeId = ops[i].node_id;
            log_op(corr, "[memcpy]", start, start + dur, &ops[i]);
            continue;
        }
        if (ops[i].name == NULL) {
            if (!enabled(CUPTI_ACTIVITY_KIND_MEMSET)) continue;
            CUpti_ActivityMemset4 *m = room_locked(sizeof *m);
            if (m == NULL) continue;
            m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
            m->start = start, m->end = start + dur;
            m->streamId = stream_id(ops[i].stream);
            m->correlationId = corr;
            m->graphId = ops[i].graph_id, m->graphNodeId = ops[i].node_id;
            log_op(corr, "[memset]", start, start + dur, &ops[i]);
            continue;
        }
        if (drop_every > 0 && ++kernels_seen % (uint64_t)drop_every == 0) {
            dropped++;
            continue;
        }
        if (kernel_ms > 0 && ops[i].graph_id == 0 && long_kernels != 0 &&
            nheld < sizeof held / sizeof *held) {
            if (long_kernels > 0) long_kernels--;
            held[nheld++] = (struct held){ops[i], corr, start, start + kernel_ms * 1000000ull};
            continue;
        }
        kernel_record_locked(&ops[i], corr, start, start + dur);
    }
}

/* Records of the held kernels that have ended by now. */
static void release_held_locked(void)
{
    uint64_t now = now_ns();
    size_t keep = 0;
    for (size_t i = 0; i < nheld; i++)
        if (held[i].end <= now)
            kernel_record_locked(&held[i].op, held[i].corr, held[i].start, held[i].end);
        else
            held[keep++] = held[i];
    nheld = keep;
}

static void kernel_record_locked(const fakecuda_op_t *op, uint32_t corr, uint64_t start,
                                 uint64_t end)
{
    CUpti_ActivityKernel10 *k = room_locked(sizeof *k);
    if (k == NULL) return;
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->start = start, k->end = end;
    k->streamId = stream_id(op->stream);
    k->correlationId = corr;
    k->name = op->name; /* the fake driver keeps names for the process's life */
    k->graphId = op->graph_id, k->graphNodeId = op->node_id;
    k->gridX = (int32_t)op->grid[0], k->gridY = (int32_t)op->grid[1];
    k->gridZ = (int32_t)op->grid[2];
    k->blockX = (int32_t)op->block[0], k->blockY = (int32_t)op->block[1];
    k->blockZ = (int32_t)op->block[2];
    log_op(corr, op->name, start, end, op);
}

/* ---- API frames: correlation ids, callbacks, API records ----
 * Each CUDA call the fake driver or a fake runtime reports (fakecuda_api_frame) is a frame on
 * the calling thread with a new correlation id (FAKECUPTI_NESTED_SAME_ID=1: a nested frame
 * shares its outermost frame's id). Its callbacks are made at entry and exit when enabled for
 * its cbid (cuptiEnableCallback), with that id; its API record at exit when the DRIVER or
 * RUNTIME kind is on, or its cbid alone (cuptiActivityEnableDriverApi/RuntimeApi), preceded by
 * an EXTERNAL_CORRELATION record when an external id is pushed. A launch's kernels carry the
 * outermost frame's id, as CUPTI's do, and are written after that frame's API records (at its
 * exit) unless FAKECUPTI_KERNELS_FIRST. The calls the fake knows, by name: */
#define FC_DRIVER_CALLS(X)                                                                         \
    X(cuLaunchKernel)                                                                              \
    X(cuLaunchKernel_ptsz)                                                                         \
    X(cuLaunchKernelEx)                                                                            \
    X(cuLaunchKernelEx_ptsz)                                                                       \
    X(cuLaunchCooperativeKernel)                                                                   \
    X(cuLaunchCooperativeKernel_ptsz)                                                              \
    X(cuGraphLaunch)                                                                               \
    X(cuGraphLaunch_ptsz)                                                                          \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxSetCurrent)                                                                             \
    X(cuCtxGetDevice)                                                                              \
    X(cuStreamIsCapturing)                                                                         \
    X(cuStreamIsCapturing_ptsz)                                                                    \
    X(cuStreamSynchronize)                                                                         \
    X(cuStreamSynchronize_ptsz)                                                                    \
    X(cuStreamQuery)                                                                               \
    X(cuStreamQuery_ptsz)
#define FC_RUNTIME_CALLS(X)                                                                        \
    X(__cudaLaunchKernel, v13000)                                                                  \
    X(__cudaLaunchKernel_ptsz, v13000)                                                             \
    X(cudaLaunchKernel, v7000)                                                                     \
    X(cudaLaunchKernel_ptsz, v7000)                                                                \
    X(cudaLaunchKernelExC, v11060)                                                                 \
    X(cudaLaunchKernelExC_ptsz, v11060)                                                            \
    X(cudaLaunchCooperativeKernel, v9000)                                                          \
    X(cudaLaunchCooperativeKernel_ptsz, v9000)                                                     \
    X(cudaGraphLaunch, v10000)                                                                     \
    X(cudaGraphLaunch_ptsz, v10000)                                                                \
    X(cudaStreamIsCapturing, v10000)                                                               \
    X(cudaStreamIsCapturing_ptsz, v10000)                                                          \
    X(cudaGetLastError, v3020)                                                                     \
    X(cudaPeekAtLastError, v3020)                                                                  \
    X(cudaSetDevice, v3020)                                                                        \
    X(cudaGetDevice, v3020)                                                                        \
    X(cudaDeviceSynchronize, v3020)                                                                \
    X(cudaMemcpyAsync, v3020)                                                                      \
    X(cudaMemcpyAsync_ptsz, v7000)                                                                 \
    X(cudaMemsetAsync, v3020)                                                                      \
    X(cudaMemsetAsync_ptsz, v7000)                                                                 \
    X(cudaStreamSynchronize, v3020)                                                                \
    X(cudaStreamSynchronize_ptsz, v7000)
static const struct call {
    const char *name;
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
} calls[] = {
#define FC_D(n) {#n, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##n},
#define FC_R(n, v) {#n, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##n##_##v},
    FC_DRIVER_CALLS(FC_D) FC_RUNTIME_CALLS(FC_R)
#undef FC_D
#undef FC_R
};
enum { NCALLS = sizeof calls / sizeof *calls, MAX_FRAMES = 16 };
/* Per call: frames seen, callbacks made, API records written; callbacks and records on. */
static _Atomic unsigned long long n_frames[NCALLS], n_callbacks[NCALLS], n_records[NCALLS];
static _Atomic int callback_on[NCALLS], record_on[NCALLS];
static CUpti_CallbackFunc subscriber_fn;
static void *subscriber_data;

static __thread struct frame {
    int call; /* index in calls[], -1 for a name the fake does not know */
    uint32_t corr;
    uint64_t start, data;
} frames[MAX_FRAMES];
static __thread int nframes;
/* A launch's operations, held until its outermost frame's exit (its API records first). */
static __thread fakecuda_op_t *held_ops;
static __thread size_t nheld_ops, held_cap;
static __thread uint64_t held_launch;

/* FAKECUPTI_CALLBACK_NS / _RECORD_NS: what CUPTI's work for a callback or a record costs the
 * calling thread, spent spinning on the clock. */
static void spend(int ns)
{
    if (ns <= 0) return;
    uint64_t end = mono_ns() + (uint64_t)ns;
    while (mono_ns() < end)
        ;
}

static int call_index(const char *name)
{
    static __thread struct {
        const char *ptr;
        int call;
    } cache[64];
    size_t h = ((uintptr_t)name >> 3) % 64;
    if (cache[h].ptr == name) return cache[h].call;
    int call = -1;
    for (int i = 0; i < (int)NCALLS && call < 0; i++)
        if (!strcmp(calls[i].name, name)) call = i;
    cache[h].ptr = name, cache[h].call = call;
    return call;
}

static void call_back(const struct frame *f, const char *name, int exit, int *result)
{
    if (f->call < 0 || subscriber_fn == NULL || !atomic_load(&callback_on[f->call])) return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = exit ? CUPTI_API_EXIT : CUPTI_API_ENTER;
    d.functionName = name;
    d.functionReturnValue = exit ? result : NULL;
    d.correlationId = f->corr;
    d.correlationData = (uint64_t *)&f->data;
    subscriber_fn(subscriber_data, calls[f->call].domain, calls[f->call].cbid, &d);
    atomic_fetch_add_explicit(&n_callbacks[f->call], 1, memory_order_relaxed);
    spend(callback_ns);
}

/* Whether the call's API record is wanted: its kind on, or its cbid alone. */
static int wants_record(int call)
{
    CUpti_ActivityKind kind = calls[call].domain == CUPTI_CB_DOMAIN_DRIVER_API
                                  ? CUPTI_ACTIVITY_KIND_DRIVER
                                  : CUPTI_ACTIVITY_KIND_RUNTIME;
    return enabled(kind) || atomic_load_explicit(&record_on[call], memory_order_relaxed);
}

static void api_record(const struct frame *f)
{
    if (!wants_record(f->call)) return;
    CUpti_ActivityKind kind = calls[f->call].domain == CUPTI_CB_DOMAIN_DRIVER_API
                                  ? CUPTI_ACTIVITY_KIND_DRIVER
                                  : CUPTI_ACTIVITY_KIND_RUNTIME;
    uint64_t end = now_ns();
    pthread_mutex_lock(&lock);
    /* As documented: an API record made inside an external region is preceded by the
     * external correlation record, so without API records there is none. */
    if (ext_depth > 0 && enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
        CUpti_ActivityExternalCorrelation *e = room_locked(sizeof *e);
        if (e) {
            e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            e->externalKind = ext_kind[ext_depth - 1];
            e->externalId = ext_stack[ext_depth - 1];
            e->correlationId = f->corr;
        }
    }
    CUpti_ActivityAPI *a = room_locked(sizeof *a);
    if (a) {
        a->kind = kind;
        a->cbid = calls[f->call].cbid;
        a->start = f->start, a->end = end > f->start ? end : f->start + 1;
        a->processId = pid;
        a->correlationId = f->corr;
    }
    pthread_mutex_unlock(&lock);
    atomic_fetch_add_explicit(&n_records[f->call], 1, memory_order_relaxed);
    spend(record_ns);
}

static void ops_now(const fakecuda_op_t *ops, size_t n, uint32_t corr, uint64_t launch)
{
    pthread_mutex_lock(&lock);
    release_held_locked();
    op_records_locked(ops, n, corr, launch);
    pthread_mutex_unlock(&lock);
}

static void on_api(int domain, const char *name, int exit, int result)
{
    (void)domain;
    if (!exit) {
        if (nframes++ >= MAX_FRAMES) return;
        struct frame *f = &frames[nframes - 1];
        f->call = call_index(name);
        f->corr = nested_same_id && nframes > 1 ? frames[0].corr
                                                : atomic_fetch_add(&next_correlation, 1) + 1;
        f->start = f->call >= 0 && wants_record(f->call) ? now_ns() : 0, f->data = 0;
        if (f->call >= 0) atomic_fetch_add_explicit(&n_frames[f->call], 1, memory_order_relaxed);
        call_back(f, name, 0, NULL);
        return;
    }
    if (nframes == 0) return; /* a frame whose entry came before the hook was installed */
    if (nframes-- > MAX_FRAMES) return;
    struct frame *f = &frames[nframes];
    call_back(f, name, 1, &result);
    if (f->call >= 0) api_record(f);
    if (nframes == 0 && nheld_ops > 0) {
        size_t n = nheld_ops;
        nheld_ops = 0;
        ops_now(held_ops, n, f->corr, held_launch);
    }
}

/* The fake driver's report of what one launch runs (fakecuda.h), on the launching thread,
 * inside the launch's frame. */
static void on_launch(const fakecuda_op_t *ops, size_t n)
{
    if (!enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return;
    uint64_t launch = now_ns();
    if (nframes == 0 || nframes > MAX_FRAMES) { /* no frame: an id of its own */
        ops_now(ops, n, atomic_fetch_add(&next_correlation, 1) + 1, launch);
        return;
    }
    if (kernels_first) { /* as when kernels land in an earlier buffer than their API record */
        ops_now(ops, n, frames[0].corr, launch);
        return;
    }
    if (nheld_ops + n > held_cap) {
        size_t cap = (nheld_ops + n) * 2;
        fakecuda_op_t *grown = realloc(held_ops, cap * sizeof *grown);
        if (grown == NULL) {
            ops_now(ops, n, frames[0].corr, launch);
            return;
        }
        held_ops = grown, held_cap = cap;
    }
    if (nheld_ops == 0) held_launch = launch;
    memcpy(held_ops + nheld_ops, ops, n * sizeof *ops);
    nheld_ops += n;
}

/* CUPTI does not follow fork: the child's callbacks and per-cbid records are off. */
static void after_fork_api(void)
{
    for (size_t i = 0; i < NCALLS; i++)
        atomic_store(&callback_on[i], 0), atomic_store(&record_on[i], 0);
    nframes = 0, nheld_ops = 0;
}

/* Per-cbid switches: every known call of that domain and cbid. */
static int set_for_cbid(_Atomic int *table, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        int on)
{
    int found = 0;
    for (size_t i = 0; i < NCALLS; i++)
        if (calls[i].domain == domain && calls[i].cbid == cbid)
            atomic_store(&table[i], on), found = 1;
    return found;
}

/* FAKECUPTI_STATS: per call, what CUPTI did for it, written at exit by the process that
 * started (a forked child's CUPTI does nothing). */
__attribute__((destructor)) static void write_stats(void)
{
    if (!stats_path[0] || (uint32_t)getpid() != pid) return;
    FILE *f = fopen(stats_path, "a");
    if (f == NULL) return;
    unsigned long long callbacks = 0, records = 0;
    for (size_t i = 0; i < NCALLS; i++) {
        unsigned long long fr = n_frames[i], cb = n_callbacks[i], rec = n_records[i];
        if (fr) fprintf(f, "frames %s %llu\n", calls[i].name, fr);
        if (cb) fprintf(f, "callbacks %s %llu\n", calls[i].name, cb);
        if (rec) fprintf(f, "api_records %s %llu\n", calls[i].name, rec);
        callbacks += cb, records += rec;
    }
    fprintf(f, "callbacks_total %llu\napi_records_total %llu\n", callbacks, records);
    fclose(f);
}

/* ---- the callback API: graph nodes ---- */
static _Atomic int node_cb_enabled[2]; /* GRAPHNODE_CREATED, GRAPHNODE_CLONED */

static void on_node(int cloned, CUgraph graph, CUgraphNode node, CUgraphNode original,
                    CUgraphNodeType type)
{
    if (!atomic_load(&node_cb_enabled[cloned]) || subscriber_fn == NULL) return;
    CUpti_GraphData g = {0};
    g.graph = graph, g.node = node, g.originalNode = original, g.nodeType = type;
    CUpti_ResourceData rd = {0};
    rd.resourceDescriptor = &g;
    subscriber_fn(
        subscriber_data, CUPTI_CB_DOMAIN_RESOURCE,
        cloned ? CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED : CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &rd);
}

static void *driver_symbol(const char *name)
{
    void *driver = dlopen("libcuda.so.1", RTLD_NOW);
    return driver ? dlsym(driver, name) : NULL;
}

static void install_api_hook(void)
{
    void (*set_hook)(fakecuda_api_fn) =
        (void (*)(fakecuda_api_fn))driver_symbol("fakecuda_set_api_hook");
    if (set_hook) set_hook(on_api);
}

FC_API CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    configure();
    if (no_per_cbid) return CUPTI_ERROR_NOT_SUPPORTED; /* FAKECUPTI_NO_PER_CBID: before 12.5 */
    if (cbid == 0 || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
    set_for_cbid(record_on, CUPTI_CB_DOMAIN_DRIVER_API, cbid, enable != 0);
    install_api_hook();
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    configure();
    if (no_per_cbid) return CUPTI_ERROR_NOT_SUPPORTED;
    if (cbid == 0 || cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
    set_for_cbid(record_on, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, enable != 0);
    install_api_hook();
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    configure();
    if (subscriber == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    if (subscriber_fn != NULL) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    subscriber_fn = callback, subscriber_data = userdata;
    *subscriber = (CUpti_SubscriberHandle)&subscriber_fn;
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    (void)subscriber;
    subscriber_fn = NULL;
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (subscriber == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (no_api_callbacks) return CUPTI_ERROR_NOT_SUPPORTED; /* FAKECUPTI_NO_API_CALLBACKS */
        CUpti_CallbackId size = domain == CUPTI_CB_DOMAIN_DRIVER_API
                                    ? (CUpti_CallbackId)CUPTI_DRIVER_TRACE_CBID_SIZE
                                    : (CUpti_CallbackId)CUPTI_RUNTIME_TRACE_CBID_SIZE;
        if (cbid == 0 || cbid >= size) return CUPTI_ERROR_INVALID_PARAMETER;
        set_for_cbid(callback_on, domain, cbid, enable != 0); /* a call the fake never makes: ok */
        install_api_hook();
        return CUPTI_SUCCESS;
    }
    if (domain != CUPTI_CB_DOMAIN_RESOURCE) return CUPTI_ERROR_INVALID_PARAMETER;
    if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED &&
        cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (getenv("FAKECUPTI_NO_GRAPH_CALLBACKS") && atoi(getenv("FAKECUPTI_NO_GRAPH_CALLBACKS")))
        return CUPTI_ERROR_INVALID_PARAMETER; /* an older CUPTI: no such callback */
    void (*set_hook)(fakecuda_node_fn) =
        (void (*)(fakecuda_node_fn))driver_symbol("fakecuda_set_node_hook");
    if (set_hook == NULL) return CUPTI_ERROR_NOT_INITIALIZED;
    atomic_store(&node_cb_enabled[cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED], enable != 0);
    set_hook(on_node);
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
    static unsigned long long (*node_id)(CUgraphNode);
    if (node_id == NULL)
        node_id = (unsigned long long (*)(CUgraphNode))driver_symbol("fakecuda_node_id");
    if (node_id == NULL || id == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    *id = node_id(node);
    return *id ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- the API ---- */
FC_API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
    configure();
    maybe_hang("register");
    sleep_ms(start_delay_ms);
    if (req == NULL || done == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW);
    void (*set_hook)(fakecuda_activity_fn) =
        driver ? (void (*)(fakecuda_activity_fn))dlsym(driver, "fakecuda_set_activity_hook") : NULL;
    if (set_hook == NULL) return CUPTI_ERROR_NOT_INITIALIZED; /* not the fake driver */
    requested = req, completed = done;
    set_hook(on_launch);
    install_api_hook(); /* every call's frame: correlation ids, API records */
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    timestamp_fn = fn;
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
    if (ts == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    *ts = now_ns();
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    configure();
    maybe_hang("enable");
    if (refuse) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if ((unsigned)kind >= 64 || record_size(kind) == 0) return CUPTI_ERROR_NOT_COMPATIBLE;
    enabled_kinds[kind] = 1;
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind < 64) enabled_kinds[kind] = 0;
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    maybe_hang("flush");
    if (fail_flush) return CUPTI_ERROR_UNKNOWN;
    pthread_mutex_lock(&lock);
    release_held_locked();
    complete_locked();
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                              CUpti_Activity **record)
{
    if (buffer == NULL || record == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *next = *record == NULL ? buffer : (uint8_t *)*record + record_size((*record)->kind);
    if (next + sizeof(CUpti_Activity) > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
    (void)ctx, (void)stream;
    maybe_hang("dropped");
    if (n == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    static _Atomic int slowed;
    if (slow_buffer_ms > 0 && !atomic_exchange(&slowed, 1)) sleep_ms(slow_buffer_ms);
    pthread_mutex_lock(&lock);
    *n = dropped;
    dropped = 0; /* reported once: the count since the last call */
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
        kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (ext_depth == 16) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    if (push_fail_after >= 0 && atomic_fetch_add(&pushes, 1) >= push_fail_after)
        return CUPTI_ERROR_UNKNOWN;
    ext_kind[ext_depth] = kind;
    ext_stack[ext_depth++] = id;
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *last)
{
    if (ext_depth == 0 || ext_kind[ext_depth - 1] != kind) return CUPTI_ERROR_QUEUE_EMPTY;
    ext_depth--;
    if (last) *last = ext_stack[ext_depth];
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    if (str == NULL) return CUPTI_ERROR_INVALID_PARAMETER;
    switch (result) {
    case CUPTI_SUCCESS:
        *str = "CUPTI_SUCCESS";
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    case CUPTI_ERROR_NOT_INITIALIZED:
        *str = "CUPTI_ERROR_NOT_INITIALIZED";
        break;
    default:
        *str = "CUPTI_ERROR_UNKNOWN";
        break;
    }
    return CUPTI_SUCCESS;
}

FC_API CUptiResult cuptiGetLastError(void)
{
    return CUPTI_SUCCESS;
}
