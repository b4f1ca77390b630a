/* Profile mode's front door: what profile.h declares and the core calls. Start-up
 * (nvtxcorr_profile_prepare, _init) and the fork handler; the launch path (nvtxcorr_profile_begin
 * and _end around the real call); and which site a launch handle counts under, kept in the
 * site slot of the core's record for the handle (core/record.h), filled on the slow-path stack at
 * the record's first launch from the names and label the core derived, so a handle is never
 * named twice; a handle whose label changes gets a new record, and with it a new slot. What a
 * launch is counted under and the per-thread records it is counted in are stats.c's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "context/context.h"
#include "core/attributes.h"
#include "core/capture.h"
#include "core/config.h"
#include "core/emit.h"
#include "core/fork.h"
#include "core/graphs.h"
#include "core/map.h"
#include "core/record.h"
#include "core/slowstack.h"
#include "core/state.h"
#include "labels/hash.h"
#include "profile.h"
#include "profile/base/clock.h"
#include "profile/base/out.h"
#include "profile/base/process.h"
#include "profile/counting/context_stats.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "profile/gpu/cupti.h"
#include "profile/gpu/gpu.h"
#include "profile/gpu/session.h"
#include "profile/lifecycle/exit.h"
#include "profile/lifecycle/window.h"
#include "profile/output/trace.h"
#include "profile/output/trace_api.h"
#include "profile/output/trace_writer.h"
typedef struct site_job {
    nvtxcorr_profile_kind_t kind;
    nvtxcorr_record_t *record;
    int skip;
    nvtxcorr_profile_site_t *site;
} site_job_t;

/* The site of a handle's record, from what the core derived (label, raw and base names), and
 * kept in the record's site slot. A label that says "-" counts under the kernel's own name. */
static void site_slow_here(void *arg)
{
    site_job_t *job = arg;
    nvtxcorr_record_t *r = job->record;
    const nvtxcorr_label_t *l = job->skip ? NULL : &r->label;
    nvtxcorr_profile_site_t *s;
    if (job->kind == NVTXCORR_PROFILE_GRAPH) {
        const char *text = l ? l->text : "-";
        s = nvtxcorr_prof_site_intern(1, text, text, l);
    } else {
        s = nvtxcorr_prof_site_intern(0, r->raw, r->base, l);
    }
    if (s) atomic_store_explicit(&r->site, s, memory_order_release);
    job->site = s;
}

/* First launch of a record in profile mode: interning a site takes a lock and allocates, and
 * the trace describes it, so this runs on the slow-path stack, as the core's first-launch work
 * does. */
static nvtxcorr_profile_site_t *site_slow(nvtxcorr_profile_kind_t kind, nvtxcorr_record_t *r,
                                          int skip)
{
    site_job_t job = {kind, r, skip, NULL};
    nvtxcorr_on_slow_stack(site_slow_here, &job);
    return job.site;
}

/* ---- the launch path ---- */
/* What both launch paths do once the site is known: the range pushed when a tool is attached
 * (`l`: the label, or NULL for none), CUPTI's external correlation id pushed, and the clock
 * started. */
static inline __attribute__((always_inline)) void launch_start(nvtxcorr_profile_launch_t *pl,
                                                               nvtxcorr_profile_site_t *s,
                                                               const nvtxcorr_label_t *l,
                                                               int capturing)
{
    pl->site = s;
    pl->capturing = capturing;
    pl->ctx = nvtxcorr_context_now(); /* one thread-local load: the program's open ranges */
    pl->pushed = 0;
    if (l && nvtxcorr_domain) { /* a tool is attached: it gets the range it would without us */
        nvtxDomainRangePushEx(nvtxcorr_domain, &l->attr);
        pl->pushed = 1;
    }
    pl->ext = 0;
    prof_gpu_state_t gpu = nvtxcorr_prof_gpu_on; /* CUPTI: the launch's external correlation id */
    if (NVTXCORR_UNLIKELY(gpu == PROF_GPU_AT_NEXT_LAUNCH)) { /* this launch is measured too */
        nvtxcorr_prof_gpu_first_launch();
        gpu = nvtxcorr_prof_gpu_on;
    }
    if (gpu == PROF_GPU_COLLECTING) /* a captured launch's callbacks must not count it */
        nvtxcorr_prof_gpu_push(pl, s != NULL && !capturing ? s->id : PROF_NO_LABEL);
    /* The launch call alone: everything above (CUPTI's start at the first launch, the
     * correlation push, the range push) is before the clock starts, and what nvtxcorr does
     * inside the call (CUPTI's callbacks) is taken out at the end. */
    nvtxcorr_prof_own_ticks = 0;
    pl->start = prof_now();
}

