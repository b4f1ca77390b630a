/*
 * Internal header of the fake CUDA driver (libcuda.so.1) used by the tests of nvtxcorr.
 *
 * The fake stands in for the real driver on machines without a GPU.  It exports the real ABI
 * symbol names (cuLaunchKernel, cuLaunchKernel_ptsz, cuGraphInstantiate_v2, ...), resolves them
 * through cuGetProcAddress the way the real driver does, keeps real stream-capture semantics and
 * counts what would have run.  Kernels never compute anything.  This header holds the object
 * layouts and the helpers shared by the fake_cuda_*.c files; nothing in it is exported.
 */
#ifndef NVTXCORR_FAKE_CUDA_H
#define NVTXCORR_FAKE_CUDA_H

/*
 * __CUDA_API_VERSION_INTERNAL is how cuda.h is read when building a driver: it drops the
 * "#define cuFoo cuFoo_v2" redirections and declares every ABI version (cuGraphInstantiate and
 * cuGraphInstantiate_v2, cuStreamBeginCapture and cuStreamBeginCapture_v2_ptsz, ...).  Every
 * function we define is therefore checked against NVIDIA's own prototype of that exact symbol.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaProfiler.h>
#include <cudaTypedefs.h>

#include "fakecuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Symbols of the real driver ABI and the fakecuda_* test hooks; everything else stays hidden. */
/*
 * The CUDA and NVTX signatures are fixed and a fake ignores many of their arguments; naming
 * each one unused would only add noise.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define FK_API __attribute__((visibility("default")))

#define FK_LIKELY(x) __builtin_expect(!!(x), 1)
#define FK_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Magic tags: the fake checks every handle it is given, as the real driver does. */
#define FK_MAGIC_FUNC 0x46554e43u /* CUfunction and CUkernel (one struct, see fk_func) */
#define FK_MAGIC_STREAM 0x5354524du
#define FK_MAGIC_GRAPH 0x47524150u
#define FK_MAGIC_NODE 0x4e4f4445u
#define FK_MAGIC_EXEC 0x45584543u
#define FK_MAGIC_MODULE 0x4d4f4455u
#define FK_MAGIC_CTX 0x43545854u

/* ---- counters ---------------------------------------------------------------------------- */

/*
 * Every counter has a fixed slot.  Launch counters are per variant because the profiler must
 * wrap each variant separately; "captured" launches are counted apart from executed ones, since
 * a launch into a capturing stream only records a graph node.
 */
enum fk_counter {
    FKC_LAUNCH_KERNEL,
    FKC_LAUNCH_KERNEL_PTSZ,
    FKC_LAUNCH_KERNEL_EX,
    FKC_LAUNCH_KERNEL_EX_PTSZ,
    FKC_LAUNCH_COOP,
    FKC_LAUNCH_COOP_PTSZ,
    FKC_GRAPH_LAUNCH,
    FKC_GRAPH_LAUNCH_PTSZ,
    FKC_NUM_VARIANTS,
    /* FKC_CAPTURED_BASE + variant: launches of that variant recorded into a capture */
    FKC_CAPTURED_BASE = FKC_NUM_VARIANTS,
    FKC_CAPTURED = FKC_CAPTURED_BASE + FKC_NUM_VARIANTS, /* all captured launches */
    FKC_GRAPH_KERNELS,                                   /* kernel nodes run by graph launches */
    FKC_PROC_REQUESTS,     /* cuGetProcAddress and cuGetProcAddress_v2 calls */
    FKC_GRAPH_INSTANTIATE, /* successful instantiations, all entry points */
    FKC_GRAPH_EXEC_DESTROY,
    FKC_PROFILER_START, /* cuProfilerStart calls (the real function reached) */
    FKC_PROFILER_STOP,
    FKC_UNHOOKED, /* fakecuda_launch_unhooked calls (counted as cuLaunchKernel too) */
    FKC_COUNT
};

/*
 * Per-thread state.  Allocated on a thread's first use and never freed, so that counters of
 * threads that have exited still add up at exit; the launch path touches only its own block
 * (a plain load and store of a relaxed atomic: no lock, no shared cache line).
 */
struct fk_thread {
    _Atomic unsigned long long counts[FKC_COUNT];
    struct fk_thread *next;              /* registry of all threads, for the sums */
    CUcontext ctx;                       /* cuCtxSetCurrent */
    CUstreamCaptureMode capture_mode;    /* cuThreadExchangeStreamCaptureMode */
    struct fk_stream *per_thread_stream; /* CU_STREAM_PER_THREAD, created on first use */
};

struct fk_thread *fk_thread_slow(void);
extern __thread struct fk_thread *fk_tls __attribute__((tls_model("initial-exec")));

