/* The small core behind the hooks: real-function slots, the enable state, the per-thread
 * launch bracket and the per-handle label cache. The hook files (driver_hooks.c,
 * runtime_hooks.c, procaddr.c, resolve.c) are thin wrappers over what is declared here; the
 * per-launch path is the inline functions at the end, and does no string work, takes no lock
 * and allocates nothing. */
#ifndef NVTXCORR_CORE_H
#define NVTXCORR_CORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <nvtx3/nvToolsExt.h>

#include "cuda_abi.h"

#define NVTXCORR_EXPORT __attribute__((visibility("default")))
/* Not exported: a reference from inside this library binds to this definition at link time,
 * whatever else the process defines under the same name. */
#define NVTXCORR_HIDDEN __attribute__((visibility("hidden")))
#define NVTXCORR_LIKELY(x) __builtin_expect(!!(x), 1)
#define NVTXCORR_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For code that a sanitizer runtime reaches before it is initialised: ASan and TSan resolve
 * their own interceptors with dlsym, which is ours (the sanitized and TSan test builds). TSan
 * would otherwise record the function entry on a thread state it has not yet set up. */
#define NVTXCORR_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

/* ---- configuration (config.c): every environment variable is read there, once ---- */
enum {
    NVTXCORR_LOG_SILENT = -1, /* secure execution */
    NVTXCORR_LOG_ERROR = 0,
    NVTXCORR_LOG_WARN,
    NVTXCORR_LOG_INFO,
    NVTXCORR_LOG_DEBUG
};
enum { NVTXCORR_CAPTURE_MARK = 0, NVTXCORR_CAPTURE_SKIP, NVTXCORR_CAPTURE_PLAIN };
enum { NVTXCORR_TRACE_BY_PATH = 0, NVTXCORR_TRACE_KINETO, NVTXCORR_TRACE_CHROME };

typedef struct nvtxcorr_config {
    int enabled;               /* NVTXCORR */
    int log_level;             /* NVTXCORR_LOG */
    const char *labels;        /* NVTXCORR_LABELS */
    const char *labels_inline; /* NVTXCORR_LABELS_INLINE */
    int capture;               /* NVTXCORR_CAPTURE */
    int graph_marks;           /* NVTXCORR_GRAPH_MARKS */
    const char *injection;     /* NVTX_INJECTION64_PATH, only reported */
    const char *profile;       /* NVTXCORR_PROFILE (src/profile/) */
    const char *trace;         /* NVTXCORR_TRACE */
    unsigned trace_max_mb;     /* NVTXCORR_TRACE_MAX_MB */
    int trace_format;          /* NVTXCORR_TRACE_FORMAT: NVTXCORR_TRACE_* below, 0 by the path */
    int trace_writer;          /* NVTXCORR_TRACE_WRITER: 1 (the default) or 0 */
    /* The launcher's rank variables (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK, ...),
     * the first one set of each; NULL when none is. The Kineto trace's distributedInfo. */
    const char *rank, *local_rank, *world_size;
    const char *gpu_off;       /* NVTXCORR_GPU when it says off (0, false, off, no) */
    int gpu_external;          /* NVTXCORR_GPU_CORRELATION=external */
    const char *cupti_library; /* NVTXCORR_CUPTI_LIBRARY */
    const char *cuda_home;     /* CUDA_HOME, where libcupti is looked for first */
    /* NVTXCORR_WINDOW (profile mode's windows, src/profile/window.c): the kind, then the
     * options; window_kind 0 when unset or rejected (one summary for the whole run). */
    int window_kind; /* NVTXCORR_WINDOW_* below */
    unsigned long long window_every_ns, window_delay_ns;
    unsigned window_count;                    /* 0: no limit */
    int window_signal;                        /* NVTXCORR_WINDOW_SIGNAL, SIGUSR2 by default */
    const char *window_range, *window_domain; /* nvtx:<range glob>[@<domain>] */
    int context;                              /* NVTXCORR_CONTEXT=nvtx: program context asked for */
} nvtxcorr_config_t;

extern nvtxcorr_config_t nvtxcorr_config;
void nvtxcorr_config_read(void);
/* Whether the environment says disabled, read without initialising (nvtxcorr_claim_nowait). */
int nvtxcorr_config_disabled(void);
/* NVTXCORR_CONTEXT_DOMAINS, read when the first NVTX instance loads nvtxcorr as its tool
 * (which may be before initialisation); NULL when unset. */
