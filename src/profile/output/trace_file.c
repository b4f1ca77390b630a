/* Trace mode (NVTXCORR_TRACE): a trace-event file (Perfetto, chrome://tracing, HTA) in one
 * of two forms, each in its own file behind trace.h: trace_kineto.c (the default for a path
 * ending .json) and trace_chrome.c. This file keeps what they share: the file, its pages, the
 * per-thread buffers, the cap and the close. Times in microseconds from the start of profile
 * mode. Both forms have an instant event per graph instantiation or update (here).
 *
 * A launch's events are formatted by the writer thread when it has room for them
 * (trace_writer.c), else by the launching thread. Streamed with bounded memory: each thread
 * (the writer too) formats its events into its own 64 KiB buffer,
 * written to the file (one write(2), O_APPEND) when it fills, when the thread exits and at
 * process exit. Trace viewers accept the file unterminated: after its head each event is
 * written as ",\n{...}", so a file cut short by SIGKILL is a valid prefix. At a normal close
 * the pages' blank padding is squeezed out and the form's end appended. NVTXCORR_TRACE_MAX_MB
 * caps the file; past it recording stops, with one warning. A failed write (ENOSPC, EFBIG) or
 * a descriptor that is no longer the file created (the program closed it and may have reused
 * the number) stops it too, said once: nothing is ever written to a descriptor that does not
 * name our file, nor after the end (writes are made under one lock, which the close takes
 * last).
 *
 * Each buffer has a tiny lock (`busy`) between its owner writing it out and the exit path
 * writing it out; the owner appends events without it, past `committed`, which only it moves
 * forward (release) and only it resets (under the lock). A forked child opens its own file
 * (name it with %p) at its first write, so a child that only execs leaves no file. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/config.h"
#include "core/io.h"
#include "core/routes.h"
#include "profile/base/out.h"
#include "profile/base/pages.h"
#include "profile/base/process.h"
#include "profile/counting/launch.h"
#include "profile/counting/stats.h"
#include "trace.h"
#include "trace_file.h"
#include "trace_format.h"
/* The flag above, also told to the core when it changes: while a trace is written, the entry
 * stubs take their trace route (routes.c). */
static void set_tracing(int on)
{
    if (atomic_exchange(&nvtxcorr_prof_tracing, on) != on) nvtxcorr_routes_tracing(on);
}
static int trace_fd = -1;
static uint64_t trace_dev, trace_ino; /* what trace_fd must still name to be written to */
static _Atomic int open_state;        /* 0 to open, 1 opening, 2 open, 3 failed */
static _Atomic uint64_t trace_written;
static _Atomic int trace_closed, cap_warned, stopped;
static uint64_t trace_cap;
static const prof_trace_form_t *form; /* set once, before the file opens */
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

/* Whether trace_fd is still the file we created, with a name: 0, or EBADF when the number
 * names another file (a program may close every descriptor and open its own files, as a
 * daemon does), or ENOENT when the file has no name left (its directory was removed while the
 * program ran: written on, it would fill a file nobody can read up to the cap). One fstat,
 * made before each write of pages anyway, never per launch. */
static int file_state(void)
{
    struct stat st;
    PROF_FD_RACE_BEGIN();
    int ok = trace_fd >= 0 && fstat(trace_fd, &st) == 0;
    PROF_FD_RACE_END();
    if (!ok || (uint64_t)st.st_dev != trace_dev || (uint64_t)st.st_ino != trace_ino) return EBADF;
    return st.st_nlink == 0 ? ENOENT : 0;
}

static int owned(void)
{
    return file_state() != EBADF;
}

/* Recording stops for good: the descriptor is not ours any more (EBADF), the file was removed
 * (ENOENT), or a write failed (ENOSPC, EFBIG at the file-size limit, EIO). Said once; the file
 * keeps its whole pages, so it still ends on a whole event. Caller holds the file lock. */
