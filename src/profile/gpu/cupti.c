/* GPU time in profile mode: loads CUPTI at run time and drives its activity API.
 *
 * Only with NVTXCORR_PROFILE (not trace-only), only without an NVTX tool (a tool is Nsight,
 * which owns CUPTI), and never in the range path. libcupti is dlopened, never linked: the
 * library keeps no NEEDED entry on it. Where it is looked for, first found wins:
 * NVTXCORR_CUPTI_LIBRARY (only that, when set); $CUDA_HOME then /usr/local/cuda (lib64, then
 * extras/CUPTI/lib64); the nvidia-cuda-cupti wheel next to a loaded libcudart; the plain
 * soname (cupti_load.c). NVTXCORR_GPU=0 turns it off.
 *
 * Correlation (the default, NVTXCORR_GPU_CORRELATION=callbacks): CUPTI's callback API for the
 * launch entry points alone (driver and runtime domains), as Proton does. A kernel record carries
 * the correlation id of the outermost API call that launched it: the runtime's, when a runtime
 * made the launch, even one nvtxcorr cannot interpose (a static cudart, cuBLAS's built-in one),
 * whose nested driver call nvtxcorr's hook does see. So around each launch it wraps, nvtxcorr
 * keeps the launch's id (site, program context, window, sequence) in a thread-local; the
 * callbacks, on the launching thread inside the call, tie CUPTI's id to it:
 *   a runtime launch's entry   notes its correlation id (the outermost runtime launch only)
 *                              and the id a hook around it set (a shared cudart nvtxcorr hooks);
 *   a driver launch's exit     inside a runtime launch: gives it the id of the hook around this
 *                              driver call, if it has none yet; alone: maps its own correlation
 *                              id to that id;
 *   a runtime launch's exit    maps its correlation id to the id it was given.
 * A successful launch no hook saw is mapped to "[not hooked]", so its work keeps its program
 * context and window and is counted by kernel name under that launch label. Only launches
 * call back, and no API activity record is made at all: PyTorch's several other CUDA calls per
 * op cost CUPTI nothing.
 *
 * NVTXCORR_GPU_CORRELATION=external, and the fallback when the callbacks cannot be had: an
 * external correlation id (CUSTOM2: Kineto, PyTorch's profiler, uses CUSTOM0 and CUSTOM1)
 * pushed around each launch nvtxcorr wraps; CUPTI writes an EXTERNAL_CORRELATION record for each
 * API record made under it, so the driver and runtime API records are enabled too: for the
 * launch entry points alone where CUPTI can (cuptiActivityEnableDriverApi/RuntimeApi, 12.5+),
 * else for every call (the NVTXCORR_GPU_CORRELATION=external comparison keeps all of them). A
 * launch made by a runtime nvtxcorr cannot interpose is uncorrelated there.
 *
 * When CUPTI is missing or refuses (another subscriber, a driver it cannot attach to, any
 * error), the run goes on with the CPU-side summary: one warning per process, and the reason
 * in the summary's gpu_time_note. A forked child does not inherit CUPTI's threads or state:
 * it reports no GPU time, and says so at its first launch. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "context/context.h"
#include "core/attributes.h"
#include "core/config.h"
#include "core/emit.h"
#include "core/fork.h"
#include "core/slowstack.h"
#include "core/state.h"
#include "cupti.h"
#include "gpu.h"
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "profile/counting/context_stats.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/counting/windows.h"
#include "session.h"
/* Why there is no (or only partial) GPU time: written here only, read through
 * nvtxcorr_prof_gpu_note; others say why through nvtxcorr_prof_gpu_set_partial. Two buffers,
 * one shown (a pointer published with release): CUPTI's start writes its outcome on the first
 * launching thread while a window's summary may read the note on the window helper, so the
 * start writes the buffer not shown and then shows it. The other writers (start-up, a forked
 * child, the summary's end) write the shown one, while no summary reads it. */
enum { NOTE_SIZE = 512 };
static char note_bufs[2][NOTE_SIZE];
static char *_Atomic note_shown = note_bufs[0];
static char *note_target = note_bufs[0]; /* where note() writes */
static int gpu_tried, warn_at_launch;
/* CUPTI starts at the first launch, not at initialisation: initialisation can run inside
 * cudart's own start-up (its cuGetProcAddress calls) or a library constructor, where enabling
 * CUPTI (threads, driver calls, callbacks into the runtime) could deadlock. `start_pending`
 * is set at initialisation; the first launching thread to claim `start_claimed` starts it,
 * and launches on other threads meanwhile wait for it, a bounded time. */
static _Atomic int start_pending;
static _Atomic int start_claimed;

static void note_in(char *to, const char *a, const char *b, const char *c)
{
    snprintf(to, NOTE_SIZE, "%s%s%s", a, b ? b : "", c ? c : "");
}
static void note(const char *a, const char *b, const char *c)
{
    note_in(note_target, a, b, c);
}

const char *nvtxcorr_prof_gpu_note(void)
{
    const char *shown = atomic_load_explicit(&note_shown, memory_order_acquire);
    return shown[0] ? shown : NULL;
}

/* Async-signal-safe: a plain copy. */
void nvtxcorr_prof_gpu_set_partial(const char *why)
{
    char *shown = atomic_load_explicit(&note_shown, memory_order_acquire);
    if (shown[0] != 0) return;
    size_t n = strlen(why);
    if (n >= NOTE_SIZE) n = NOTE_SIZE - 1;
    memcpy(shown, why, n);
    shown[n] = 0;
}

#ifdef NVTXCORR_HAVE_CUPTI
#include <cupti.h>

/* The external correlation kind nvtxcorr pushes around a launch: CUSTOM2, since PyTorch's
 * profiler (Kineto) uses CUSTOM0 and CUSTOM1 and CUPTI keeps one id per kind. */