const char *nvtxcorr_config_context_domains(void);
/* The one other environment read: %q{VAR} in the NVTXCORR_PROFILE and NVTXCORR_TRACE paths. */
const char *nvtxcorr_config_env(const char *name);

/* ---- diagnostics (log.c): "nvtxcorr: <level>: ..." on stderr via write(2) ---- */
void nvtxcorr_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct nvtxcorr_label_error;
void nvtxcorr_log_label_error(void *ctx, const struct nvtxcorr_label_error *error);
#define NVTXCORR_LOG_ON(level) ((level) <= nvtxcorr_config.log_level)
/* "nvtxcorr: warn: ..." whatever NVTXCORR_LOG says (silent only in secure execution), for what
 * a user must hear unasked: a bound that made nvtxcorr drop names, a copy that stands aside. It
 * may come before initialisation, when the level is not read yet. */
void nvtxcorr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Every write nvtxcorr makes to a file (diagnostics, summary, trace): all of buf, retrying
 * EINTR; returns 0, or the errno that stopped it. A write past RLIMIT_FSIZE raises SIGXFSZ,
 * whose default action kills the process: it is blocked on the calling thread for the
 * write, and the one the write raised is taken back, so it fails with EFBIG instead and the
 * host's own writes behave as before. Async-signal-safe. */
int nvtxcorr_write_full(int fd, const void *buf, size_t len);

/* ---- the hook table and real-function slots (resolve.c) ---- */
typedef enum nvtxcorr_slot_id {
#define DRIVER(kind, sym, ...) NVTXCORR_SLOT_##sym,
#define RUNTIME(kind, sym, ...) NVTXCORR_SLOT_##sym,
#include "hooks.def"
    NVTXCORR_SLOT_COUNT
} nvtxcorr_slot_id_t;

typedef struct nvtxcorr_hook {
    const char *symbol;      /* exported ABI name */
    const char *public_name; /* name given to cuGetProcAddress; NULL for runtime hooks */
    int version;             /* driver ABI version (first cudaVersion returning it) */
    int ptsz;
    void *hook; /* our wrapper, by its local address (NVTXCORR_LOCAL_ALIAS) */
} nvtxcorr_hook_t;

/* Every hook also has a hidden alias, nvtxcorr_local_<symbol>, and the hook table holds that:
 * our own functions are known by address (a dlsym or cuGetProcAddress result equal to a table
 * entry is one of our hooks, never a real function to wrap) and handed out by address
 * (cuGetProcAddress). The exported name will not do: it is interposable, so a reference to it
 * from inside this library resolves to the first definition in the process, which is another
 * interposer's wrapper when one is preloaded before us or defined by the executable (a tracer,
 * HAMi-core). Handing that wrapper back to its own dlsym(libcuda, ...) makes it call itself
 * until the stack overflows. The hidden alias is bound at link time to our own code. */
#define NVTXCORR_LOCAL_ALIAS(sym)                                                                  \
    extern __typeof__(sym) nvtxcorr_local_##sym __attribute__((alias(#sym))) NVTXCORR_HIDDEN;

extern const nvtxcorr_hook_t nvtxcorr_hooks[NVTXCORR_SLOT_COUNT];
extern void *_Atomic nvtxcorr_real_fn[NVTXCORR_SLOT_COUNT];

void *nvtxcorr_resolve_slot(nvtxcorr_slot_id_t id);
static inline void *nvtxcorr_real(nvtxcorr_slot_id_t id)
{
    void *p = atomic_load_explicit(&nvtxcorr_real_fn[id], memory_order_acquire);
    return NVTXCORR_LIKELY(p != NULL) ? p : nvtxcorr_resolve_slot(id);
}

/* ---- where each x86-64 launch entry stub jumps (routes.c) ----
 * The exported launch symbol's first instruction is `jmp *entry` of its route, one per launch
 * row of hooks.def, kept together in one section of the library. `entry` is the real
 * function (pass-through, and profile mode between windows), one of the stub's fast paths
 * (active, profile, trace), or the C body when none applies. It depends on the mode, on
 * whether a capture is open, on whether profile mode writes a trace, on the slot's real
 * function and on the NVTX tool's push and pop, and is rewritten (nvtxcorr_routes_refresh)
 * after any of those changes: the launch itself then tests none of them. */