static inline struct fk_thread *fk_self(void)
{
    struct fk_thread *t = fk_tls;
    return FK_LIKELY(t != NULL) ? t : fk_thread_slow();
}

static inline void fk_count(enum fk_counter c, unsigned long long n)
{
    struct fk_thread *t = fk_self();
    /* Only this thread writes its block: load + store is enough and avoids a locked RMW. */
    unsigned long long v = atomic_load_explicit(&t->counts[c], memory_order_relaxed);
    atomic_store_explicit(&t->counts[c], v + n, memory_order_relaxed);
}

/* ---- configuration read once from the environment ------------------------------------------ */

struct fk_config {
    int driver_version;   /* FAKECUDA_DRIVER_VERSION, default 13000 */
    CUresult fail_launch; /* FAKECUDA_FAIL_LAUNCH, 0 = launches work */
    CUresult init_error;  /* FAKECUDA_INIT_ERROR, what cuInit returns (0 = success) */
    int fresh_execs;      /* FAKECUDA_FRESH_EXECS: never hand out a CUgraphExec value twice */
    int args_fd;          /* FAKECUDA_ARGS: the file each launch's arguments go to, or -1 */
    int unwind;           /* FAKECUDA_UNWIND: each FAKECUDA_ARGS line says whether a backtrace
                           * from inside the launch reaches the program's own code */
};
extern struct fk_config fk_cfg;
extern atomic_int fk_initialized; /* cuInit was called */
/* With FAKECUDA_ARGS set: one line per launch, with the arguments as the fake received them
 * (fake_cuda_launch.c), so a test can compare them with what the program passed. */