#define NVTXCORR_CUPTI_EXTERNAL_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

/* The entry points used, resolved with dlsym (names and types from the headers). */
#define CUPTI_FUNCTIONS(X)                                                                         \
    X(cuptiActivityRegisterCallbacks, 1)                                                           \
    X(cuptiActivityEnable, 1)                                                                      \
    X(cuptiActivityDisable, 1)                                                                     \
    X(cuptiActivityFlushAll, 1)                                                                    \
    X(cuptiActivityGetNextRecord, 1)                                                               \
    X(cuptiActivityGetNumDroppedRecords, 1)                                                        \
    X(cuptiActivityPushExternalCorrelationId, 1)                                                   \
    X(cuptiActivityPopExternalCorrelationId, 1)                                                    \
    X(cuptiGetResultString, 1)                                                                     \
    X(cuptiGetLastError, 0)                                                                        \
    X(cuptiGetTimestamp, 0)                                                                        \
    X(cuptiActivityRegisterTimestampCallback, 0)                                                   \
    X(cuptiSubscribe, 0)                                                                           \
    X(cuptiUnsubscribe, 0)                                                                         \
    X(cuptiEnableCallback, 0)                                                                      \
    X(cuptiGetGraphNodeId, 0)                                                                      \
    X(cuptiActivityEnableDriverApi, 0)                                                             \
    X(cuptiActivityEnableRuntimeApi, 0)
#define SLOT(name, required) __typeof__(&name) name;
static struct {
    CUPTI_FUNCTIONS(SLOT)
} api;
#undef SLOT

enum { BUFFER_BYTES = 1 << 20 };

/* Why CUPTI did not start, as the CUPTI thread found it (copied into the note by the thread
 * that waited for it, unless that one gave up waiting and wrote its own reason). */
static char start_note[NOTE_SIZE];

static const char *result_name(CUptiResult r)
{
    const char *s = NULL;
    if (api.cuptiGetResultString == NULL || api.cuptiGetResultString(r, &s) != CUPTI_SUCCESS ||
        s == NULL)
        s = "CUPTI error";
    return s;
}

/* ---- buffers ----
 * A few given-back buffers are kept for the next request: a fresh 1 MiB buffer is an mmap,
 * 256 page faults and an munmap, a few hundred ns per launch at high launch rates.
 *
 * Every buffer handed to CUPTI is listed in `lent`, with the flush generation it was lent in:
 * - only a listed buffer is reused or freed, so a buffer of another CUPTI client that reaches
 *   our completion callback (it registered before us) is read but never taken;
 * - at most LENT_MAX are out at once (64 MiB): past that CUPTI gets no buffer and drops
 *   records, which the summary reports, rather than memory growing without bound;
 * - the exit flush waits only for buffers lent before it began, so other threads' API calls
 *   during exit do not keep it waiting. */
enum { SPARE_BUFFERS = 4, LENT_MAX = 64 };
static uint8_t *spare[SPARE_BUFFERS];
static struct {
    uint8_t *buffer;
    unsigned generation;
} lent[LENT_MAX];
static unsigned generation; /* under spare_lock */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
/* The process CUPTI was started in: a forked child lends nothing. Atomic: CUPTI may ask for a
 * buffer on any thread, with nothing between the start's store and that thread's load. */
static _Atomic pid_t cupti_pid;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint64_t own = prof_own_enter();
    uint8_t *b = NULL, *fresh = NULL;
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    if (getpid() != atomic_load_explicit(&cupti_pid, memory_order_relaxed))
        return;              /* CUPTI's state survived a fork: give it nothing */
    nvtxcorr_thread.depth++; /* our locks are held: an exit() on this thread must not wait */
    pthread_mutex_lock(&spare_lock);
    int slot = -1;
    for (int i = 0; i < LENT_MAX && slot < 0; i++)
        if (lent[i].buffer == NULL) slot = i;
    for (int i = 0; i < SPARE_BUFFERS && b == NULL && slot >= 0; i++)
        if (spare[i]) b = spare[i], spare[i] = NULL;
    if (b == NULL && slot >= 0) fresh = b = nvtxcorr_prof_zalloc(BUFFER_BYTES);
    if (b) lent[slot].buffer = b, lent[slot].generation = generation;
    pthread_mutex_unlock(&spare_lock);
    /* A fresh buffer's pages are touched here, while nvtxcorr's own time is counted, rather
     * than by CUPTI's writes into it inside later launch calls (256 page faults per buffer). */
    if (fresh) memset(fresh, 0, BUFFER_BYTES);
    nvtxcorr_thread.depth--;
    *buffer = b;
    *size = b ? BUFFER_BYTES : 0;
    prof_own_leave(own);
}

/* Takes a completed buffer back, if it is ours, and keeps or frees it. Another client's is
 * left alone. */
static void give_back(uint8_t *b)
{
    int ours = 0;
    pthread_mutex_lock(&spare_lock);
    for (int i = 0; i < LENT_MAX && !ours; i++)
        if (lent[i].buffer == b) lent[i].buffer = NULL, ours = 1;
    for (int i = 0; i < SPARE_BUFFERS && b && ours; i++)
        if (spare[i] == NULL) spare[i] = b, b = NULL;
    pthread_mutex_unlock(&spare_lock);
    if (ours && b) munmap(b, BUFFER_BYTES);
}

/* Starts a flush generation; returns it. */
static unsigned next_generation(void)
{
    pthread_mutex_lock(&spare_lock);
    unsigned g = generation++;
    pthread_mutex_unlock(&spare_lock);
    return g;
}