static void stop(int err)
{
    set_tracing(0);
    if (atomic_exchange(&stopped, err)) return;
    if (err == ENOENT) {
        nvtxcorr_prof_say("error", nvtxcorr_prof_process.trace_path,
                          ": trace stopped: the file was removed while the program ran; "
                          "nothing more is written",
                          (char *)NULL);
        return;
    }
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
    int err = file_state();
    if (err == 0) {
        PROF_FD_RACE_BEGIN(); /* the program may close it meanwhile (base/out.h) */
        err = nvtxcorr_write_full(trace_fd, p, n);
        PROF_FD_RACE_END();
    }
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
    n = form->head(p);
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
        if (!ok) set_tracing(0);
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
            set_tracing(0);
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

char *nvtxcorr_prof_trace_reserve(prof_thread_t **out, size_t need)
{
    return nvtxcorr_profile_tracing() ? reserve(out, need) : NULL;
}

void nvtxcorr_prof_trace_commit(prof_thread_t *t, size_t len)
{
    commit(t, len);
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

void nvtxcorr_prof_trace_launch(prof_thread_t *fmt, const nvtxcorr_profile_launch_t *pl,
                                const char *api, unsigned gx, unsigned gy, unsigned gz)
{
    const nvtxcorr_profile_site_t *s = pl->site;
    prof_thread_t *t;
    char *p = reserve_any(&t, s->trace_prefix_len + 800);
    if (p == NULL) return;
    size_t n = s->trace_prefix_len;
    memcpy(p, s->trace_prefix, n);
    n += form->launch(p + n, fmt ? fmt : t, pl, api, gx, gy, gz);
    commit_moved(t, n);
}

/* The constant part of a site's events (the form's prefix), made once per site. */
void nvtxcorr_prof_trace_prefix(nvtxcorr_profile_site_t *s, const char *label, const char *category)
{
    char *p = nvtxcorr_prof_alloc(3200); /* at a first launch: no malloc (pages.c) */
    if (p == NULL) return;
    s->trace_prefix_len = form->prefix(p, s, label, category);
    s->trace_prefix = p;
}

/* The file's start: its cap and form, the file opened, recording on. */
int nvtxcorr_prof_trace_file_open(void)
{
    trace_cap = (uint64_t)nvtxcorr_config.trace_max_mb << 20;
    const char *path = nvtxcorr_prof_process.trace_path;
    size_t len = strlen(path);
    int kineto = nvtxcorr_config.trace_format == NVTXCORR_TRACE_KINETO ||
                 (nvtxcorr_config.trace_format == NVTXCORR_TRACE_BY_PATH && len >= 5 &&
                  strcmp(path + len - 5, ".json") == 0);
    form = kineto ? &nvtxcorr_prof_trace_kineto : &nvtxcorr_prof_trace_chrome;
    if (ensure_open() != 0) return -1;
    set_tracing(1);
    return 0;
}

const prof_trace_form_t *nvtxcorr_prof_trace_form(void)
{
    return form;
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

/* Recording stops; 0 when there was nothing to stop (no file, no trace). */
int nvtxcorr_prof_trace_file_stop(void)
{
    if (atomic_load(&open_state) == 0 && !atomic_load(&nvtxcorr_prof_tracing)) return 0;
    set_tracing(0);
    return 1;
}

/* The close, once every launch is formatted: every buffer written, the padding squeezed out,
 * the form's end appended. */
void nvtxcorr_prof_trace_file_close(int from_signal)
{
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
    int err = atomic_load(&stopped), state = atomic_load(&open_state) == 2 ? file_state() : EBADF;
    if (state == ENOENT && err != ENOENT) stop(ENOENT); /* removed after its last write */
    if (state == ENOENT) close(trace_fd);
    if (state == 0 && err != EBADF) {
        off_t size = squeeze(); /* -1: left as it was (an append-only file), still whole */
        struct stat st;
        if (size != 0) {
            static char end[4200]; /* finish() only, which runs once */
            nvtxcorr_write_full(trace_fd, end, form->tail(end, sizeof end));
        } else if (size == 0 && lstat(nvtxcorr_prof_process.trace_path, &st) == 0 &&
                   (uint64_t)st.st_dev == trace_dev && (uint64_t)st.st_ino == trace_ino) {
            unlink(nvtxcorr_prof_process.trace_path); /* not even its head fitted */
        }
        close(trace_fd);
    }
    /* The lock stays taken: nothing is written to the trace after its end. */
}

void nvtxcorr_prof_trace_file_after_fork(void)
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
}

void nvtxcorr_prof_trace_file_resume(void)
{
    if (nvtxcorr_config.trace) set_tracing(1);
}
