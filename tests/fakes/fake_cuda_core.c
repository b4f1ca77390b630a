/*
 * Fake CUDA driver, core part: configuration from the environment, per-thread state, the
 * special streams, and the counters that tests read through fakecuda_count() or FAKECUDA_COUNTS.
 *
 * Environment, read once when the library is loaded:
 *   FAKECUDA_DRIVER_VERSION=<n>  what cuDriverGetVersion reports (default 13000); entry points
 *                                newer than that behave as absent (see fake_cuda_procaddr.c).
 *   FAKECUDA_FAIL_LAUNCH=<n>     every kernel and graph launch returns CUresult n.
 *   FAKECUDA_INIT_ERROR=<n>      cuInit returns CUresult n (e.g. 100, no device).
 *   FAKECUDA_COUNTS=<path>       at exit, append "<counter> <count>" for every nonzero counter.
 *   FAKECUDA_ARGS=<path>         append one line per kernel or graph launch with its arguments as
 *                                received: "args grid=X,Y,Z block=X,Y,Z shmem=N stream=P
 *                                params=P extra=P" or "args exec=P stream=P" (pointers as %p).
 *   FAKECUDA_UNWIND=1            each FAKECUDA_ARGS line ends in " unwind=yes" when a backtrace
 *                                taken inside the launch (glibc's backtrace, libgcc's unwinder
 *                                reading .eh_frame) reaches the executable's code, else
 *                                " unwind=no": an interposer's frame without unwind information
 *                                cuts the chain there.
 *   FAKECUDA_FRESH_EXECS=1       every instantiation returns a CUgraphExec value never seen
 *                                before (see fake_cuda_graph.c).
 *
 * The locks a graph call takes are held across fork by an atfork handler, so a forked child
 * may use graphs (the fork tests exercise the profiler's locks, not the fake's).
 */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fk_config fk_cfg = {.driver_version = 13000, .args_fd = -1};
atomic_int fk_initialized;

__thread struct fk_thread *fk_tls __attribute__((tls_model("initial-exec")));
static struct fk_thread *fk_threads; /* every fk_thread ever made, newest first */
static pthread_mutex_t fk_threads_lock = PTHREAD_MUTEX_INITIALIZER;

struct fk_stream fk_legacy_stream = {.magic = FK_MAGIC_STREAM, .kind = FK_STREAM_LEGACY};

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return dflt;
    return (int)strtol(v, NULL, 0);
}

__attribute__((constructor)) static void fk_read_config(void)
{
    fk_cfg.driver_version = env_int("FAKECUDA_DRIVER_VERSION", 13000);
    fk_cfg.fail_launch = (CUresult)env_int("FAKECUDA_FAIL_LAUNCH", 0);
    fk_cfg.init_error = (CUresult)env_int("FAKECUDA_INIT_ERROR", 0);
    fk_cfg.fresh_execs = env_int("FAKECUDA_FRESH_EXECS", 0);
    fk_cfg.unwind = env_int("FAKECUDA_UNWIND", 0);
    const char *args = getenv("FAKECUDA_ARGS");
    fk_cfg.args_fd =
        args && *args ? open(args, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    pthread_atfork(fk_fork_prepare, fk_fork_parent, fk_fork_child);
}

struct fk_thread *fk_thread_slow(void)
{
    struct fk_thread *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        /* No sensible way to carry on: every later call needs its thread block. */
        fputs("fakecuda: out of memory\n", stderr);
        abort();
    }
    t->capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL; /* the default of every new thread */
    pthread_mutex_lock(&fk_threads_lock);
    t->next = fk_threads;
    fk_threads = t;
    pthread_mutex_unlock(&fk_threads_lock);
    fk_tls = t;
    return t;
}

struct fk_stream *fk_per_thread_stream_slow(struct fk_thread *t)
{
    /* Heap, not TLS: the handle must stay valid inside capture records after thread exit. */
    struct fk_stream *s = calloc(1, sizeof(*s));
    if (s == NULL) return NULL;
    s->magic = FK_MAGIC_STREAM;
    s->kind = FK_STREAM_PER_THREAD;
    t->per_thread_stream = s;
    return s;
}

static pthread_mutex_t fk_keep_lock = PTHREAD_MUTEX_INITIALIZER;
static void **fk_kept;
static size_t fk_nkept, fk_capkept;

/* Lock order: fk_graph_lock, then fk_graphs_lock, then fk_keep_lock (fk_graph_clone and
 * instantiation nest them so). */
void fk_fork_prepare(void)
{
    pthread_mutex_lock(&fk_graph_lock);
    fk_graphs_fork(0);
    pthread_mutex_lock(&fk_keep_lock);
}

void fk_fork_parent(void)
{
    pthread_mutex_unlock(&fk_keep_lock);
    fk_graphs_fork(1);
    pthread_mutex_unlock(&fk_graph_lock);
}

void fk_fork_child(void)
{
    pthread_mutex_init(&fk_keep_lock, NULL);
    fk_graphs_fork(2);
    pthread_mutex_init(&fk_graph_lock, NULL);
}