/* Whether a buffer lent in generation <= g is still out. */
static int lent_before(unsigned g)
{
    int out = 0;
    pthread_mutex_lock(&spare_lock);
    for (int i = 0; i < LENT_MAX && !out; i++)
        out = lent[i].buffer != NULL && (int)(lent[i].generation - g) <= 0;
    pthread_mutex_unlock(&spare_lock);
    return out;
}

/* One activity record, handed to gpu.c in its neutral form: a correlation, or an operation
 * (the record types are those of the CUPTI headers built against; CUPTI writes records of
 * the layout the client asked for by using those names). */
static void record(const CUpti_Activity *a)
{
    prof_gpu_op_t op;
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *e = (const void *)a;
        if (e->externalKind == NVTXCORR_CUPTI_EXTERNAL_KIND)
            nvtxcorr_prof_gpu_correlation(e->correlationId, e->externalId);
        return;
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)a;
        op = (prof_gpu_op_t){.kind = PROF_GPU_KERNEL,
                             .name = k->name,
                             .corr = k->correlationId,
                             .device = k->deviceId,
                             .stream = k->streamId,
                             .start = k->start,
                             .end = k->end};
        op.shape = (prof_gpu_shape_t){
            .grid = {(uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ},
            .block = {(uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ},
            .graph_id = k->graphId,
            .graph_node_id = k->graphNodeId};
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)a;
        op = (prof_gpu_op_t){.kind = PROF_GPU_MEMCPY,
                             .corr = m->correlationId,
                             .device = m->deviceId,
                             .stream = m->streamId,
                             .start = m->start,
                             .end = m->end};
        op.shape = (prof_gpu_shape_t){.graph_id = m->graphId, .graph_node_id = m->graphNodeId};
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)a;
        op = (prof_gpu_op_t){.kind = PROF_GPU_MEMSET,
                             .corr = m->correlationId,
                             .device = m->deviceId,
                             .stream = m->streamId,
                             .start = m->start,
                             .end = m->end};
        op.shape = (prof_gpu_shape_t){.graph_id = m->graphId, .graph_node_id = m->graphNodeId};
        break;
    }
    default:
        return;
    }
    nvtxcorr_prof_gpu_operation(&op);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)size;
    if (buffer == NULL) return;
    uint64_t own = prof_own_enter();
    nvtxcorr_thread.depth++; /* as in buffer_requested */
    size_t dropped = 0;
    if (api.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS) dropped = 0;
    nvtxcorr_prof_gpu_begin_buffer(dropped);
    CUpti_Activity *rec = NULL;
    while (api.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        record(rec);
    nvtxcorr_prof_gpu_end_buffer();
    give_back(buffer);
    prof_own_leave(own);
    nvtxcorr_thread.depth--;
}

/* Activity timestamps on the trace's clock, so GPU events line up with launches. */
static uint64_t CUPTIAPI timestamp_now(void)
{
    return prof_ticks_ns(prof_now() - nvtxcorr_prof_clock.origin) + 1;
}

/* Graph memcpy and memset nodes: their kinds are taken where CUPTI gives them. */
static const CUpti_ActivityKind optional[] = {CUPTI_ACTIVITY_KIND_MEMCPY,
                                              CUPTI_ACTIVITY_KIND_MEMSET};

/* The loading part of CUPTI's start, on the launching thread: dlopen runs libcupti's ELF
 * constructors only, and stays on the thread that may hold the loader lock (a first launch
 * from a library constructor), where another thread's dlopen would wait for it. */
static int load_cupti(void)
{
    char tried[2048] = "";
    void *h = nvtxcorr_prof_cupti_open(tried, sizeof tried);
    if (h == NULL) {
        note("libcupti not found or not loadable (tried ", tried[0] ? tried : "nothing", ")");
        return -1;
    }
#define RESOLVE(name, req)                                                                         \
    api.name = (__typeof__(api.name))dlsym(h, #name);                                              \
    if (req && api.name == NULL) {                                                                 \
        note("libcupti lacks ", #name, "");                                                        \
        return -1;                                                                                 \
    }
    CUPTI_FUNCTIONS(RESOLVE)
#undef RESOLVE
    atomic_store_explicit(&cupti_pid, getpid(), memory_order_relaxed);
    const nvtxcorr_profile_site_t *not_hooked = nvtxcorr_prof_op_site("[not hooked]");
    if (not_hooked != NULL) nvtxcorr_prof_not_hooked_site = not_hooked->id;
    if (nvtxcorr_prof_gpu_init() != 0) {
        note("out of memory", NULL, NULL);
        return -1;
    }
    return 0;
}

/* ---- correlation by the launch callbacks ---- */
/* The launch entry points whose callbacks are asked for (cupti_driver_cbid.h,
 * cupti_runtime_cbid.h); the first two of the driver's must be had, the rest are taken where
 * this CUPTI knows them. Nothing else calls back. */
static const CUpti_CallbackId driver_launches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
};
enum { DRIVER_REQUIRED = 2 };
static const CUpti_CallbackId runtime_launches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
#if CUPTI_API_VERSION >= 130000 /* <<<>>> in CUDA 13 */
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
#endif
};

/* How kernels are tied to launches in this process (set before CUPTI is enabled). */
static int by_callbacks;
/* The launch this thread's hook is inside: its id, SKIP_ID (its work is not counted: a
 * captured launch, or one with no site), or 0 (no hook around this call). */
enum { SKIP_ID = 1 };
static __thread uint64_t launch_id __attribute__((tls_model("initial-exec")));
/* The outermost runtime launch open on this thread (runtime launches nest: __cudaLaunchKernel
 * may call cudaLaunchKernel); its kernels carry its correlation id. `id`: what a hook around
 * it, or around a driver launch inside it, set. */