/* The clock stopped, nvtxcorr's own time inside the call taken out, the correlation id and
 * the range popped, and the launch counted (as an error when *failed is nonzero: read only
 * then, so that nothing is kept live across the pops). */
static inline __attribute__((always_inline)) void launch_finish(nvtxcorr_profile_launch_t *pl,
                                                                const int *failed)
{
    uint64_t end = prof_now(), own = nvtxcorr_prof_own_ticks, ticks = end - pl->start;
    nvtxcorr_prof_own_ticks = PROF_OWN_IDLE;
    if (NVTXCORR_UNLIKELY(own != 0)) { /* never more than the call itself */
        uint64_t o = own < ticks ? own : ticks;
        ticks -= o;
        atomic_fetch_add_explicit(&nvtxcorr_prof_own_ns, prof_ticks_ns(o), memory_order_relaxed);
    }
    pl->ns = prof_ticks_ns(ticks); /* kept before the calls: fewer registers live across them */
    if (pl->ext) nvtxcorr_prof_gpu_pop(pl);
    if (pl->pushed) nvtxDomainRangePop(nvtxcorr_domain);
    if (NVTXCORR_LIKELY(pl->site != NULL)) prof_record(pl, *failed != 0);
}

void nvtxcorr_profile_begin(nvtxcorr_profile_launch_t *pl, nvtxcorr_profile_kind_t kind,
                            nvtxcorr_label_slow_fn slow, nvtxcorr_map_t *map, const void *key,
                            const void *stream, int ptsz)
{
    /* The body entered the depth (nvtxcorr_launch_outermost). One lookup: the core's record
     * for the handle (made by the core's slow path at its first launch) holds the site. */
    const void *v = nvtxcorr_map_get(map, key);
    if (NVTXCORR_UNLIKELY(v == NULL)) v = slow(key);
    nvtxcorr_record_t *r = nvtxcorr_record_of(v);
    int skip = (uintptr_t)v & 1;
    nvtxcorr_profile_site_t *s = NULL;
    if (NVTXCORR_LIKELY(r != NULL)) { /* NULL only when out of memory: not counted */
        s = atomic_load_explicit(&r->site, memory_order_acquire);
        if (NVTXCORR_UNLIKELY(s == NULL)) s = site_slow(kind, r, skip);
    }
    pl->stream = stream;
    int capturing = 0;
    if (NVTXCORR_UNLIKELY(atomic_load_explicit(&nvtxcorr_captures_open, memory_order_relaxed)))
        capturing = nvtxcorr_capture_active(stream, ptsz);
    const nvtxcorr_label_t *l = skip || r == NULL ? NULL : &r->label;
    if (l && capturing && nvtxcorr_domain) l = nvtxcorr_capture_adjust(l, stream, ptsz);
    launch_start(pl, s, l, capturing);
}

int nvtxcorr_profile_end(nvtxcorr_profile_launch_t *pl, int failed)
{
    launch_finish(pl, &failed);
    nvtxcorr_thread.depth--;
    return pl->site && atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed);
}

/* The x86-64 entry stub's profile path (hook_bodies.h): taken only for an outermost launch
 * whose record has its site and a range, with no capture open, so none of the C body's other
 * cases arise. The launch's state is kept per thread: only the outermost launch of a thread
 * takes this path, and one interrupted by a signal handler's launch passes that one through
 * (the depth is held). The stub lowers the depth after _end. */
static __thread nvtxcorr_profile_launch_t stub_launch __attribute__((tls_model("initial-exec")));

void nvtxcorr_stub_prof_begin(nvtxcorr_record_t *r)
{
    launch_start(&stub_launch, atomic_load_explicit(&r->site, memory_order_acquire), &r->label, 0);
}

/* The result is kept in the launch's state and read back from memory: fewer registers live
 * across the calls of launch_finish. */
static inline __attribute__((always_inline)) int stub_end(int result)
{
    stub_launch.result = result;
    launch_finish(&stub_launch, &stub_launch.result);
    return stub_launch.result;
}

int nvtxcorr_stub_prof_end(int result)
{
    return stub_end(result);
}

uint64_t nvtxcorr_stub_trace_end(int result)
{
    uint32_t r = (uint32_t)stub_end(result);
    return r | (uint64_t)(atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed) != 0)
                   << 32;
}

void nvtxcorr_profile_stub_trace(const void *stream, const char *api, unsigned gx, unsigned gy,
                                 unsigned gz)
{
    stub_launch.stream = stream;
    nvtxcorr_profile_trace(&stub_launch, api, gx, gy, gz);
}

int nvtxcorr_stub_prof_result(void)
{
    return stub_launch.result;
}

