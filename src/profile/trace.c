/* Trace mode (NVTXCORR_TRACE): a trace-event file (Perfetto, chrome://tracing) in one of two
 * forms. Times in microseconds from the start of profile mode.
 * - kineto (the default for a path ending .json; NVTXCORR_TRACE_FORMAT=kineto): the dialect
 *   of PyTorch's profiler (Kineto), which Holistic Trace Analysis reads and nothing else: a
 *   JSON object, its top-level fields in trace_meta.c, its events in "traceEvents". A launch
 *   is a "user_annotation" slice named by its label, around a "cuda_runtime" or
 *   "cuda_driver" slice named by the entry point called (cudaLaunchKernel, cuGraphLaunch,
 *   ...); each GPU operation a "kernel" (or "gpu_memcpy", "gpu_memset") slice on its device
 *   and stream's track and a "gpu_user_annotation" slice of exactly its span named by its
 *   launch's label; an "ac2g" arrow from launch to operation. Written "{...,"traceEvents": [",
 *   events, and at a normal close "]", deviceProperties and "}": a file cut short by SIGKILL
 *   reads as strict JSON with "]}" appended.
 * - chrome (NVTXCORR_TRACE_FORMAT=chrome, the default for any other path): the array form,
 *   one complete ("X") event per launch on its thread named by its label, the GPU operations
 *   on their tracks. It starts "[" and ends "]" at a normal close; append "]" to a file cut
 *   short.
 * Both have an instant event per graph instantiation or update.
 *
 * Streamed with bounded memory: each thread formats its events into its own 64 KiB buffer,
 * written to the file (one write(2), O_APPEND) when it fills, when the thread exits and at
 * process exit. Trace viewers accept the file unterminated: after its head each event is
 * written as ",\n{...}", so a file cut short by SIGKILL is a valid prefix. At a normal close
 * the pages' blank padding is squeezed out and the end appended. NVTXCORR_TRACE_MAX_MB caps
 * the file; past it recording stops, with one warning. A failed write (ENOSPC, EFBIG) or a
 * descriptor that is no longer the file created (the program closed it and may have reused
 * the number) stops it too, said once: nothing is ever written to a descriptor that does not
 * name our file, nor after the end (writes are made under one lock, which the close takes
 * last).
 *
 * Each buffer has a tiny lock (`busy`) between its owner writing it out and the exit path
 * writing it out; the owner appends events without it, past `committed`, which only it moves
 * forward (release) and only it resets (under the lock). A forked child opens its own file
 * (name it with %p) at its first write, so a child that only execs leaves no file.
 *
 * Facts about HTA (hta/ in facebookresearch/HolisticTraceAnalysis) the kineto form relies on,
 * besides trace_meta.c's:
 * - A GPU operation is an event whose args have "stream" (breakdown_analysis.py keeps
 *   `stream != -1`, the default when absent): only GPU operations carry "stream" (the CPU
 *   side has no stream, as in Kineto).
 * - get_gpu_kernel_breakdown sums "dur" per "name" of those; kernels are told from memory
 *   operations by name (utils.py, is_memory_kernel: "Memcpy", "Memset").
 * - get_gpu_user_annotation_breakdown sums "dur" per "name" of cat "gpu_user_annotation"
 *   (with use_gpu_annotation=False, of cat "user_annotation").
 * - trace.py joins CPU and GPU events on args "correlation"; "External id" is Kineto's link
 *   to the operator: both are the launch's external correlation id (cupti.c), kept below
 *   2^63 (pandas reads int64).
 * - trace_parser.py rounds fractional microseconds (ts up, end down) unless
 *   HTA_DISABLE_NS_ROUNDING=1. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Appends a string literal at p + n. */
#define PUT(lit) (memcpy(p + n, lit, sizeof(lit) - 1), n += sizeof(lit) - 1)

_Atomic int nvtxcorr_prof_tracing;
static int trace_fd = -1;
static uint64_t trace_dev, trace_ino; /* what trace_fd must still name to be written to */
static _Atomic int open_state;        /* 0 to open, 1 opening, 2 open, 3 failed */
static _Atomic uint64_t trace_written;
static _Atomic int trace_closed, cap_warned, stopped;
static uint64_t trace_cap;
static int kineto; /* the kineto form (set once, before the file opens) */
/* The file's lock, held for each write to it: writes stay whole pages and in order even
 * when one fails part-way (the part is cut back before the next), and nothing is written
 * once the file is closed. `holding` lets a signal handler that interrupted the holder on
 * its own thread go on without it (the interrupted write never resumes: the process ends). */
static _Atomic int file_busy;
static __thread int holding __attribute__((tls_model("initial-exec")));

int nvtxcorr_profile_tracing(void)
{
    return atomic_load_explicit(&nvtxcorr_prof_tracing, memory_order_relaxed);
}

static int spin_lock(_Atomic int *lock, long tries)
{
    for (long i = 0; i < tries; i++) {
        if (!atomic_exchange_explicit(lock, 1, memory_order_acquire)) return 1;
        if (i > 64) sched_yield();
    }
    return 0;
}