typedef struct __attribute__((aligned(16))) nvtxcorr_stub_routes {
    void *entry;  /* read by the stub's first instruction */
    uint64_t gen; /* the refresh that wrote entry: both change together (routes.c) */
    void *body;   /* the C body (hook_bodies.h) */
    const void *active, *profile, *trace;
    unsigned slot;
} nvtxcorr_stub_routes_t;
#define NVTXCORR_ROUTES_SECTION "nvtxcorr_routes"
void nvtxcorr_routes_refresh(void);
/* Profile mode says whether it writes a trace (the trace route) through this. */
void nvtxcorr_routes_tracing(int on);
/* Stores the mode and refreshes the routes. */
void nvtxcorr_set_mode(int mode);

/* Returns our hook for slot `id` if `real` is (or can become) that slot's real function,
 * else `real` itself: a second, different implementation is passed through untouched. */
void *nvtxcorr_claim(nvtxcorr_slot_id_t id, void *real);
/* The same without ever waiting for initialisation, for dlsym: a library constructor calls it
 * with the loader lock held, which initialisation on another thread may be waiting for (it
 * dlopens the NVTX tool). Before initialisation it claims the slot and returns our hook,
 * unless the environment already says disabled. */
void *nvtxcorr_claim_nowait(nvtxcorr_slot_id_t id, void *real);
/* The slot whose hook `fn` is, or -1. */
int nvtxcorr_slot_of_hook(const void *fn);
/* The glibc dlsym behind our override (dlsym.c). */
void *nvtxcorr_real_dlsym(void *handle, const char *name);
/* The hook slot of an exported symbol name, or -1. */
int nvtxcorr_slot_of_symbol(const char *name);
/* The loaded object containing addr, and a lookup in that one object only. */
struct link_map;
struct link_map *nvtxcorr_object_of(const void *addr);
void *nvtxcorr_lookup_in(struct link_map *m, const char *name);
/* A real symbol: RTLD_NEXT from us, then every loaded object (finds RTLD_LOCAL libraries). */
void *nvtxcorr_find_real(const char *name);
/* Another copy of nvtxcorr loaded first in the process (resolve.c): its path, or NULL when this
 * copy is the first or the only one. A copy that is not the first stands aside: every hook a
 * plain forward, nothing written but one warning (init.c). Its own path, and a symbol of the
 * first copy (NULL when this copy is the first). */
const char *nvtxcorr_first_copy(void);
const char *nvtxcorr_this_copy(void);
void *nvtxcorr_first_copy_lookup(const char *name);
/* Whether resolvers hand out hooks now (resolve.c): active, or another thread initialising. */
int nvtxcorr_hand_out_hooks(void);
/* Wraps a driver function the caller obtained from a resolver for `public_name` (procaddr.c).
 * version < 0 means the requested ABI version is unknown (cudaGetDriverEntryPoint). */
void *nvtxcorr_wrap_driver(const char *public_name, int version, unsigned long long flags,
                           void *fn);
/* A driver entry point by name, through the real cuGetProcAddress_v2, uncached; NULL if the
 * driver lacks it or is not loaded (driver.c). For the fixed set nvtxcorr uses itself, see
 * nvtxcorr_cuda_fn. */
void *nvtxcorr_driver_lookup(const char *public_name, int version, int ptsz);

/* ---- the CUDA calls nvtxcorr makes for itself (driver.c) ----
 * One row each: id, the public name, the ABI version asked of cuGetProcAddress (0: a runtime
 * function, found by name with nvtxcorr_find_real), and whether the per-thread-default-stream
 * variant is wanted. None of them is hooked (hooks.def), so what the driver or the runtime
 * answers is the real function. */