static __thread struct {
    uint32_t depth, corr;
    uint64_t id;
} runtime_launch __attribute__((tls_model("initial-exec")));
static int window_tags; /* NVTXCORR_WINDOW: each id carries its launch's window */
static __thread uint64_t id_seq __attribute__((tls_model("initial-exec")));

/* A launch's id: the site (15 bits), the launch's context (17 bits: gpu.c attributes its work
 * there), and a per-thread sequence whose top byte is the thread's (never 0, so an id is never
 * 0 or SKIP_ID). With windows (NVTXCORR_WINDOW) the sequence's next byte is the launch's window
 * (its index mod 256: gpu.c counts its work in that window's summary), the sequence itself 16
 * bits. */
static uint64_t make_id(uint32_t site, uint32_t ctx)
{
    uint64_t seq = id_seq;
    if (NVTXCORR_UNLIKELY(seq == 0)) seq = (uint64_t)((syscall(SYS_gettid) & 0x7f) | 0x80) << 24;
    id_seq = ++seq;
    if (window_tags)
        seq = (seq & 0xff00ffffull) |
              (atomic_load_explicit(&nvtxcorr_prof_windows_opened, memory_order_relaxed) & 0xff)
                  << 16;
    return (uint64_t)site << 49 | (uint64_t)(ctx & 0x1ffff) << 32 | (seq & 0xffffffffull);
}

/* Set once the exit flush began: later launches (atexit handlers, destructors) are counted
 * on the CPU side only and never call into CUPTI, which may be finalising. */

/* CUPTI's id `corr` belongs to the launch `id` (0: one no hook saw). */
static void map_launch(uint32_t corr, uint64_t id)
{
    if (id == SKIP_ID || nvtxcorr_prof_gpu_closing_relaxed()) return;
    if (id == 0) {
        /* Between windows a launch passes straight through every hook: its work is in no
         * window, as a hooked one's. */
        if ((window_tags &&
             atomic_load_explicit(&nvtxcorr_mode, memory_order_relaxed) != NVTXCORR_MODE_PROFILE) ||
            nvtxcorr_prof_not_hooked_site == PROF_NO_LABEL)
            return;
        id = make_id(nvtxcorr_prof_not_hooked_site, nvtxcorr_context_now());
    }
    nvtxcorr_prof_gpu_correlation(corr, id);
}

static int call_failed(const CUpti_CallbackData *cb)
{
    /* A CUresult or a cudaError_t: 0 is success in both. */
    return cb->functionReturnValue != NULL && *(const int *)cb->functionReturnValue != 0;
}

/* Graph nodes' capture context (context_stats.c): CUPTI's resource callbacks, made on the
 * thread that creates a node (stream capture, cuGraphAdd*Node) and on the one that
 * instantiates (each exec node cloned from its source node), inside the CUDA call. A node
 * gets the context open on that thread; a clone its source's. The kernel records of a replay
 * carry the exec node's id (graphNodeId), which finds it. */
static void graph_node_event(CUpti_CallbackId cbid, const CUpti_ResourceData *data)
{
    const CUpti_GraphData *g = data->resourceDescriptor;
    uint64_t node = 0, original = 0;
    if (g == NULL || g->node == NULL || api.cuptiGetGraphNodeId(g->node, &node) != CUPTI_SUCCESS)
        return;
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED)
        nvtxcorr_prof_ctx_node_set(node, nvtxcorr_context_now());
    else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && g->originalNode != NULL &&
             api.cuptiGetGraphNodeId(g->originalNode, &original) == CUPTI_SUCCESS)
        nvtxcorr_prof_ctx_node_clone(original, node);
}

/* Every callback of the one subscriber: the launch entry points and the graph node events,
 * on the calling thread, inside the CUDA call. No lock, no allocation. */
static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)user;
    if (data == NULL ||
        atomic_load_explicit(&nvtxcorr_prof_gpu_on, memory_order_relaxed) != PROF_GPU_COLLECTING)
        return; /* a forked child (CUPTI's state did not follow), or CUPTI given up */
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        graph_node_event(cbid, data);
        return;
    }
    const CUpti_CallbackData *cb = data;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        if (cb->callbackSite == CUPTI_API_ENTER) {
            if (runtime_launch.depth++ == 0)
                runtime_launch.corr = cb->correlationId, runtime_launch.id = launch_id;
            return;
        }
        if (runtime_launch.depth == 0 || --runtime_launch.depth != 0) return;
        if (!call_failed(cb)) map_launch(runtime_launch.corr, runtime_launch.id);
        runtime_launch.id = 0;
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cb->callbackSite != CUPTI_API_EXIT) return;
    if (runtime_launch.depth) { /* its kernels carry the runtime launch's id */
        if (runtime_launch.id == 0) runtime_launch.id = launch_id;
        return;
    }
    if (!call_failed(cb)) map_launch(cb->correlationId, launch_id);
}

/* Graph nodes' contexts unavailable: why, from CUPTI's result (or its missing entry points). */
static void nodes_unavailable(CUptiResult r)
{
    static char why[160];
    if (r == CUPTI_ERROR_NOT_SUPPORTED)
        snprintf(why, sizeof why, "this CUPTI lacks the graph node callbacks");
    else
        snprintf(why, sizeof why, "CUPTI's graph node callbacks unavailable: %s", result_name(r));
    nvtxcorr_prof_ctx_node_unavailable(why);
    if (api.cuptiGetLastError) api.cuptiGetLastError();
}

/* The one subscriber (CUPTI allows one per process): the graph node callbacks, best effort
 * (without them, an older CUPTI or another subscriber, a replayed kernel counts under its
 * graph launch's path, and the summary's context_note says so), and with correlation by
 * callbacks the launch entry points, which must be had. Returns 0, or -1 when the launch
 * callbacks could not be had (the reason in `why`). */