static int lock_buffer(prof_thread_t *t, long tries)
{
    return spin_lock(&t->busy, tries);
}
static void unlock_buffer(prof_thread_t *t)
{
    atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* Bounded (about 2 s, the time of a very slow write): a writer stuck in the kernel delays
 * others, it never hangs them. */
static int lock_file(int closing)
{
    if (holding) return 1;
    for (int i = 0; i < 20000; i++) {
        if (spin_lock(&file_busy, 64)) return holding = 1;
        if (!closing && atomic_load(&trace_closed)) return 0; /* it is not coming back */
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
static void unlock_file(void)
{
    holding = 0;
    atomic_store_explicit(&file_busy, 0, memory_order_release);
}

/* Whether trace_fd is still the file we created: a program may close every descriptor and
 * open its own files (a daemon does), and the number then names one of them. */
static int owned(void)
{
    return nvtxcorr_prof_fd_is(trace_fd, trace_dev, trace_ino);
}

/* Recording stops for good: the descriptor is not ours any more (EBADF), or a write failed
 * (ENOSPC, EFBIG at the file-size limit, EIO). Said once; the file keeps its whole pages, so
 * it still ends on a whole event. Caller holds the file lock. */
static void stop(int err)
{
    atomic_store_explicit(&nvtxcorr_prof_tracing, 0, memory_order_relaxed);
    if (atomic_exchange(&stopped, err)) return;
    struct stat st;
    int known = err != EBADF && fstat(trace_fd, &st) == 0;
    if (known && st.st_size % PROF_TRACE_PAGE) {
        int cut = ftruncate(trace_fd, st.st_size - st.st_size % PROF_TRACE_PAGE);
        (void)cut; /* cannot be cut: viewers still read up to the last whole event */
    }
    nvtxcorr_prof_say(
        "error", nvtxcorr_prof_process.trace_path, ": trace stopped: ", nvtxcorr_prof_strerror(err),
        err == EBADF                            ? "; nothing more is written to that descriptor"
        : known && st.st_size < PROF_TRACE_PAGE ? "; nothing fitted, no trace kept"
                                                : "; the events written before are kept",
        (char *)NULL);
}

/* One write of whole pages to the trace, if it is still ours. Caller holds the file lock. */
static void write_pages(const char *p, size_t n)
{
    if (atomic_load(&stopped)) return;
    int err = owned() ? nvtxcorr_write_full(trace_fd, p, n) : EBADF;
    if (err) stop(err);
}

/* Creates the file and writes its head: "[" (kineto: the top-level fields up to
 * "traceEvents": [) and a process_name metadata event. */
static int open_file(void)
{
    const char *path = nvtxcorr_prof_process.trace_path;
    trace_fd = path[0]
                   ? open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0644)
                   : -1;
    struct stat st;
    if (trace_fd >= 0 && fstat(trace_fd, &st) != 0) close(trace_fd), trace_fd = -1;
    if (trace_fd < 0) {
        if (path[0]) /* a path too long after expansion was reported at start-up */
            nvtxcorr_prof_say("error", path, ": ", nvtxcorr_prof_strerror(errno),
                              errno == EEXIST ? "; not overwritten, no trace recorded"
                                              : "; no trace recorded",
                              (char *)NULL);
        return -1;
    }
    trace_dev = (uint64_t)st.st_dev, trace_ino = (uint64_t)st.st_ino;
    char p[PROF_TRACE_PAGE], num[24];
    size_t n = 0, k = nvtxcorr_fmt_u64(num, (uint64_t)nvtxcorr_prof_process.pid);
    if (kineto) {
        n = nvtxcorr_prof_kineto_head(p);
        p[n++] = '\n';
    } else {
        p[n++] = '[';
    }
    PUT("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
    memcpy(p + n, num, k), n += k;
    PUT(",\"tid\":0,\"args\":{\"name\":\"nvtxcorr pid ");
    memcpy(p + n, num, k), n += k;
    PUT("\"}}");
    memset(p + n, ' ', sizeof p - n); /* events start on a page boundary (reserve) */
    n = sizeof p;
    atomic_store(&trace_written, n); /* the head counts against the cap too */
    int took = !holding;             /* finish() holds the lock when a child opens its file there */
    if (took && !lock_file(0)) return 0;
    write_pages(p, n);
    if (took) unlock_file();
    return 0;
}

static int ensure_open(void)
{
    int s = atomic_load_explicit(&open_state, memory_order_acquire);
    if (s == 2) return 0;
    int expected = 0;
    if (s == 0 && atomic_compare_exchange_strong(&open_state, &expected, 1)) {
        /* A SIGTERM on this thread between the file's creation and its head would end it
         * empty: the signals whose handler ends the trace wait (another thread's handler
         * waits below for the head). */
        sigset_t term, old;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM), sigaddset(&term, SIGINT), sigaddset(&term, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &term, &old);
        int ok = open_file() == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        atomic_store_explicit(&open_state, ok ? 2 : 3, memory_order_release);
        if (!ok) atomic_store_explicit(&nvtxcorr_prof_tracing, 0, memory_order_relaxed);
        return ok ? 0 : -1;
    }
    for (int i = 0; i < 100000 && atomic_load(&open_state) == 1; i++)
        sched_yield();
    return atomic_load(&open_state) == 2 ? 0 : -1;
}

/* Writes one buffer's events; past the cap, stops recording instead. `final`: the closing
 * flush (finish), which holds the file lock and runs after trace_closed is set. */
static void emit(const char *buf, size_t len, int final)
{
    if (len == 0 || ensure_open() != 0) return;
    if (!final && !lock_file(0)) return;
    if (final || !atomic_load(&trace_closed)) {
        uint64_t before = atomic_fetch_add(&trace_written, len);
        if (before + len > trace_cap) {
            atomic_store_explicit(&nvtxcorr_prof_tracing, 0, memory_order_relaxed);
            if (!atomic_exchange(&cap_warned, 1)) {
                char mb[24];
                mb[nvtxcorr_fmt_u64(mb, nvtxcorr_config.trace_max_mb)] = 0;
                nvtxcorr_prof_say("warn", nvtxcorr_prof_process.trace_path,
                                  ": trace reached NVTXCORR_TRACE_MAX_MB=", mb,
                                  " MiB; recording stopped", (char *)NULL);
            }
        } else {
            write_pages(buf, len);
        }
    }
    if (!final) unlock_file();
}

/* Blanks up to the next page boundary of the buffer (whitespace between JSON values). */
static size_t pad_to_page(char *buf, size_t at)
{
    size_t end = (at + PROF_TRACE_PAGE - 1) / PROF_TRACE_PAGE * PROF_TRACE_PAGE;
    memset(buf + at, ' ', end - at);
    return end;
}

/* The closing flush's copy of another thread's last, partial page (one closing flush at a
 * time: it holds the file lock). */
static char tail_page[PROF_TRACE_PAGE];

/* A buffer's events, in whole pages (the last one padded with blanks). Caller holds `busy`.
 * In the closing flush the owner may still be appending past `committed` (a thread that was
 * launching when exit() or a signal came), so nothing at or past it is written: the partial
 * last page is copied and padded in tail_page. */
static void emit_buffer(prof_thread_t *t, int final)
{
    size_t len = atomic_load_explicit(&t->committed, memory_order_acquire);
    if (len == 0) return;
    if (final) {
        size_t whole = len / PROF_TRACE_PAGE * PROF_TRACE_PAGE, part = len - whole;
        if (whole) emit(t->trace_buf, whole, 1);
        if (part) {
            memcpy(tail_page, t->trace_buf + whole, part);
            memset(tail_page + part, ' ', PROF_TRACE_PAGE - part);
            emit(tail_page, PROF_TRACE_PAGE, 1);
        }
        return;
    }
    size_t end = pad_to_page(t->trace_buf, len);
    if (end != len) atomic_store_explicit(&t->committed, end, memory_order_release);
    emit(t->trace_buf, end, 0);
}

void nvtxcorr_prof_trace_flush_own(prof_thread_t *t)
{
    if (t == NULL || t->trace_buf == NULL) return;
    if (!lock_buffer(t, 1000000)) return;
    if (!atomic_load(&trace_closed)) emit_buffer(t, 0);
    atomic_store_explicit(&t->committed, 0, memory_order_relaxed);
    unlock_buffer(t);
}

/* Room for `need` more bytes (at most PROF_TRACE_EVENT_MAX) in the calling thread's buffer,
 * within one page, or NULL. */
static char *reserve(prof_thread_t **out, size_t need)
{
    prof_thread_t *t = nvtxcorr_prof_self;
    if (t == NULL && (t = nvtxcorr_prof_thread_attach()) == NULL) return NULL;
    if (t->trace_buf == NULL && (t->trace_buf = nvtxcorr_prof_zalloc(PROF_TRACE_BUF)) == NULL)
        return NULL;
    if (need > PROF_TRACE_EVENT_MAX) return NULL;
    size_t at = atomic_load_explicit(&t->committed, memory_order_relaxed);
    if (at % PROF_TRACE_PAGE + need > PROF_TRACE_PAGE) {
        at = pad_to_page(t->trace_buf, at);
        atomic_store_explicit(&t->committed, at, memory_order_release);
    }
    if (at + need > PROF_TRACE_BUF) {
        nvtxcorr_prof_trace_flush_own(t);
        at = atomic_load_explicit(&t->committed, memory_order_relaxed);
    }
    *out = t;
    return t->trace_buf + at;
}

static void commit(prof_thread_t *t, size_t len)
{
    size_t at = atomic_load_explicit(&t->committed, memory_order_relaxed);
    atomic_store_explicit(&t->committed, at + len, memory_order_release);
}

/* For a launch's events, whose length is known only once formatted: room for up to `max`
 * bytes at the end of the calling thread's buffer, plus a page, so that commit_moved can
 * move them to the next page when they cross one. Reserving the worst case within the page
 * instead (reserve) left 12% of each page blank for the bench's launches, written and
 * squeezed out again. */
static char *reserve_any(prof_thread_t **out, size_t max)
{
    prof_thread_t *t = nvtxcorr_prof_self;
    if (t == NULL && (t = nvtxcorr_prof_thread_attach()) == NULL) return NULL;
    if (t->trace_buf == NULL && (t->trace_buf = nvtxcorr_prof_zalloc(PROF_TRACE_BUF)) == NULL)
        return NULL;
    if (max > PROF_TRACE_EVENT_MAX) return NULL;
    size_t at = atomic_load_explicit(&t->committed, memory_order_relaxed);
    if (at + max + PROF_TRACE_PAGE > PROF_TRACE_BUF) {
        nvtxcorr_prof_trace_flush_own(t);
        at = atomic_load_explicit(&t->committed, memory_order_relaxed);
    }
    *out = t;
    return t->trace_buf + at;
}

/* Commits `len` bytes formatted at the end of the buffer (reserve_any); events that cross a
 * page boundary move to the next page, the gap blank. Only past `committed` is touched. */
static void commit_moved(prof_thread_t *t, size_t len)
{
    size_t at = atomic_load_explicit(&t->committed, memory_order_relaxed);
    if (at % PROF_TRACE_PAGE + len > PROF_TRACE_PAGE) {
        size_t next = (at / PROF_TRACE_PAGE + 1) * PROF_TRACE_PAGE;
        memmove(t->trace_buf + next, t->trace_buf + at, len);
        memset(t->trace_buf + at, ' ', next - at);
        at = next;
    }
    atomic_store_explicit(&t->committed, at + len, memory_order_release);
}

static size_t fmt_hex(char *p, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    size_t digits = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
    for (size_t i = digits; i-- > 0; v >>= 4)
        p[i] = hex[v & 15];
    return digits;
}

/* ns as microseconds with three decimals. */
static size_t fmt_us(char *p, uint64_t ns)
{
    size_t n = nvtxcorr_fmt_u64(p, ns / 1000);
    unsigned f = (unsigned)(ns % 1000);
    p[n] = '.', p[n + 1] = (char)('0' + f / 100), p[n + 2] = (char)('0' + f / 10 % 10);
    p[n + 3] = (char)('0' + f % 10);
    return n + 4;
}

/* ",\"pid\":P,\"tid\":T,\"ts\":U.UUU"; the constant part is kept per thread. */
static size_t fmt_where(char *out, prof_thread_t *t, uint64_t ticks)
{
    if (t->where_pid != nvtxcorr_prof_process.pid) {
        char *p = t->where;
        size_t n = 0;
        PUT(",\"pid\":");
        n += nvtxcorr_fmt_u64(p + n, (uint64_t)nvtxcorr_prof_process.pid);
        PUT(",\"tid\":");
        n += nvtxcorr_fmt_u64(p + n, t->tid);
        PUT(",\"ts\":");
        t->where_len = n;
        t->where_pid = nvtxcorr_prof_process.pid;
        t->call_api = NULL;
    }
    memcpy(out, t->where, t->where_len);
    return t->where_len +
           fmt_us(out + t->where_len, prof_ticks_ns(ticks - nvtxcorr_prof_clock.origin));
}

/* Kineto's correlation: the external correlation id, as a JSON number pandas reads (int64). */
static size_t fmt_corr(char *p, uint64_t ext)
{
    return nvtxcorr_fmt_u64(p, ext & 0x7fffffffffffffffull);
}

/* The launch's own part of its call's args: the stream handle (chrome), grid, capture. */
static size_t fmt_launch_args(char *p, prof_thread_t *t, const nvtxcorr_profile_launch_t *pl,
                              unsigned gx, unsigned gy, unsigned gz)
{
    int graph = pl->site->graph;
    if (t->args_len == 0 || t->args_stream != pl->stream || t->args_graph != graph ||
        (!graph && (t->args_grid[0] != gx || t->args_grid[1] != gy || t->args_grid[2] != gz))) {
        char *q = t->args_text;
        size_t k = 0;
        if (!kineto) { /* chrome: the stream handle, after its "stream":"0x */
            k = fmt_hex(q, (uintptr_t)pl->stream);
            q[k++] = '"';
        }
        if (!graph) {
            if (k) q[k++] = ',';
            memcpy(q + k, "\"grid\":[", 8), k += 8;
            k += nvtxcorr_fmt_u64(q + k, gx);
            q[k++] = ',';
            k += nvtxcorr_fmt_u64(q + k, gy);
            q[k++] = ',';
            k += nvtxcorr_fmt_u64(q + k, gz);
            q[k++] = ']';
        }
        t->args_stream = pl->stream, t->args_graph = graph;
        t->args_grid[0] = gx, t->args_grid[1] = gy, t->args_grid[2] = gz;
        t->args_len = k;
    }
    size_t n = t->args_len;
    memcpy(p, t->args_text, n);
    if (pl->capturing) {
        if (n) p[n++] = ',';
        PUT("\"capture\":true");
    }
    return n;
}

/* The kineto form's call event up to its "ts", for the entry point `api`: category
 * cuda_runtime or cuda_driver (HTA's symbol table tells CPU-side launches by these), named
 * by the entry point. Kept per thread with `where`, which fmt_where has just made. */
static void call_head(prof_thread_t *t, const char *api)
{
    char *p = t->call_head;
    size_t n = 0, len = strnlen(api, 64);
    PUT(",\n{\"ph\":\"X\",\"cat\":\"");
    if (strncmp(api + strspn(api, "_"), "cuda", 4) == 0) /* __cudaLaunchKernel too */
        PUT("cuda_runtime");
    else
        PUT("cuda_driver");
    PUT("\",\"name\":\"");
    memcpy(p + n, api, len), n += len;
    p[n++] = '"';
    memcpy(p + n, t->where, t->where_len), n += t->where_len;
    t->call_head_len = n;
    t->call_api = api;
}

void nvtxcorr_profile_trace(const nvtxcorr_profile_launch_t *pl, const char *api, unsigned gx,
                            unsigned gy, unsigned gz)
{
    const nvtxcorr_profile_site_t *s = pl->site;
    prof_thread_t *t;
    if (s->trace_prefix == NULL) return;
    char *p = reserve_any(&t, s->trace_prefix_len + 800);
    if (p == NULL) return;
    size_t n = s->trace_prefix_len;
    memcpy(p, s->trace_prefix, n);
    if (kineto) {
        /* The label's user_annotation, then the call, at the same start and duration (their
         * text copied). */
        size_t at = n;
        n += fmt_where(p + n, t, pl->start);
        size_t ts = at + t->where_len, ts_len = n - ts; /* where_len: as fmt_where made it */
        PUT(",\"dur\":");
        size_t dur = n;
        n += fmt_us(p + n, pl->ns);
        size_t dur_len = n - dur;
        p[n++] = '}';
        if (t->call_api != api) call_head(t, api);
        memcpy(p + n, t->call_head, t->call_head_len), n += t->call_head_len;
        memcpy(p + n, p + ts, ts_len), n += ts_len;
        PUT(",\"dur\":");
        memcpy(p + n, p + dur, dur_len), n += dur_len;
        PUT(",\"args\":{");
        n += fmt_launch_args(p + n, t, pl, gx, gy, gz);
        if (pl->ext) {
            if (p[n - 1] != '{') p[n++] = ',';
            PUT("\"correlation\":");
            n += fmt_corr(p + n, pl->ext);
            PUT(",\"External id\":");
            n += fmt_corr(p + n, pl->ext);
        }
        if (p[n - 1] == '{') /* no args: none written (10 bytes a graph launch) */
            n -= sizeof(",\"args\":{") - 1, p[n++] = '}';
        else
            PUT("}}");
        if (pl->ext) { /* Kineto's arrow start: id the correlation, cat and name "ac2g" */
            PUT(",\n{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
            n += fmt_corr(p + n, pl->ext);
            memcpy(p + n, t->where, t->where_len), n += t->where_len;
            n += fmt_us(p + n, prof_ticks_ns(pl->start - nvtxcorr_prof_clock.origin) + pl->ns / 2);
            p[n++] = '}';
        }
        commit_moved(t, n);
        return;
    }
    PUT(",\"stream\":\"0x");
    n += fmt_launch_args(p + n, t, pl, gx, gy, gz);
    p[n++] = '}';
    n += fmt_where(p + n, t, pl->start);
    PUT(",\"dur\":");
    n += fmt_us(p + n, pl->ns);
    p[n++] = '}';
    if (pl->ext) { /* GPU time: where the arrows to its kernels start, inside the launch */
        PUT(",\n{\"ph\":\"s\",\"cat\":\"gpu\",\"name\":\"launch\",\"id\":\"0x");
        n += fmt_hex(p + n, pl->ext);
        p[n++] = '"';
        memcpy(p + n, t->where, t->where_len);
        n += t->where_len;
        n += fmt_us(p + n, prof_ticks_ns(pl->start - nvtxcorr_prof_clock.origin) + pl->ns / 2);
        p[n++] = '}';
    }
    commit_moved(t, n);
}

/* GPU operations (gpu.c, on the thread CUPTI gives buffers back on): one track per device
 * and stream, named once; an arrow ("f", bound to the enclosing slice) from the launch. */
enum { GPU_TRACKS = 256 };
static uint64_t gpu_tracks[GPU_TRACKS]; /* device << 32 | stream, + 1; under gpu.c's lock */

static size_t fmt_gpu_where(char *p, uint32_t device, uint32_t stream)
{
    size_t n = 0;
    PUT(",\"pid\":");
    n += nvtxcorr_fmt_u64(p + n, (uint64_t)nvtxcorr_prof_process.pid);
    PUT(",\"tid\":");
    n += nvtxcorr_fmt_u64(p + n, 1000000000ull + device * 1000000ull + stream % 1000000);
    PUT(",\"ts\":");
    return n;
}

static void gpu_track_name(uint32_t device, uint32_t stream)
{
    uint64_t key = ((uint64_t)device << 32 | stream) + 1;
    size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 56) % GPU_TRACKS, k;
    for (k = 0; k < GPU_TRACKS && gpu_tracks[i] && gpu_tracks[i] != key; k++)
        i = (i + 1) % GPU_TRACKS;
    if (k == GPU_TRACKS || gpu_tracks[i] == key) return; /* named, or too many to name */
    gpu_tracks[i] = key;
    prof_thread_t *t;
    char *p = reserve(&t, 256);
    if (p == NULL) return;
    size_t n = 0;
    PUT(",\n{\"ph\":\"M\",\"name\":\"thread_name\"");
    n += fmt_gpu_where(p + n, device, stream);
    PUT("0,\"args\":{\"name\":\"GPU ");
    n += nvtxcorr_fmt_u64(p + n, device);
    PUT(" stream ");
    n += nvtxcorr_fmt_u64(p + n, stream);
    PUT("\"}}");
    commit(t, n);
}

/* The label a launch's events are named by: its label, or the kernel's name for a "-" rule. */
static const char *label_of(const nvtxcorr_profile_site_t *s)
{
    return s->label_id != PROF_NO_LABEL
               ? atomic_load_explicit(&nvtxcorr_prof_labels[s->label_id], memory_order_acquire)
                     ->text
               : s->function;
}

/* Kineto's GPU operation: a "kernel", "gpu_memcpy" or "gpu_memset" slice with args device,
 * stream, correlation and External id (the memory operations named as CUPTI's records are in
 * Kineto, "Memcpy ..."/"Memset ...", which HTA tells from kernels by); then the launch's
 * label as a gpu_user_annotation of exactly its span, and the arrow's end. */
/* `,"context":["outer",...,"inner"]`: the operation's program context (docs/profile.md,
 * Program context), whole elements only, within CONTEXT_ARG_MAX bytes (an event fits a page). */
enum { CONTEXT_ARG_MAX = 400 };
static size_t fmt_context(char *p, uint32_t ctx)
{
    if (ctx == NVTXCORR_CONTEXT_ROOT) return 0;
    uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
    unsigned depth = nvtxcorr_context_path(ctx, path, NVTXCORR_CONTEXT_PATH_MAX);
    size_t n = 0;
    PUT(",\"context\":[");
    for (unsigned i = 0; i < depth; i++) {
        char e[NVTXCORR_CONTEXT_ELEMENT_MAX * 6 + 8];
        size_t len = nvtxcorr_fmt_json(e, sizeof e, nvtxcorr_context_name(path[i]));
        if (n + len + 4 > CONTEXT_ARG_MAX) break;
        if (i) p[n++] = ',';
        p[n++] = '"';
        memcpy(p + n, e, len), n += len;
        p[n++] = '"';
    }
    p[n++] = ']';
    return n;
}

static size_t fmt_gpu_kineto(char *p, const nvtxcorr_profile_site_t *s,
                             const nvtxcorr_profile_site_t *launch, uint32_t device,
                             uint32_t stream, uint64_t start_ns, uint64_t dur_ns, uint64_t ext,
                             uint32_t ctx)
{
    size_t n = 0;
    int memcpy_op = strcmp(s->name, "[memcpy]") == 0, memset_op = strcmp(s->name, "[memset]") == 0;
    PUT(",\n{\"ph\":\"X\",\"cat\":\"");
    if (memcpy_op)
        PUT("gpu_memcpy\",\"name\":\"Memcpy (graph node)");
    else if (memset_op)
        PUT("gpu_memset\",\"name\":\"Memset (graph node)");
    else
        PUT("kernel\",\"name\":\""), n += nvtxcorr_fmt_json(p + n, 2000, s->name);
    p[n++] = '"';
    size_t where = n;
    n += fmt_gpu_where(p + n, device, stream);
    n += fmt_us(p + n, start_ns);
    PUT(",\"dur\":");
    n += fmt_us(p + n, dur_ns);
    size_t span_len = n - where;
    PUT(",\"args\":{\"device\":");
    n += nvtxcorr_fmt_u64(p + n, device);
    PUT(",\"stream\":");
    n += nvtxcorr_fmt_u64(p + n, stream);
    if (ext) {
        PUT(",\"correlation\":");
        n += fmt_corr(p + n, ext);
    }
    size_t ext_at = n;
    if (ext) {
        PUT(",\"External id\":");
        n += fmt_corr(p + n, ext);
    }
    size_t ids_end = n;
    n += fmt_context(p + n, ctx);
    PUT("}}");
    if (launch == NULL) return n; /* an operation whose launch is not known has no label */
    PUT(",\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 1000, label_of(launch));
    p[n++] = '"';
    memmove(p + n, p + where, span_len), n += span_len;
    PUT(",\"args\":{");
    memmove(p + n, p + ext_at + 1, ids_end - ext_at - 1), n += ids_end - ext_at - 1;
    PUT("}}");
    if (ext) {
        PUT(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
        n += fmt_corr(p + n, ext);
        n += fmt_gpu_where(p + n, device, stream);
        n += fmt_us(p + n, start_ns + dur_ns / 2);
        p[n++] = '}';
    }
    return n;
}

void nvtxcorr_prof_trace_gpu(const nvtxcorr_profile_site_t *s,
                             const nvtxcorr_profile_site_t *launch, uint32_t device,
                             uint32_t stream, uint64_t start_ns, uint64_t dur_ns, uint64_t ext,
                             uint32_t ctx)
{
    if (s == NULL || !nvtxcorr_profile_tracing()) return;
    if (kineto) nvtxcorr_prof_kineto_devices(); /* once, while the driver is known to be up */
    gpu_track_name(device, stream);
    /* Formatted here first and reserved at its length: the worst case (3,900 bytes, for names
     * escaped six bytes a character) would leave most of each page blank. */
    char p[3900];
    prof_thread_t *t;
    size_t n = 0;
    if (kineto) {
        n = fmt_gpu_kineto(p, s, launch, device, stream, start_ns, dur_ns, ext, ctx);
    } else {
        PUT(",\n{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"");
        n += nvtxcorr_fmt_json(p + n, 1000, label_of(s));
        PUT("\",\"args\":{\"kernel\":\"");
        n += nvtxcorr_fmt_json(p + n, 2000, s->name);
        p[n++] = '"';
        n += fmt_context(p + n, ctx);
        p[n++] = '}';
        size_t where = n;
        n += fmt_gpu_where(p + n, device, stream);
        size_t where_len = n - where;
        n += fmt_us(p + n, start_ns);
        PUT(",\"dur\":");
        n += fmt_us(p + n, dur_ns);
        p[n++] = '}';
        if (ext) {
            PUT(",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"gpu\",\"name\":\"launch\",\"id\":\"0x");
            n += fmt_hex(p + n, ext);
            p[n++] = '"';
            memmove(p + n, p + where, where_len);
            n += where_len;
            n += fmt_us(p + n, start_ns + dur_ns / 2);
            p[n++] = '}';
        }
    }
    char *room = reserve(&t, n);
    if (room == NULL) return;
    memcpy(room, p, n);
    commit(t, n);
}

void nvtxcorr_profile_graph_event(const char *text)
{
    if (!nvtxcorr_profile_tracing()) return;
    uint64_t now = prof_now();
    prof_thread_t *t;
    char *p = reserve(&t, 2048 + 128);
    if (p == NULL) return;
    size_t n = 0;
    PUT(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"graph\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 2048, text);
    p[n++] = '"';
    n += fmt_where(p + n, t, now);
    p[n++] = '}';
    commit(t, n);
}

/* The constant part of a site's events. Chrome: the launch event up to inside its args.
 * Kineto: the user_annotation up to its "pid", args only for a label's category; the raw
 * kernel name is on the kernel's GPU event, as in Kineto (on the CPU side it was a third of
 * the bytes per launch, and writing the file is most of the trace's cost). */
void nvtxcorr_prof_trace_prefix(nvtxcorr_profile_site_t *s, const char *label, const char *category)
{
    char *p = malloc(3200);
    if (p == NULL) return;
    size_t n = 0;
    PUT(",\n{\"ph\":\"X\",\"name\":\"");
    n += nvtxcorr_fmt_json(p + n, 1000, label ? label : s->function);
    PUT("\",\"cat\":\"");
    if (kineto) {
        PUT("user_annotation\"");
        if (category) {
            PUT(",\"args\":{\"category\":\"");
            n += nvtxcorr_fmt_json(p + n, 100, category);
            PUT("\"}");
        }
    } else {
        n += nvtxcorr_fmt_json(p + n, 100, category ? category : s->graph ? "graph" : "kernel");
        PUT("\",\"args\":{");
        if (s->graph) {
            PUT("\"graph\":true");
        } else {
            PUT("\"kernel\":\"");
            n += nvtxcorr_fmt_json(p + n, 2000, s->name);
            p[n++] = '"';
        }
    }
    s->trace_prefix_len = n;
    s->trace_prefix = p;
}

int nvtxcorr_prof_trace_init(void)
{
    trace_cap = (uint64_t)nvtxcorr_config.trace_max_mb << 20;
    const char *path = nvtxcorr_prof_process.trace_path;
    size_t len = strlen(path);
    kineto = nvtxcorr_config.trace_format == NVTXCORR_TRACE_KINETO ||
             (nvtxcorr_config.trace_format == NVTXCORR_TRACE_BY_PATH && len >= 5 &&
              strcmp(path + len - 5, ".json") == 0);
    if (ensure_open() != 0) return -1;
    atomic_store(&nvtxcorr_prof_tracing, 1);
    return 0;
}

/* At a normal close the blank padding that kept every page whole (so that a file cut short
 * by SIGKILL ends on a whole event) has done its work: the pages are read back and written
 * again without it, in place (what is written never passes what was read), and the file is
 * cut to the events. A failure part-way keeps what was squeezed so far, which ends on a
 * whole event. Returns the file's new length, or -1 when it was left as it was. */
static char squeeze_buf[PROF_TRACE_BUF]; /* finish() only, which runs once */
static off_t squeeze(void)
{
    struct stat st;
    int fl = fcntl(trace_fd, F_GETFL);
    if (fstat(trace_fd, &st) != 0 || fl < 0 || fcntl(trace_fd, F_SETFL, fl & ~O_APPEND) != 0)
        return -1;
    off_t size = st.st_size - st.st_size % PROF_TRACE_PAGE, rd = 0, wr = 0;
    while (rd < size) {
        size_t want =
            (size_t)(size - rd) < sizeof squeeze_buf ? (size_t)(size - rd) : sizeof squeeze_buf;
        size_t got = 0;
        if (lseek(trace_fd, rd, SEEK_SET) != rd) break;
        while (got < want) {
            ssize_t r = read(trace_fd, squeeze_buf + got, want - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        if (got < want) break;
        size_t n = 0;
        for (size_t page = 0; page < want; page += PROF_TRACE_PAGE) {
            size_t end = page + PROF_TRACE_PAGE;
            while (end > page && squeeze_buf[end - 1] == ' ')
                end--;
            memmove(squeeze_buf + n, squeeze_buf + page, end - page);
            n += end - page;
        }
        if (lseek(trace_fd, wr, SEEK_SET) != wr || nvtxcorr_write_full(trace_fd, squeeze_buf, n))
            break;
        wr += (off_t)n, rd += (off_t)want;
    }
    if (rd < size && rd != wr) size = wr; /* stopped part-way: only the squeezed part is whole */
    if (rd >= size) size = wr;
    if (ftruncate(trace_fd, size) != 0 || lseek(trace_fd, size, SEEK_SET) != size) return -1;
    return size;
}

void nvtxcorr_prof_trace_finish(int from_signal)
{
    if (atomic_load(&open_state) == 0 && !atomic_load(&nvtxcorr_prof_tracing)) return;
    atomic_store(&nvtxcorr_prof_tracing, 0);
    atomic_store(&trace_closed, 1);
    /* Writers that passed the gate finish first; a later one sees trace_closed and writes
     * nothing. If the lock cannot be had (a write stuck in the kernel), the file is left
     * open and unterminated, as a killed process leaves it: nothing follows its end. */
    if (!lock_file(1)) return;
    /* Everything flushed so far, then each thread's pending events. A buffer whose lock is
     * held (by the thread this signal interrupted) is left out rather than waited for. */
    for (prof_thread_t *t = atomic_load_explicit(&nvtxcorr_prof_threads, memory_order_acquire); t;
         t = t->next) {
        if (t->trace_buf == NULL || !lock_buffer(t, from_signal ? 1000 : 1000000)) continue;
        emit_buffer(t, 1);
        unlock_buffer(t);
    }
    int err = atomic_load(&stopped);
    if (atomic_load(&open_state) == 2 && err != EBADF && owned()) {
        off_t size = squeeze(); /* -1: left as it was (an append-only file), still whole */
        struct stat st;
        if (size != 0 && kineto) {
            char end[4200] = "\n]";
            size_t n = 2 + nvtxcorr_prof_kineto_tail(end + 2, sizeof end - 2);
            nvtxcorr_write_full(trace_fd, end, n);
        } else if (size != 0) {
            nvtxcorr_write_full(trace_fd, "\n]\n", 3);
        } else if (size == 0 && lstat(nvtxcorr_prof_process.trace_path, &st) == 0 &&
                   (uint64_t)st.st_dev == trace_dev && (uint64_t)st.st_ino == trace_ino) {
            unlink(nvtxcorr_prof_process.trace_path); /* not even its head fitted */
        }
        close(trace_fd);
    }
    /* The lock stays taken: nothing is written to the trace after its end. */
}

void nvtxcorr_prof_trace_after_fork(void)
{
    /* The parent's file stays the parent's (unless the number is no longer the trace's). */
    if (atomic_load(&open_state) == 2 && owned()) close(trace_fd);
    trace_fd = -1;
    atomic_store(&open_state, 0);
    atomic_store(&trace_written, 0);
    atomic_store(&trace_closed, 0);
    atomic_store(&cap_warned, 0);
    atomic_store(&stopped, 0);
    atomic_store(&file_busy, 0);
    holding = 0;
    if (nvtxcorr_config.trace) atomic_store(&nvtxcorr_prof_tracing, 1);
}