#define NVTXCORR_CUDA_CALLS(X)                                                                     \
    /* naming kernels (kernels.c): CUDA 12.3+ drivers */                                           \
    X(cuFuncGetName, cuFuncGetName, 12030, 0)                                                      \
    X(cuKernelGetName, cuKernelGetName, 12030, 0)                                                  \
    /* whether a launch's stream captures (capture.c), for both stream variants */                 \
    X(cuStreamIsCapturing, cuStreamIsCapturing, 10000, 0)                                          \
    X(cuStreamIsCapturing_ptsz, cuStreamIsCapturing, 10000, 1)                                     \
    /* a graph's kernels (graphs.c) */                                                             \
    X(cuGraphGetNodes, cuGraphGetNodes, 10000, 0)                                                  \
    X(cuGraphNodeGetType, cuGraphNodeGetType, 10000, 0)                                            \
    X(cuGraphKernelNodeGetParams_v2, cuGraphKernelNodeGetParams, 12000, 0)                         \
    X(cuGraphChildGraphNodeGetGraph, cuGraphChildGraphNodeGetGraph, 10000, 0)                      \
    /* naming a runtime host stub, keeping the runtime's last error (kernels.c) */                 \
    X(cudaFuncGetName, cudaFuncGetName, 0, 0)                                                      \
    X(cudaGetFuncBySymbol, cudaGetFuncBySymbol, 0, 0)                                              \
    X(cudaPeekAtLastError, cudaPeekAtLastError, 0, 0)                                              \
    X(cudaGetLastError, cudaGetLastError, 0, 0)                                                    \
    /* the Kineto trace's deviceProperties (profile/trace_meta.c) */                               \
    X(cuDeviceGetCount, cuDeviceGetCount, 2000, 0)                                                 \
    X(cuDeviceGetName, cuDeviceGetName, 2000, 0)                                                   \
    X(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, 0)                                              \
    X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, 0)

typedef enum nvtxcorr_cuda_id {
#define NVTXCORR_CUDA_ID(id, pub, version, ptsz) NVTXCORR_CUDA_##id,
    NVTXCORR_CUDA_CALLS(NVTXCORR_CUDA_ID)
#undef NVTXCORR_CUDA_ID
        NVTXCORR_CUDA_COUNT
} nvtxcorr_cuda_id_t;

/* The real function of row `id`, resolved once; NULL while its library is not loaded (asked
 * again next time) or when it lacks the function (remembered). Never waits for
 * initialisation. Callers cast to the function's type. */
void *nvtxcorr_cuda_fn(nvtxcorr_cuda_id_t id);
/* The driver flags a cudaGetDriverEntryPoint answer was resolved with (procaddr.c). */
unsigned long long nvtxcorr_entry_point_flags(const char *symbol, int version,
                                              unsigned long long rt_flags, int default_ptsz,
                                              void *fn);
/* One-line summary of which paths are live, for the info line. */
void nvtxcorr_describe_paths(char *buf, size_t size);

/* ---- the slow-path stack (slowstack.c) ---- */
/* Runs fn(arg) on this thread's private slow-path stack (directly when already there, or when
 * it cannot be mapped), so a hook's first call for a kernel or graph uses little of the
 * caller's stack. */
void nvtxcorr_on_slow_stack(void (*fn)(void *), void *arg);
/* Runs fn(arg) on a stack of `size` bytes mapped for this call alone (with a guard page
 * below it) and unmapped after: for rare work deeper than the slow-path stack (CUPTI's
 * start). Directly, when it cannot be mapped. */
void nvtxcorr_on_fresh_stack(size_t size, void (*fn)(void *), void *arg);

/* ---- enable state (init.c) ---- */
/* PROFILE: NVTXCORR_PROFILE or NVTXCORR_TRACE is set (src/profile/profile.h). The hooks are
 * active as in ACTIVE, with or without an NVTX tool, and launches take the profile path. */
enum {
    NVTXCORR_MODE_UNINIT = 0,
    NVTXCORR_MODE_PASSTHROUGH,
    NVTXCORR_MODE_INITIALISING, /* on some thread: the others pass through, never wait */
    NVTXCORR_MODE_ACTIVE,
    NVTXCORR_MODE_PROFILE, /* from here on, the hooks are active */
    /* Profile mode between windows (NVTXCORR_WINDOW) with no NVTX tool attached: launches pass
     * through as in PASSTHROUGH (the entry stub jumps straight to the real function), the
     * other hooks stay active so graphs, captures and names are still tracked. With a tool
     * attached the mode between windows is ACTIVE instead. */
    NVTXCORR_MODE_PROFILE_IDLE
};
/* Profile or trace mode started (init.c): set once, whatever mode windows switch to. */
extern int nvtxcorr_profiling;
extern _Atomic int nvtxcorr_mode;
int nvtxcorr_init_slow(void);
/* Launches that passed through, uncounted, while initialisation ran (on another thread, or
 * re-entered on the initialising one): profile mode's summary reports them (init.c). */
extern _Atomic unsigned long long nvtxcorr_launches_while_starting;
void nvtxcorr_passed_while_starting(void);
/* Whether this thread is the one initialising (init.c). */
int nvtxcorr_initialising_here(void);
/* The label table loaded at initialisation, or NULL for default labels (init.c). */
struct nvtxcorr_label_table;
const struct nvtxcorr_label_table *nvtxcorr_label_table(void);

