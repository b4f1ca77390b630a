/* CUPTI's launch side (cupti_launch.h): how kernels are tied to the launches nvtxcorr wraps.
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
 * Graph nodes' capture context comes from the same subscriber's resource callbacks. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "context/context.h"
#include "core/attributes.h"
#include "core/config.h"
#include "core/state.h"
#include "cupti.h"
#include "cupti_launch.h"
#include "cupti_load.h"
#include "cupti_note.h"
#include "gpu.h"
#include "profile/base/out.h"
#include "profile/counting/context_stats.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/counting/windows.h"
#include "session.h"
#ifdef NVTXCORR_HAVE_CUPTI
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

void nvtxcorr_prof_cupti_ids_start(void)
{
    window_tags = nvtxcorr_prof_windows();
}

/* The session's closing (nvtxcorr_prof_gpu_closing) is set once the exit flush began: later
 * launches (atexit handlers, destructors) are counted on the CPU side only and never call into
 * CUPTI, which may be finalising. */

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
    if (g == NULL || g->node == NULL ||
        nvtxcorr_prof_cupti_api.cuptiGetGraphNodeId(g->node, &node) != CUPTI_SUCCESS)
        return;
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED)
        nvtxcorr_prof_ctx_node_set(node, nvtxcorr_context_now());
    else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && g->originalNode != NULL &&
             nvtxcorr_prof_cupti_api.cuptiGetGraphNodeId(g->originalNode, &original) ==
                 CUPTI_SUCCESS)
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
        snprintf(why, sizeof why, "CUPTI's graph node callbacks unavailable: %s",
                 nvtxcorr_prof_cupti_result_name(r));
    nvtxcorr_prof_ctx_node_unavailable(why);
    if (nvtxcorr_prof_cupti_api.cuptiGetLastError) nvtxcorr_prof_cupti_api.cuptiGetLastError();
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
    if (nvtxcorr_prof_cupti_api.cuptiSubscribe == NULL ||
        nvtxcorr_prof_cupti_api.cuptiEnableCallback == NULL) {
        snprintf(why, size, "this CUPTI lacks the callback API");
        nodes_unavailable(CUPTI_ERROR_NOT_SUPPORTED);
        return want_launches ? -1 : 0;
    }
    CUptiResult r = nvtxcorr_prof_cupti_api.cuptiSubscribe(&subscriber, on_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, size, "cuptiSubscribe: %s", nvtxcorr_prof_cupti_result_name(r));
        nodes_unavailable(r);
        return want_launches ? -1 : 0;
    }
    r = nvtxcorr_prof_cupti_api.cuptiGetGraphNodeId == NULL
            ? CUPTI_ERROR_NOT_SUPPORTED
            : nvtxcorr_prof_cupti_api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                                          CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
    if (r == CUPTI_SUCCESS)
        r = nvtxcorr_prof_cupti_api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                                        CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
    if (r != CUPTI_SUCCESS) nodes_unavailable(r);
    if (!want_launches) return 0;
    for (size_t i = 0; i < sizeof driver_launches / sizeof *driver_launches; i++) {
        r = nvtxcorr_prof_cupti_api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                                        driver_launches[i]);
        if (r != CUPTI_SUCCESS && i < DRIVER_REQUIRED) {
            snprintf(why, size, "cuptiEnableCallback(driver launch %u): %s",
                     (unsigned)driver_launches[i], nvtxcorr_prof_cupti_result_name(r));
            for (size_t j = 0; j < i; j++)
                nvtxcorr_prof_cupti_api.cuptiEnableCallback(
                    0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, driver_launches[j]);
            if (nvtxcorr_prof_cupti_api.cuptiGetLastError)
                nvtxcorr_prof_cupti_api.cuptiGetLastError();
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof runtime_launches / sizeof *runtime_launches; i++)
        nvtxcorr_prof_cupti_api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                                    runtime_launches[i]);
    if (nvtxcorr_prof_cupti_api.cuptiGetLastError)
        nvtxcorr_prof_cupti_api.cuptiGetLastError(); /* a cbid this CUPTI does not know */
    return 0;
}

int nvtxcorr_prof_cupti_correlate(void)
{
    char why[PROF_CUPTI_NOTE_SIZE] = "";
    by_callbacks = subscribe(why, sizeof why) == 0 && !nvtxcorr_config.gpu_external;
    if (!by_callbacks && !nvtxcorr_config.gpu_external)
        nvtxcorr_prof_say("warn", "GPU time: CUPTI's launch callbacks unavailable (", why,
                          "): external correlation instead; launches of a runtime nvtxcorr "
                          "cannot interpose count as uncorrelated",
                          (char *)NULL);
    return by_callbacks;
}

/* External correlation's API records: for the launch entry points alone where this CUPTI can
 * (12.5+), unless NVTXCORR_GPU_CORRELATION=external asked for the comparison with every call. */
int nvtxcorr_prof_cupti_launch_api_records(void)
{
    int per_cbid = !nvtxcorr_config.gpu_external &&
                   nvtxcorr_prof_cupti_api.cuptiActivityEnableDriverApi &&
                   nvtxcorr_prof_cupti_api.cuptiActivityEnableRuntimeApi;
    for (size_t i = 0; per_cbid && i < sizeof driver_launches / sizeof *driver_launches; i++)
        if (nvtxcorr_prof_cupti_api.cuptiActivityEnableDriverApi(driver_launches[i], 1) !=
                CUPTI_SUCCESS &&
            i < DRIVER_REQUIRED)
            per_cbid = 0;
    for (size_t i = 0; per_cbid && i < sizeof runtime_launches / sizeof *runtime_launches; i++)
        nvtxcorr_prof_cupti_api.cuptiActivityEnableRuntimeApi(runtime_launches[i], 1);
    if (nvtxcorr_prof_cupti_api.cuptiGetLastError) nvtxcorr_prof_cupti_api.cuptiGetLastError();
    return per_cbid;
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
    snprintf(push_error, sizeof push_error, "%s", nvtxcorr_prof_cupti_result_name(r));
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
    char count[24], *note = nvtxcorr_prof_cupti_note_shown();
    count[nvtxcorr_fmt_u64(count, n)] = 0;
    const char *parts[] = {
        note[0] ? "; " : "",
        "cuptiActivityPushExternalCorrelationId failed for ",
        count,
        n == 1 ? " launch (" : " launches (",
        atomic_load_explicit(&push_error_set, memory_order_acquire) ? push_error : "CUPTI error",
        "): their GPU time is in gpu_uncorrelated_ns, not in their labels"};
    nvtxcorr_prof_join(note, PROF_CUPTI_NOTE_SIZE, strlen(note), parts,
                       sizeof parts / sizeof *parts);
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
    CUptiResult r = nvtxcorr_prof_cupti_api.cuptiActivityPushExternalCorrelationId(
        NVTXCORR_CUPTI_EXTERNAL_KIND, pl->ext);
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
        nvtxcorr_prof_cupti_api.cuptiActivityPopExternalCorrelationId(NVTXCORR_CUPTI_EXTERNAL_KIND,
                                                                      NULL);
}
#else
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
#endif