void fk_log_args(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- functions and kernels ----------------------------------------------------------------- */

enum fk_func_kind { FK_KIND_FUNCTION = 1, FK_KIND_KERNEL = 2 };

/*
 * One struct for CUfunction and CUkernel: the real driver accepts a CUkernel wherever a
 * CUfunction goes (cuLaunchKernel((CUfunction)kernel, ...)), so the launch path must recognise
 * both with one check.  A library kernel and the function cuKernelGetFunction returns for it are
 * two objects pointing at each other, so the profiler sees two distinct handles as on hardware.
 */
struct fk_func {
    uint32_t magic;
    uint32_t kind;
    const char *name;     /* mangled name, owned by the module or the arena */
    struct fk_func *twin; /* kernel <-> its function; NULL for plain module functions */
};

static inline int fk_func_valid(const void *h)
{
    return h != NULL && ((const struct fk_func *)h)->magic == FK_MAGIC_FUNC;
}

/* ---- streams and capture ------------------------------------------------------------------- */

enum fk_stream_kind { FK_STREAM_USER, FK_STREAM_LEGACY, FK_STREAM_PER_THREAD };

struct fk_capture;

struct fk_stream {
    uint32_t magic;
    uint32_t kind;
    unsigned int flags;               /* CU_STREAM_NON_BLOCKING matters for capture rules */
    _Atomic(struct fk_capture *) cap; /* non-NULL while the stream is capturing */
};

extern struct fk_stream fk_legacy_stream;
struct fk_stream *fk_per_thread_stream_slow(struct fk_thread *t);

/*
 * Resolves a stream handle.  `ptsz` is set for the _ptsz/_ptds entry points, where the NULL
 * stream means the calling thread's per-thread default stream instead of the legacy stream.
 * Returns NULL for an invalid handle.  Inline because every launch goes through it.
 */
static inline struct fk_stream *fk_stream_resolve(CUstream h, int ptsz)
{
    if (h == NULL) h = ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    if (h == CU_STREAM_LEGACY) return &fk_legacy_stream;
    if (h == CU_STREAM_PER_THREAD) {
        struct fk_thread *t = fk_self();
        return FK_LIKELY(t->per_thread_stream != NULL) ? t->per_thread_stream
                                                       : fk_per_thread_stream_slow(t);
    }
    struct fk_stream *s = (struct fk_stream *)h;
    return s->magic == FK_MAGIC_STREAM && s->kind == FK_STREAM_USER ? s : NULL;
}

/* Number of capturing streams that synchronise with the legacy stream (not NON_BLOCKING). */
extern atomic_int fk_blocking_captures;

/* Every capture in progress, and those that synchronise with the legacy stream. */
extern atomic_int fk_active_captures;

/*
 * Capture hooks (fake_cuda_capture.c).  fk_capture_kernel/fk_capture_graph record a launch into
 * the capture of `s` and return 1 with the launch's result in *res; they return 0 when the
 * capture ended meanwhile, and the launch then runs normally.
 */
int fk_capture_kernel(struct fk_stream *s, CUfunction f, const unsigned grid[3],
                      const unsigned block[3], unsigned shmem, enum fk_counter variant,
                      CUresult *res);
int fk_capture_graph(struct fk_stream *s, CUgraphExec exec, enum fk_counter variant, CUresult *res);
CUresult fk_legacy_implicit(void);                 /* legacy stream used during a capture */
CUresult fk_check_unsafe_call(void);               /* cuMemAlloc & co. under capture modes */
CUresult fk_capture_conflict(struct fk_stream *s); /* sync/query of a capturing stream */
void fk_capture_abandon(struct fk_stream *s);      /* stream destroyed while capturing */

/*
 * Checks shared by synchronising calls on a stream: the legacy stream while blocking streams
 * capture, or a capturing stream itself, are errors that invalidate the capture.
 */
static inline CUresult fk_stream_sync_check(struct fk_stream *s)
{
    if (FK_UNLIKELY(atomic_load_explicit(&s->cap, memory_order_acquire) != NULL))
        return fk_capture_conflict(s);
    if (s->kind == FK_STREAM_LEGACY &&
        FK_UNLIKELY(atomic_load_explicit(&fk_blocking_captures, memory_order_relaxed) > 0))
        return fk_legacy_implicit();
    return CUDA_SUCCESS;
}

/* ---- graphs ---------------------------------------------------------------------------------- */

struct fk_graph;

struct fk_node {
    uint32_t magic;
    unsigned long long id; /* process-wide, from 1: CUPTI's graph node id (fakecuda_node_id) */
    CUgraphNodeType type;
    struct fk_graph *graph;
    /* kernel nodes */
    CUfunction func;
    CUkernel kern;
    unsigned grid[3], block[3], shmem;
    /* child graph nodes (a graph launched into a capturing stream), owned */
    struct fk_graph *child;
};

struct fk_graph {
    uint32_t magic;
    size_t n, cap;
    struct fk_node **nodes;
    struct fk_graph *prev, *next; /* every live graph, see fk_keep */
};

extern pthread_mutex_t fk_graph_lock; /* guards every graph, exec and capture mutation */

struct fk_graph *fk_graph_new(void);
void fk_graph_free(struct fk_graph *g);
struct fk_node *fk_graph_add_node(struct fk_graph *g, CUgraphNodeType type);
struct fk_graph *fk_graph_clone(const struct fk_graph *g);
struct fk_graph *fk_exec_graph(CUgraphExec exec); /* validated exec -> its graph, or NULL */
size_t fk_exec_kernels(CUgraphExec exec);

static inline int fk_graph_valid(CUgraph g)
{
    return g != NULL && ((struct fk_graph *)g)->magic == FK_MAGIC_GRAPH;
}

/* ---- activity side channel (fakecuda.h) ---------------------------------------------------- */

extern _Atomic(fakecuda_activity_fn) fk_activity;
/* The API side channel (fakecuda.h): FK_FRAMED(name, call) makes call inside a driver frame
 * named name when the fake CUPTI listens, else just makes it. */
extern _Atomic(fakecuda_api_fn) fk_api;
void fk_api_enter(const char *name);
CUresult fk_api_exit(const char *name, CUresult r);
#define FK_FRAMED(name, call)                                                                      \
    (FK_UNLIKELY(atomic_load_explicit(&fk_api, memory_order_relaxed) != NULL)                      \
         ? (fk_api_enter(name), fk_api_exit(name, (call)))                                         \
         : (call))
/* The node side channel (fakecuda.h): a node created, or the nodes of an exec cloned. */
void fk_node_created(struct fk_node *n);
void fk_nodes_cloned(const struct fk_graph *copy, const struct fk_graph *source);
void fk_report_kernel(CUfunction f, const struct fk_stream *s, const unsigned grid[3],
                      const unsigned block[3]);
void fk_report_graph(CUgraphExec exec, const struct fk_stream *s);

/* ---- misc ------------------------------------------------------------------------------------ */

int fk_version_ok(int first_version); /* does the configured driver know an API of that age? */

/*
 * Records an object the fake never frees (streams, modules, executable graphs, arena chunks),
 * as a real driver keeps them in its context: they stay reachable, so leak checkers
 * (NVTXCORR_SANITIZE builds) do not blame the program for memory the driver owns.
 */
void fk_keep(void *p);
void fk_fork_prepare(void);
void fk_fork_parent(void);
void fk_fork_child(void);
void fk_graphs_fork(int phase); /* 0 lock, 1 unlock, 2 re-initialise (child) */
const char *fk_counter_name(enum fk_counter c);

#endif /* NVTXCORR_FAKE_CUDA_H */