/* True when this call must be bracketed. The first hooked call initialises; a call made while
 * another thread initialises, or re-entered from inside initialisation, passes through. */
static inline int nvtxcorr_active(void)
{
    int m = atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire);
    if (NVTXCORR_LIKELY(m != NVTXCORR_MODE_UNINIT)) return m >= NVTXCORR_MODE_ACTIVE;
    return nvtxcorr_init_slow();
}

/* The mode for a launch hook: one load, as nvtxcorr_active, but ACTIVE and PROFILE apart. */
static inline int nvtxcorr_launch_mode(void)
{
    int m = atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire);
    if (NVTXCORR_LIKELY(m != NVTXCORR_MODE_UNINIT)) return m;
    return nvtxcorr_init_slow() ? atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire)
                                : NVTXCORR_MODE_PASSTHROUGH;
}

/* ---- events for profile mode (init.c) ---- */
/* Slow-path events the core announces without knowing who listens: profile mode registers a
 * function while it initialises (nvtxcorr_profile_init). The pointer is atomic, NULL meaning
 * nobody listens, and the event is then a no-op, so the core never calls into src/profile/
 * for it (the one-way layering of docs/design.md). */
typedef enum {
    NVTXCORR_HANDLE_FUNCTION,
    NVTXCORR_HANDLE_HOST,
    NVTXCORR_HANDLE_GRAPH
} nvtxcorr_handle_kind_t;
/* A graph exec was instantiated or updated: the text of its summary (as the graph mark's). */
typedef void (*nvtxcorr_graph_event_fn)(const char *text);
void nvtxcorr_on_graph_event(nvtxcorr_graph_event_fn fn);
/* What graphs.c calls: through the registered function, if any. */
int nvtxcorr_graph_event_wanted(void); /* whether a graph event's text need be made */
void nvtxcorr_graph_event(const char *text);

/* ---- per-thread state ---- */
typedef struct nvtxcorr_capture_entry {
    const void *stream;
    unsigned generation;
    unsigned char ptsz, capturing;
} nvtxcorr_capture_entry_t;

enum { NVTXCORR_CAPTURE_CACHE = 4 };
typedef struct nvtxcorr_thread {
    /* Hooked calls in progress on this thread: a runtime launch reaches the driver through a
     * hooked pointer too, and only the outermost call gets a range. */
    unsigned depth;
    unsigned capture_next;
    /* The frame of the outermost launch in progress (nvtxcorr_launch_outermost). */
    uintptr_t outer_sp;
    nvtxcorr_capture_entry_t capture[NVTXCORR_CAPTURE_CACHE];
} nvtxcorr_thread_t;

extern __thread nvtxcorr_thread_t nvtxcorr_thread __attribute__((tls_model("initial-exec")));

/* ---- labels ready to push (emit.c) ----
 * A label is what a launch's NVTX range is pushed with: the label table's answer for a
 * kernel or graph (labels.h, nvtxcorr_label_result_t) registered with NVTX, or the default. The
 * handle maps hold one first in each handle's record (nvtxcorr_record_t below). */
typedef struct nvtxcorr_label {
    nvtxEventAttributes_t attr; /* registered string, colour, category */
    int skip;                   /* rule said "-": no range */
    const char *text;
} nvtxcorr_label_t;

extern nvtxDomainHandle_t nvtxcorr_domain;
int nvtxcorr_emit_init(void);
/* Set by program context's InitializeInjectionNvtx2 when NVTX_INJECTION64_PATH names this
 * library and its own NVTX instance (emit.c's) asked it to be its tool, which it refuses: so
 * the core can say why there is no tool for its ranges, instead of "could not be loaded". */
extern _Atomic int nvtxcorr_nvtx_refused_self;
/* Interned by (text, colour, category): the same label is registered once. */
const nvtxcorr_label_t *nvtxcorr_label_make(const char *text, int has_color, uint32_t color,
                                            const char *category, int skip);
const nvtxcorr_label_t *nvtxcorr_label_capture_variant(const nvtxcorr_label_t *l);
void nvtxcorr_label_init(nvtxcorr_label_t *l, const char *text, int has_color, uint32_t color,
                         const char *category, int skip);