void fk_keep(void *p)
{
    pthread_mutex_lock(&fk_keep_lock);
    if (fk_nkept == fk_capkept) {
        size_t cap = fk_capkept ? 2 * fk_capkept : 64;
        void **n = realloc(fk_kept, cap * sizeof(*n));
        if (n != NULL) {
            fk_kept = n;
            fk_capkept = cap;
        }
    }
    if (fk_nkept < fk_capkept) fk_kept[fk_nkept++] = p;
    pthread_mutex_unlock(&fk_keep_lock);
}

/* ---- counters ------------------------------------------------------------------------------ */

/* Counter names: launch variants by their exported symbol, captured ones as captured.<symbol>. */
static const char *const fk_names[FKC_COUNT] = {
    [FKC_LAUNCH_KERNEL] = "cuLaunchKernel",
    [FKC_LAUNCH_KERNEL_PTSZ] = "cuLaunchKernel_ptsz",
    [FKC_LAUNCH_KERNEL_EX] = "cuLaunchKernelEx",
    [FKC_LAUNCH_KERNEL_EX_PTSZ] = "cuLaunchKernelEx_ptsz",
    [FKC_LAUNCH_COOP] = "cuLaunchCooperativeKernel",
    [FKC_LAUNCH_COOP_PTSZ] = "cuLaunchCooperativeKernel_ptsz",
    [FKC_GRAPH_LAUNCH] = "cuGraphLaunch",
    [FKC_GRAPH_LAUNCH_PTSZ] = "cuGraphLaunch_ptsz",
    [FKC_CAPTURED_BASE + FKC_LAUNCH_KERNEL] = "captured.cuLaunchKernel",
    [FKC_CAPTURED_BASE + FKC_LAUNCH_KERNEL_PTSZ] = "captured.cuLaunchKernel_ptsz",
    [FKC_CAPTURED_BASE + FKC_LAUNCH_KERNEL_EX] = "captured.cuLaunchKernelEx",
    [FKC_CAPTURED_BASE + FKC_LAUNCH_KERNEL_EX_PTSZ] = "captured.cuLaunchKernelEx_ptsz",
    [FKC_CAPTURED_BASE + FKC_LAUNCH_COOP] = "captured.cuLaunchCooperativeKernel",
    [FKC_CAPTURED_BASE + FKC_LAUNCH_COOP_PTSZ] = "captured.cuLaunchCooperativeKernel_ptsz",
    [FKC_CAPTURED_BASE + FKC_GRAPH_LAUNCH] = "captured.cuGraphLaunch",
    [FKC_CAPTURED_BASE + FKC_GRAPH_LAUNCH_PTSZ] = "captured.cuGraphLaunch_ptsz",
    [FKC_CAPTURED] = "captured",
    [FKC_GRAPH_KERNELS] = "graph_kernels",
    [FKC_PROC_REQUESTS] = "cuGetProcAddress_requests",
    [FKC_GRAPH_INSTANTIATE] = "graph_instantiations",
    [FKC_GRAPH_EXEC_DESTROY] = "graph_exec_destroys",
    [FKC_PROFILER_START] = "cuProfilerStart",
    [FKC_PROFILER_STOP] = "cuProfilerStop",
    [FKC_UNHOOKED] = "unhooked_launches",
};

const char *fk_counter_name(enum fk_counter c)
{
    return c < FKC_COUNT ? fk_names[c] : "?";
}

static unsigned long long fk_sum(enum fk_counter c)
{
    unsigned long long sum = 0;
    pthread_mutex_lock(&fk_threads_lock);
    for (struct fk_thread *t = fk_threads; t != NULL; t = t->next)
        sum += atomic_load_explicit(&t->counts[c], memory_order_relaxed);
    pthread_mutex_unlock(&fk_threads_lock);
    return sum;
}

/* Test hook: the current value of a counter by name; 0 for an unknown name. */
FK_API unsigned long long fakecuda_count(const char *name)
{
    if (name == NULL) return 0;
    for (int c = 0; c < FKC_COUNT; c++)
        if (strcmp(name, fk_counter_name((enum fk_counter)c)) == 0)
            return fk_sum((enum fk_counter)c);
    return 0;
}

__attribute__((destructor)) static void fk_write_counts(void)
{
    const char *path = getenv("FAKECUDA_COUNTS");
    if (path == NULL || *path == '\0') return;
    FILE *f = fopen(path, "a");
    if (f == NULL) return;
    for (int c = 0; c < FKC_COUNT; c++) {
        unsigned long long n = fk_sum((enum fk_counter)c);
        if (n != 0) fprintf(f, "%s %llu\n", fk_counter_name((enum fk_counter)c), n);
    }
    fclose(f);
}

/* Whether addr lies in the executable's own mapped segments (the first object
 * dl_iterate_phdr reports). */
static int in_program(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t addr = *(uintptr_t *)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz) return 1;
    }
    return -1; /* stop after the first object: the executable */
}

static int unwinds_to_program(void)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    for (int i = 1; i < n; i++) {
        uintptr_t a = (uintptr_t)frames[i];
        if (dl_iterate_phdr(in_program, &a) == 1) return 1;
    }
    return 0;
}

void fk_log_args(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 32, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 33) n = (int)sizeof line - 33;
    if (fk_cfg.unwind)
        n += snprintf(line + n, 32, " unwind=%s", unwinds_to_program() ? "yes" : "no");
    line[n++] = '\n';
    /* One write per line: O_APPEND keeps it whole. */
    ssize_t w = write(fk_cfg.args_fd, line, (size_t)n);
    (void)w;
}