static int subscribe(char *why, size_t size)
{
    static CUpti_SubscriberHandle subscriber;
    int want_launches = !nvtxcorr_config.gpu_external;
    if (api.cuptiSubscribe == NULL || api.cuptiEnableCallback == NULL) {
        snprintf(why, size, "this CUPTI lacks the callback API");
        nodes_unavailable(CUPTI_ERROR_NOT_SUPPORTED);
        return want_launches ? -1 : 0;
    }
    CUptiResult r = api.cuptiSubscribe(&subscriber, on_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, size, "cuptiSubscribe: %s", result_name(r));
        nodes_unavailable(r);
        return want_launches ? -1 : 0;
    }
    r = api.cuptiGetGraphNodeId == NULL
            ? CUPTI_ERROR_NOT_SUPPORTED
            : api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                      CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
    if (r == CUPTI_SUCCESS)
        r = api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
    if (r != CUPTI_SUCCESS) nodes_unavailable(r);
    if (!want_launches) return 0;
    for (size_t i = 0; i < sizeof driver_launches / sizeof *driver_launches; i++) {
        r = api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, driver_launches[i]);
        if (r != CUPTI_SUCCESS && i < DRIVER_REQUIRED) {
            snprintf(why, size, "cuptiEnableCallback(driver launch %u): %s",
                     (unsigned)driver_launches[i], result_name(r));
            for (size_t j = 0; j < i; j++)
                api.cuptiEnableCallback(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                        driver_launches[j]);
            if (api.cuptiGetLastError) api.cuptiGetLastError();
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof runtime_launches / sizeof *runtime_launches; i++)
        api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_launches[i]);
    if (api.cuptiGetLastError) api.cuptiGetLastError(); /* a cbid this CUPTI does not know */
    return 0;
}

/* Activity kinds: the operations, and with external correlation its records and the API
 * records they are made for. */
enum { MAX_KINDS = 8 };
static CUpti_ActivityKind kinds_on[MAX_KINDS];
static size_t nkinds_on;

/* Enables one kind; on failure writes why to start_note and disables every kind enabled. */
static int enable_kind(CUpti_ActivityKind kind, const char *name)
{
    CUptiResult r = api.cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
        if (nkinds_on < MAX_KINDS) kinds_on[nkinds_on++] = kind;
        return 0;
    }
    while (nkinds_on > 0)
        api.cuptiActivityDisable(kinds_on[--nkinds_on]);
    if (api.cuptiGetLastError) api.cuptiGetLastError(); /* clear CUPTI's sticky error */
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        note_in(start_note,
                "another CUPTI client is active (Nsight Systems, Nsight Compute, "
                "torch.profiler?): ",
                result_name(r), NULL);
    else {
        note_in(start_note, "cuptiActivityEnable(", name, ") failed: ");
        size_t n = strlen(start_note);
        snprintf(start_note + n, sizeof start_note - n, "%s", result_name(r));
    }
    return -1;
}

/* External correlation's API records: for the launch entry points alone where this CUPTI can
 * (12.5+), unless NVTXCORR_GPU_CORRELATION=external asked for the comparison with every call. */