void nvtxcorr_emit_mark(const char *text, const char *category);
/* The NVTX tool's own range push and pop for this library's NVTX instance, read once the
 * tool is loaded (emit.c), or NULL: the x86-64 entry stubs call them directly
 * (hook_bodies.h), and lower the depth after the pop. */
extern void *nvtxcorr_tool_push, *nvtxcorr_tool_pop;

/* ---- fork (init.c): every lock of the library, profile mode's included, is taken by the one
 * pthread_atfork prepare handler, in one order, and released in the parent and re-initialised
 * in the child (in the reverse order), so that a child never starts with one held or with the
 * data it guards half-updated. The order: profile mode's steps as it registered them (its
 * locks are held while the core's are taken: gpu.c's holder interns sites, matches labels and
 * registers ranges), then the core's below. Where a code path holds one lock while taking
 * another, the one held comes first, so the order cannot deadlock (docs/design.md, Fork). ---- */
typedef enum { NVTXCORR_FORK_PREPARE, NVTXCORR_FORK_PARENT, NVTXCORR_FORK_CHILD } nvtxcorr_fork_t;
typedef void (*nvtxcorr_fork_fn)(nvtxcorr_fork_t phase);
void nvtxcorr_match_fork(nvtxcorr_fork_t phase);  /* kernels.c: label matching (regexec) */
void nvtxcorr_graphs_fork(nvtxcorr_fork_t phase); /* graphs.c: the graph-label free list */
void nvtxcorr_emit_fork(nvtxcorr_fork_t phase);   /* emit.c: interned labels, NVTX calls */
void nvtxcorr_map_fork(nvtxcorr_fork_t phase);    /* handle_map.c: map writers */
/* Profile mode's steps, in their prepare order (at most NVTXCORR_FORK_STEPS): registered once,
 * while it initialises, before the core registers the handlers. */
enum { NVTXCORR_FORK_STEPS = 8 };
void nvtxcorr_on_fork(const nvtxcorr_fork_fn *steps, unsigned n);
/* Applies phase to a mutex (lock, unlock, or re-initialise in the child). */
void nvtxcorr_fork_mutex(void *mutex, nvtxcorr_fork_t phase);
/* The name of a category id a label carries; NULL for 0. */
const char *nvtxcorr_category_name(uint32_t id);

/* ---- lock-free handle maps (handle_map.c): readers never lock; writers serialise ---- */
typedef struct nvtxcorr_map_slot {
    _Atomic uintptr_t key;
    void *_Atomic value;
} nvtxcorr_map_slot_t;

typedef struct nvtxcorr_map_table {
    size_t mask;
    size_t byte_mask; /* mask * sizeof(nvtxcorr_map_slot_t): the entry stubs' probe */
    size_t used;
    struct nvtxcorr_map_table *older; /* kept for readers still walking it; never freed */
    nvtxcorr_map_slot_t slots[];
} nvtxcorr_map_table_t;

typedef struct nvtxcorr_map {
    nvtxcorr_map_table_t *_Atomic table;
} nvtxcorr_map_t;

/* Handles are aligned pointers: drop the low bits, then Fibonacci-hash. The x86-64 entry
 * stubs compute the same slot in assembly (hook_bodies.h) as a byte offset: the product
 * shifted right by 4 bits less and masked with the table's byte_mask, multiplying by
 * nvtxcorr_map_hash_mult in memory. (Taking the product's bits from 24 up without dropping
 * any first spreads the fake driver's 24-byte-strided handles worse: a quarter of 100
 * kernels missed their first probe, and took the C body.) */
#define NVTXCORR_MAP_HASH_DROP 4
#define NVTXCORR_MAP_HASH_MULT 0x9E3779B97F4A7C15ull
#define NVTXCORR_MAP_HASH_SHIFT 20
extern const uint64_t nvtxcorr_map_hash_mult; /* NVTXCORR_MAP_HASH_MULT */
static inline size_t nvtxcorr_map_hash(uintptr_t key)
{
    return (size_t)(((uint64_t)key >> NVTXCORR_MAP_HASH_DROP) * NVTXCORR_MAP_HASH_MULT >>
                    NVTXCORR_MAP_HASH_SHIFT);
}

/* What a map can hold before its first entry instead of NULL: one table of a single empty
 * slot, shared, which no writer ever stores an entry into (with one slot, the first put
 * already replaces it; clearing the values stores the NULL it holds: handle_map.c). The launch
 * maps start with it, so the entry stubs read their table without testing it. */