/* ---- start-up and fork ---- */
/* The child's own state, once every lock is fresh (this step is first of the prepare order,
 * so last in the child's). */
static void child_state(nvtxcorr_fork_t phase)
{
    if (phase != NVTXCORR_FORK_CHILD) return;
    nvtxcorr_prof_stats_after_fork();
    nvtxcorr_prof_trace_after_fork();
    nvtxcorr_prof_gpu_after_fork();
    nvtxcorr_prof_process_reset();
    nvtxcorr_prof_window_after_fork();
}

/* Whether `path` names this library (the file, whatever the spelling). */
static int names_us(const char *path)
{
    Dl_info self;
    struct stat a, b;
    return dladdr((const void *)names_us, &self) && self.dli_fname && stat(path, &a) == 0 &&
           stat(self.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Program context asked for (NVTXCORR_CONTEXT=nvtx, which nvtxcorr stat sets) but not to be had:
 * one line says why, and the summary's context_note. nvtxcorr is the tool only where
 * NVTX_INJECTION64_PATH names it; another tool there (Nsight's) gets the program's ranges. */
static void context_check(void)
{
    const char *path = nvtxcorr_config.injection;
    char why[768];
    if (!nvtxcorr_config.context || (path && names_us(path))) return;
    if (path)
        snprintf(why, sizeof why,
                 "no program context: another NVTX tool is attached (NVTX_INJECTION64_PATH=%s), "
                 "which gets the program's ranges",
                 path);
    else
        snprintf(
            why, sizeof why,
            "no program context: NVTX_INJECTION64_PATH is unset (NVTXCORR_CONTEXT=nvtx sets it "
            "as the library loads, when preloaded)");
    nvtxcorr_prof_ctx_set_note(why);
    nvtxcorr_prof_say("note", why, (char *)NULL);
}

int nvtxcorr_profile_prepare(void)
{
    if (nvtxcorr_prof_stats_prepare() != 0) return -1;
    nvtxcorr_prof_process_reset();
    nvtxcorr_prof_exit_init(); /* from here a SIGTERM writes what there is */
    nvtxcorr_prof_clock_init();
    if (nvtxcorr_config.trace && nvtxcorr_prof_trace_init() != 0 && !nvtxcorr_config.profile)
        return -1;
    return 0;
}

int nvtxcorr_profile_init(void)
{
    nvtxcorr_prof_stats_init();
    /* Profile mode's part of the core's one fork order (docs/design.md, Fork): CUPTI's record
     * lock first (its holder takes the others; re-initialised in the child only), then the
     * sites and the thread blocks, and CUPTI's spare buffers. The trace's file lock is the
     * trace's state, reset in the child with the rest of it (nvtxcorr_prof_trace_after_fork). */
    static const nvtxcorr_fork_fn steps[] = {child_state, nvtxcorr_prof_gpu_fork,
                                             nvtxcorr_prof_stats_fork, nvtxcorr_prof_cupti_fork,
                                             nvtxcorr_prof_ctx_fork};
    nvtxcorr_on_fork(steps, sizeof steps / sizeof steps[0]);
    /* Whenever trace mode is asked for: a forked child traces again even where the parent's
     * trace stopped (the event itself checks that the trace is on). */
    if (nvtxcorr_config.trace) nvtxcorr_on_graph_event(nvtxcorr_profile_graph_event);
    context_check();
    nvtxcorr_prof_gpu_start();
    return 0;
}

int nvtxcorr_profile_mode(int tool)
{
    return nvtxcorr_prof_window_mode(tool);
}

/* The label table's file and inline rules, hashed once (the summary's "label_table"): two
 * summaries labelled by different tables are not compared as equals. */
static void hash_label_table(void)
{
    uint64_t h = NVTXCORR_FNV64_START; /* an identity for `report --diff` */
    int any = 0;
    if (nvtxcorr_config.labels) {
        int fd = open(nvtxcorr_config.labels, O_RDONLY | O_CLOEXEC);
        char buf[4096];
        ssize_t n;
        while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
            h = nvtxcorr_fnv64(h, buf, (size_t)n), any = 1;
        if (fd >= 0) close(fd);
    }
    h = nvtxcorr_fnv64(h, "", 1);
    if (nvtxcorr_config.labels_inline) {
        h = nvtxcorr_fnv64(h, nvtxcorr_config.labels_inline, strlen(nvtxcorr_config.labels_inline));
        any = 1;
    }
    nvtxcorr_prof_label_hash = any ? h : 0;
}

void nvtxcorr_profile_started(void)
{
    hash_label_table();
    nvtxcorr_prof_window_start();
    nvtxcorr_prof_trace_writer_start();
}