static int enable_api_records(void)
{
    int per_cbid = !nvtxcorr_config.gpu_external && api.cuptiActivityEnableDriverApi &&
                   api.cuptiActivityEnableRuntimeApi;
    for (size_t i = 0; per_cbid && i < sizeof driver_launches / sizeof *driver_launches; i++)
        if (api.cuptiActivityEnableDriverApi(driver_launches[i], 1) != CUPTI_SUCCESS &&
            i < DRIVER_REQUIRED)
            per_cbid = 0;
    for (size_t i = 0; per_cbid && i < sizeof runtime_launches / sizeof *runtime_launches; i++)
        api.cuptiActivityEnableRuntimeApi(runtime_launches[i], 1);
    if (api.cuptiGetLastError) api.cuptiGetLastError();
    if (per_cbid) return 0;
    return enable_kind(CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER") ||
           enable_kind(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME");
}

/* The CUPTI calls of the start, on the CUPTI thread; a failure's reason goes to start_note.
 * The timestamp callback is registered here, once per process: windows never register it
 * again (PyTorch found that registering it again corrupts the next session's first records). */
static int enable_cupti(void)
{
    CUptiResult r = api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        note_in(start_note, "cuptiActivityRegisterCallbacks: ", result_name(r), NULL);
        return -1;
    }
    if (api.cuptiActivityRegisterTimestampCallback == NULL ||
        api.cuptiActivityRegisterTimestampCallback(timestamp_now) != CUPTI_SUCCESS) {
        uint64_t ours = prof_ticks_ns(prof_now() - nvtxcorr_prof_clock.origin);
        uint64_t theirs = 0;
        if (api.cuptiGetTimestamp && api.cuptiGetTimestamp(&theirs) == CUPTI_SUCCESS)
            nvtxcorr_prof_gpu_set_clock_offset(theirs - ours);
    } else {
        nvtxcorr_prof_gpu_set_clock_offset(1);
    }
    if (enable_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL") != 0) return -1;
    char why[NOTE_SIZE] = "";
    by_callbacks = subscribe(why, sizeof why) == 0 && !nvtxcorr_config.gpu_external;
    if (!by_callbacks && !nvtxcorr_config.gpu_external)
        nvtxcorr_prof_say("warn", "GPU time: CUPTI's launch callbacks unavailable (", why,
                          "): external correlation instead; launches of a runtime nvtxcorr "
                          "cannot interpose count as uncorrelated",
                          (char *)NULL);
    if (!by_callbacks &&
        (enable_kind(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION") != 0 ||
         enable_api_records() != 0))
        return -1;
    for (size_t i = 0; i < sizeof optional / sizeof *optional; i++)
        if (api.cuptiActivityEnable(optional[i]) == CUPTI_SUCCESS) {
            if (nkinds_on < MAX_KINDS) kinds_on[nkinds_on++] = optional[i];
        } else if (api.cuptiGetLastError) {
            api.cuptiGetLastError();
        }
    return 0;
}

const char *nvtxcorr_prof_gpu_correlation_mode(void)
{
    if (nvtxcorr_prof_gpu_on != PROF_GPU_COLLECTING) return NULL;
    return by_callbacks ? "callbacks" : "external";
}

/* Launches whose external correlation push CUPTI refused (its own error, or a thread's id
 * stack full): their GPU time cannot reach their label and counts as uncorrelated. Said
 * once, at the first, and in gpu_time_note with the count (nvtxcorr_prof_gpu_note_failures). */
static _Atomic uint64_t push_failures;
static char push_error[96]; /* the first failure's result, once push_error_set */
static _Atomic int push_error_set;

static void __attribute__((noinline, cold)) push_failed(CUptiResult r)
{
    if (atomic_fetch_add_explicit(&push_failures, 1, memory_order_relaxed) != 0) return;
    snprintf(push_error, sizeof push_error, "%s", result_name(r));
    atomic_store_explicit(&push_error_set, 1, memory_order_release);
    nvtxcorr_prof_say("warn", "GPU time partial: cuptiActivityPushExternalCorrelationId failed (",
                      push_error, "): the kernels of launches it fails for count as uncorrelated",
                      (char *)NULL);
}

void nvtxcorr_prof_gpu_note_failures(void)
{
    static int noted;
    uint64_t n = atomic_load_explicit(&push_failures, memory_order_relaxed);
    if (n == 0 || noted++) return;
    /* Async-signal-safe (the summary may be written from a signal handler): no snprintf. */
    char count[24], *note = atomic_load_explicit(&note_shown, memory_order_acquire);
    count[nvtxcorr_fmt_u64(count, n)] = 0;
    const char *parts[] = {
        note[0] ? "; " : "",
        "cuptiActivityPushExternalCorrelationId failed for ",
        count,
        n == 1 ? " launch (" : " launches (",
        atomic_load_explicit(&push_error_set, memory_order_acquire) ? push_error : "CUPTI error",
        "): their GPU time is in gpu_uncorrelated_ns, not in their labels"};
    nvtxcorr_prof_join(note, NOTE_SIZE, strlen(note), parts, sizeof parts / sizeof *parts);
}

void nvtxcorr_prof_gpu_push(nvtxcorr_profile_launch_t *pl, uint32_t site)
{
    if (nvtxcorr_prof_gpu_closing_relaxed()) {
        pl->ext = 0;
        return;
    }
    if (by_callbacks) { /* the callbacks inside the call read it (on_callback) */
        pl->ext = launch_id = site == PROF_NO_LABEL ? SKIP_ID : make_id(site, pl->ctx);
        return;
    }
    if (site == PROF_NO_LABEL) {
        pl->ext = 0;
        return;
    }
    pl->ext = make_id(site, pl->ctx);
    CUptiResult r =
        api.cuptiActivityPushExternalCorrelationId(NVTXCORR_CUPTI_EXTERNAL_KIND, pl->ext);
    if (NVTXCORR_UNLIKELY(r != CUPTI_SUCCESS)) {
        pl->ext = 0;
        push_failed(r);
    }
}

void nvtxcorr_prof_gpu_pop(nvtxcorr_profile_launch_t *pl)
{
    if (by_callbacks) {
        launch_id = 0;
        if (pl->ext == SKIP_ID) pl->ext = 0; /* no id: the trace draws no arrow from it */
    } else
        api.cuptiActivityPopExternalCorrelationId(NVTXCORR_CUPTI_EXTERNAL_KIND, NULL);
}

/* Every record CUPTI holds, delivered before the summary is written. The buffers may be
 * given back on CUPTI's own thread after the flush returns: wait for them, a bounded time. */
static void flush_and_wait(void)
{
    nvtxcorr_prof_gpu_close();
    unsigned g = next_generation(); /* wait for what was lent before now, not after */
    api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (int i = 0; i < 400 && lent_before(g); i++) {
        struct timespec ts = {0, 5 * 1000 * 1000}; /* 2 s in all */
        nanosleep(&ts, NULL);
        if (i % 20 == 19) api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    if (lent_before(g))
        nvtxcorr_prof_gpu_set_partial("CUPTI did not give back every buffer within 2 s");
}

/* The CUPTI thread. Every CUPTI call that can block, outside the two per launch, runs there:
 * the start (callbacks, cuptiActivityEnable) and every flush. A CUPTI that never returns then
 * holds up that thread only: the program waits for it a bounded time (START_WAIT_MS at the
 * first launch, FLUSH_WAIT_MS at exit) and goes on without the GPU time, the summary saying
 * why. The push and pop of the external id around each launch stay on the launching thread:
 * a thread hop per launch would cost more than the launch, and CUPTI keeps that stack per
 * thread.
 *
 * The signal path cannot flush itself either: CUPTI and the record processing allocate and
 * lock, which a signal handler must not. It wakes the thread (sem_post is async-signal-safe),
 * which flushes and settles the records, and waits for it a bounded time. If the thread the
 * signal interrupted holds a lock the flush needs (it was inside CUPTI, or delivering a
 * buffer), the flush cannot finish, and the summary says the GPU time is partial instead of
 * the process hanging. */
enum { START_WAIT_MS = 5000, FLUSH_WAIT_MS = 3000 };
enum { STARTING, STARTED, START_FAILED, START_ABANDONED };
static _Atomic int start_state;
static sem_t flush_request;
static _Atomic int flush_done, flush_settles, abandoned;
static _Atomic int want_exit_flush, want_window_flush, window_flush_done;

/* A window's flush (NVTXCORR_WINDOW): what CUPTI has completed, delivered, not closing
 * anything; a record of work still running comes with a later flush. */
static void flush_window(void)
{
    unsigned g = next_generation();
    api.cuptiActivityFlushAll(0);
    for (int i = 0; i < 200 && lent_before(g); i++) {
        struct timespec ts = {0, 5 * 1000 * 1000}; /* 1 s in all */
        nanosleep(&ts, NULL);
    }
}

static void *cupti_thread(void *arg)
{
    (void)arg;
    int r = enable_cupti(), expected = STARTING;
    if (!atomic_compare_exchange_strong(&start_state, &expected, r == 0 ? STARTED : START_FAILED)) {
        /* Too late: the program went on without GPU time. No record is wanted any more. */
        while (r == 0 && nkinds_on > 0)
            api.cuptiActivityDisable(kinds_on[--nkinds_on]);
        return NULL;
    }
    if (r != 0) return NULL;
    for (;;) {
        while (sem_wait(&flush_request) != 0)
            ;
        if (atomic_exchange(&want_window_flush, 0)) {
            flush_window();
            atomic_store(&window_flush_done, 1);
        }
        if (!atomic_exchange(&want_exit_flush, 0)) continue;
        flush_and_wait();
        if (atomic_load(&flush_settles)) nvtxcorr_prof_gpu_finished(nvtxcorr_prof_gpu_finish(0));
        atomic_store(&flush_done, 1);
    }
    return NULL;
}

/* Waits, at most ms milliseconds of CLOCK_MONOTONIC, until *flag != value; returns whether it
 * changed. Async-signal-safe (clock_gettime, nanosleep). */
static int wait_while(_Atomic int *flag, int value, int ms)
{
    struct timespec now, step = {0, 500 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t end = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 + ms;
    while (atomic_load(flag) == value) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >= end) return 0;
        nanosleep(&step, NULL);
    }
    return 1;
}

/* CUPTI's start: libcupti loaded here, its calls made on the CUPTI thread (8 MiB of stack
 * reserved: CUPTI's first enable is deep; only the pages touched cost memory), waited for a
 * bounded time. */
static int flush_for_window(void);
enum { START_STACK = 8 << 20 };
static int start_cupti(void)
{
    window_tags = nvtxcorr_prof_windows();
    if (load_cupti() != 0) return -1;
    pthread_t t;
    pthread_attr_t attr;
    sigset_t all, old;
    if (sem_init(&flush_request, 0, 0) != 0) {
        note("no semaphore for CUPTI's thread", NULL, NULL);
        return -1;
    }
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, START_STACK);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals never land there */
    int created = pthread_create(&t, &attr, cupti_thread, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (!created) {
        note("no thread for CUPTI could be started", NULL, NULL);
        return -1;
    }
    wait_while(&start_state, STARTING, START_WAIT_MS);
    int expected = STARTING;
    if (atomic_compare_exchange_strong(&start_state, &expected, START_ABANDONED)) {
        atomic_store(&abandoned, 1);
        note("CUPTI did not start within 5 s (cuptiActivityRegisterCallbacks or "
             "cuptiActivityEnable did not return); GPU time abandoned",
             NULL, NULL);
        return -1;
    }
    if (expected == START_FAILED) {
        memcpy(note_target, start_note, sizeof start_note);
        return -1;
    }
    nvtxcorr_prof_gpu_on_flush_window(flush_for_window);
    return 0;
}

void nvtxcorr_prof_gpu_flush(int from_signal)
{
    if (nvtxcorr_prof_gpu_on != PROF_GPU_COLLECTING) return;
    nvtxcorr_prof_gpu_close(); /* later launches push nothing */
    if (atomic_load(&start_state) != STARTED) {
        nvtxcorr_prof_gpu_set_partial("CUPTI not flushed: its thread is gone");
        return;
    }
    atomic_store(&flush_settles, from_signal);
    atomic_store(&flush_done, 0);
    atomic_store(&want_exit_flush, 1);
    sem_post(&flush_request);
    if (wait_while(&flush_done, 0, FLUSH_WAIT_MS)) return;
    atomic_store(&abandoned, 1);
    nvtxcorr_prof_gpu_set_partial(
        from_signal ? "terminated by a signal: CUPTI could not be flushed within 3 s; records "
                      "still in its buffers are not counted"
                    : "cuptiActivityFlushAll did not return within 3 s at exit: GPU time "
                      "abandoned there; records still in CUPTI's buffers are not counted");
}

int nvtxcorr_prof_gpu_abandoned(void)
{
    return atomic_load(&abandoned);
}

/* On the window helper: CUPTI's completed records delivered (by its thread), waited for at
 * most 2 s; 0 when they were. */
static int flush_for_window(void)
{
    if (nvtxcorr_prof_gpu_on != PROF_GPU_COLLECTING || atomic_load(&start_state) != STARTED ||
        nvtxcorr_prof_gpu_closing() || atomic_load(&abandoned))
        return -1;
    atomic_store(&window_flush_done, 0);
    atomic_store(&want_window_flush, 1);
    sem_post(&flush_request);
    return wait_while(&window_flush_done, 0, 2000) ? 0 : -1;
}
#else
static int start_cupti(void)
{
    note("built without CUPTI headers", NULL, NULL);
    return -1;
}
void nvtxcorr_prof_gpu_push(nvtxcorr_profile_launch_t *pl, uint32_t site)
{
    (void)site;
    pl->ext = 0;
}
void nvtxcorr_prof_gpu_pop(nvtxcorr_profile_launch_t *pl)
{
    (void)pl;
}
const char *nvtxcorr_prof_gpu_correlation_mode(void)
{
    return NULL;
}
void nvtxcorr_prof_gpu_note_failures(void) {}
void nvtxcorr_prof_gpu_flush(int from_signal)
{
    (void)from_signal;
}
int nvtxcorr_prof_gpu_abandoned(void)
{
    return 0;
}
#endif

/* The exit's step once CUPTI has started (cupti.h), set at profile mode's start. */
static void (*_Atomic on_start)(void);

void nvtxcorr_prof_cupti_on_start(void (*fn)(void))
{
    atomic_store_explicit(&on_start, fn, memory_order_release);
}

static void warn_unavailable(void)
{
    nvtxcorr_prof_say("warn", "GPU time unavailable: ",
                      atomic_load_explicit(&note_shown, memory_order_acquire), (char *)NULL);
}

/* At profile mode's start (the core's initialisation, on the slow-path stack). */
void nvtxcorr_prof_gpu_start(void)
{
    gpu_tried = 1;
    const char *off = nvtxcorr_config.gpu_off;
    if (!nvtxcorr_config.profile) {
        note("trace-only mode", NULL, NULL);
    } else if (off) {
        note("NVTXCORR_GPU=", off, NULL);
    } else if (nvtxcorr_domain != NULL) {
        note("an NVTX tool is attached (Nsight owns CUPTI)", NULL, NULL);
    } else {
        note("no kernel or graph launch: CUPTI was not started", NULL, NULL);
        start_pending = 1;
        nvtxcorr_prof_gpu_on = PROF_GPU_AT_NEXT_LAUNCH; /* the first launch starts it */
    }
}

/* CUPTI's load (dlopen of a 4 MB library and its constructors) is deeper than a program
 * thread's stack may be: it runs on a stack of its own, 1 MiB reserved (only the pages touched
 * cost memory); the enable runs on the CUPTI thread's own stack. */
enum { LOAD_STACK = 1 << 20 };
static void start_cupti_here(void *result)
{
    *(int *)result = start_cupti();
}

/* At the first launch: CUPTI's start, by one thread. Never while a stream capture is open
 * (anywhere: in the global capture mode a call CUPTI makes on this thread would invalidate
 * another thread's capture); a later launch tries again. */
static void start_at_launch(void)
{
    if (atomic_load_explicit(&nvtxcorr_captures_open, memory_order_relaxed)) return;
    if (atomic_exchange(&start_claimed, 1)) {
        /* Another thread is starting it: wait for it, a bounded time (2 s; libcupti is large
         * to load), so that launches made meanwhile are measured too. Bounded, so a starter
         * that needs something this thread holds delays it once instead of deadlocking. */
        for (int i = 0; i < 20000 && atomic_load(&start_pending); i++) {
            struct timespec ts = {0, 100 * 1000};
            nanosleep(&ts, NULL);
        }
        return;
    }
    int r = -1;
    note_target = note_shown == note_bufs[0] ? note_bufs[1] : note_bufs[0];
    note_target[0] = 0; /* the outcome: none when CUPTI starts */
    nvtxcorr_on_fresh_stack(LOAD_STACK, start_cupti_here, &r);
    atomic_store_explicit(&note_shown, note_target, memory_order_release);
    if (r == 0) {
        void (*started)(void) = atomic_load_explicit(&on_start, memory_order_acquire);
        if (started) started();
        nvtxcorr_prof_gpu_on = PROF_GPU_COLLECTING;
    } else {
        nvtxcorr_prof_gpu_on = PROF_GPU_OFF;
        warn_unavailable();
    }
    start_pending = 0;
}

/* The fork step of the spare buffers' lock (its holders only move pointers). */
void nvtxcorr_prof_cupti_fork(nvtxcorr_fork_t phase)
{
#ifdef NVTXCORR_HAVE_CUPTI
    nvtxcorr_fork_mutex(&spare_lock, phase);
#else
    (void)phase;
#endif
}

/* A forked child: CUPTI's worker threads and buffers stayed in the parent. Its locks are
 * re-initialised by the fork steps, before this runs. */
void nvtxcorr_prof_gpu_after_fork(void)
{
    if (!gpu_tried) return;
    if (start_pending && !atomic_load(&start_claimed)) return; /* the child's launch starts it */
    if (start_pending) /* the parent's start was under way: not in this process */
        note("forked child: CUPTI was starting in the parent", NULL, NULL);
    start_pending = 0;
    int was_on = nvtxcorr_prof_gpu_on == PROF_GPU_COLLECTING;
    nvtxcorr_prof_gpu_on = PROF_GPU_OFF;
    if (was_on) note("forked child: CUPTI's state does not follow fork", NULL, NULL);
    /* Said again by a child that profiles (launches), not by one that only execs. */
    const char *shown = atomic_load_explicit(&note_shown, memory_order_acquire);
    warn_at_launch = nvtxcorr_config.profile && shown[0] && strncmp(shown, "NVTXCORR_GPU=", 13) &&
                     strncmp(shown, "an NVTX tool", 12);
    nvtxcorr_prof_gpu_on = warn_at_launch ? PROF_GPU_AT_NEXT_LAUNCH : PROF_GPU_OFF;
}

/* A launch while nvtxcorr_prof_gpu_on is PROF_GPU_AT_NEXT_LAUNCH: CUPTI still to start, or a forked
 * child that has not yet said it has no GPU time. */
void nvtxcorr_prof_gpu_first_launch(void)
{
    if (start_pending) {
        start_at_launch();
        return;
    }
    nvtxcorr_prof_gpu_on = PROF_GPU_OFF;
    if (warn_at_launch) {
        warn_at_launch = 0;
        warn_unavailable();
    }
}