typedef union nvtxcorr_map_empty {
    nvtxcorr_map_table_t table;
    unsigned char room[sizeof(nvtxcorr_map_table_t) + sizeof(nvtxcorr_map_slot_t)];
} nvtxcorr_map_empty_t;
extern nvtxcorr_map_empty_t nvtxcorr_map_empty;
#define NVTXCORR_MAP_EMPTY                                                                         \
    {                                                                                              \
        &nvtxcorr_map_empty.table                                                                  \
    }

static inline void *nvtxcorr_map_get(nvtxcorr_map_t *map, const void *handle)
{
    nvtxcorr_map_table_t *t = atomic_load_explicit(&map->table, memory_order_acquire);
    uintptr_t key = (uintptr_t)handle;
    if (NVTXCORR_UNLIKELY(t == NULL || key == 0)) return NULL;
    for (size_t i = nvtxcorr_map_hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
        if (k == key) return atomic_load_explicit(&t->slots[i].value, memory_order_acquire);
        if (k == 0) return NULL;
    }
}
/* value NULL removes the handle. */
void nvtxcorr_map_put(nvtxcorr_map_t *map, const void *handle, void *value);
void nvtxcorr_map_clear_values(nvtxcorr_map_t *map);

/* ---- one record per launch handle (kernels.c, graphs.c) ----
 * What the handle maps hold: everything known about the handle, derived once at its first
 * launch (kernels) or instantiation (graphs), so that nobody derives it again. The label
 * comes first: the launch path reads a map value as the label it pushes (one dereference).
 * Kernel records are interned by (raw name, label) and never freed, so a handle forgotten and
 * seen again (a module reloaded) finds its old record; graph records are owned per exec
 * (graphs.c). `site` is profile mode's slot, opaque here: src/profile/ fills it at the first
 * launch it counts (a record made afresh starts with it NULL). */
typedef struct nvtxcorr_record {
    nvtxcorr_label_t label;
    const char *raw;  /* kernels: the raw (mangled) name; graphs: NULL */
    const char *base; /* kernels: the base (function) name; graphs: NULL */
    void *_Atomic site;
} nvtxcorr_record_t;
_Static_assert(offsetof(nvtxcorr_record_t, label) == 0, "a map value is read as its label");

extern nvtxcorr_map_t nvtxcorr_function_labels; /* CUfunction / CUkernel -> record */
extern nvtxcorr_map_t nvtxcorr_host_labels;     /* runtime host stub -> record */
extern nvtxcorr_map_t nvtxcorr_graph_labels;    /* CUgraphExec -> record */

/* Map values are records (or, in emit.c's capture map, labels), with bit 0 set for one whose
 * label says "no range": the launch path then decides without touching the record itself (one
 * cache miss fewer per launch when a program cycles through very many kernels). */
static inline void *nvtxcorr_label_value(const nvtxcorr_label_t *l)
{
    return (void *)((uintptr_t)l | (uintptr_t)(l && l->skip));
}
static inline const nvtxcorr_label_t *nvtxcorr_label_of(const void *value)
{
    return (const nvtxcorr_label_t *)((uintptr_t)value & ~(uintptr_t)1);
}
static inline void *nvtxcorr_record_value(nvtxcorr_record_t *r)
{
    return nvtxcorr_label_value(r ? &r->label : NULL);
}
static inline nvtxcorr_record_t *nvtxcorr_record_of(const void *value)
{
    return (nvtxcorr_record_t *)((uintptr_t)value & ~(uintptr_t)1);
}

/* The slow path of a launch whose handle has no cached record, one per kind of handle: finds,
 * caches and returns the map value (tagged record). Data flows one way: hook -> label cache ->
 * (here) label library -> emit. */
typedef const void *(*nvtxcorr_label_slow_fn)(const void *key);
const void *nvtxcorr_function_label_slow(const void *f); /* CUfunction / CUkernel (kernels.c) */
const void *nvtxcorr_host_label_slow(const void *func);  /* runtime host stub (kernels.c) */
const void *nvtxcorr_graph_label_slow(const void *exec); /* CUgraphExec (graphs.c) */
/* The label of a kernel known only by its raw name (profile mode's GPU records), as a
 * launched kernel of that name gets it; the label says skip for a "-" rule (kernels.c). */
const nvtxcorr_label_t *nvtxcorr_label_for_name(const char *mangled);
void nvtxcorr_track_name(const void *handle, const char *name);
void nvtxcorr_track_alias(const void *function, const void *kernel);
void nvtxcorr_forget_functions(void);
/* Serialises label-table matching: glibc's regexec locks each compiled regex, and a child
 * forked while another thread matched would inherit that lock held. */
void nvtxcorr_match_lock(void);
void nvtxcorr_match_unlock(void);
/* Raw (mangled) name of a CUfunction/CUkernel, or of a runtime host stub, into buf; 0 on
 * success. */
int nvtxcorr_function_name(const void *f, char *buf, size_t size);
int nvtxcorr_host_name(const void *func, char *buf, size_t size);

/* ---- graphs (graphs.c) ---- */
void nvtxcorr_graph_instantiated(CUgraphExec exec, CUgraph graph);
void nvtxcorr_graph_updated(CUgraphExec exec, CUgraph graph);
void nvtxcorr_graph_destroyed(CUgraphExec exec);

/* ---- stream capture (capture.c) ---- */
extern _Atomic unsigned nvtxcorr_captures_open;
void nvtxcorr_capture_changed(int delta);
/* Whether `stream` is capturing; call only while nvtxcorr_captures_open is nonzero. */
int nvtxcorr_capture_active(const void *stream, int ptsz);
const nvtxcorr_label_t *nvtxcorr_capture_adjust(const nvtxcorr_label_t *l, const void *stream,
                                                int ptsz);

/* ---- the launch bracket ---- */
/* Whether a launch is the outermost hooked call of its thread, and if so enters it (depth 1).
 * A depth that cannot be true is reset: siglongjmp out of a signal taken inside a hooked call
 * skips the frames that would have lowered the depth, and every later launch of the thread
 * would pass through. A nested call runs deeper on the stack than the outermost launch's
 * frame (stacks grow down); a launch at or above that frame means the frames below are gone.
 * The frame address is the launch body's own (always inlined): its entry stack pointer less
 * the saved frame pointer, whatever the body's frame size, so that the x86-64 entry stub,
 * which compares its entry stack pointer with it (hook_bodies.h), agrees. A launch made deeper
 * than the skipped one (or from a signal stack or the slow-path stack above it) is taken as
 * nested until one is made from as high up. */
__attribute__((always_inline)) static inline int nvtxcorr_launch_outermost(void)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (NVTXCORR_UNLIKELY(nvtxcorr_thread.depth != 0) && sp < nvtxcorr_thread.outer_sp) {
        nvtxcorr_thread.depth++;
        return 0;
    }
    nvtxcorr_thread.depth = 1;
    nvtxcorr_thread.outer_sp = sp;
    return 1;
}

static inline const nvtxcorr_label_t *nvtxcorr_launch_begin(nvtxcorr_label_slow_fn slow,
                                                            nvtxcorr_map_t *map, const void *key,
                                                            const void *stream, int ptsz)
{
    if (!nvtxcorr_launch_outermost()) return NULL;
    const void *v = nvtxcorr_map_get(map, key);
    if (NVTXCORR_UNLIKELY(v == NULL)) v = slow(key);
    if ((uintptr_t)v & 1) /* skip */
        return NULL;
    const nvtxcorr_label_t *l = nvtxcorr_label_of(v);
    if (NVTXCORR_UNLIKELY(atomic_load_explicit(&nvtxcorr_captures_open, memory_order_relaxed)))
        l = nvtxcorr_capture_adjust(l, stream, ptsz);
    if (l == NULL) return NULL;
    nvtxDomainRangePushEx(nvtxcorr_domain, &l->attr);
    return l;
}

static inline void nvtxcorr_launch_end(const nvtxcorr_label_t *pushed)
{
    if (pushed) nvtxDomainRangePop(nvtxcorr_domain);
    nvtxcorr_thread.depth--;
}

/* Non-launch hooks (instantiate, capture begin/end, name tracking) use the same depth so
 * that a runtime call and the driver call beneath it act once. */
static inline int nvtxcorr_enter(void)
{
    if (nvtxcorr_thread.depth++ != 0) return 0;
    /* This hook's frame, for nvtxcorr_launch_outermost: a signal handler that launches while
     * this hook runs is below it, so nested (passes through), whatever a stale earlier
     * launch's frame says. */
    nvtxcorr_thread.outer_sp = (uintptr_t)__builtin_frame_address(0);
    return 1;
}
static inline void nvtxcorr_leave(void)
{
    nvtxcorr_thread.depth--;
}

#endif
