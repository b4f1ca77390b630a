/* The writer (out.c): a static buffer and write(2), async-signal-safe (no malloc, no stdio,
 * no locale), and the formatting every output shares. */
#ifndef NVTXCORR_PROF_OUT_H
#define NVTXCORR_PROF_OUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct prof_out {
    int fd;
    int failed, err; /* err: the errno of the failure */
    int owned;       /* fd is a file nvtxcorr opened: checked to be it before each write */
    uint64_t dev, ino;
    int html; /* nvtxcorr_out_json escapes '<' too: the JSON is inside a <script> element */
    size_t len;
    char buf[16384];
} prof_out_t;
/* Starts writing to fd; owned: a file nvtxcorr opened, which the program may close and
 * replace (a daemon closing every descriptor): each write first checks that the descriptor
 * still names that file (fstat's device and inode), and fails with EBADF otherwise. */
void nvtxcorr_out_open(prof_out_t *o, int fd, int owned);
/* Whether fd still names the file with this device and inode. */
int nvtxcorr_prof_fd_is(int fd, uint64_t dev, uint64_t ino);
/* Around the calls on a descriptor of ours that the program may close, and reopen for its own
 * file, on another thread meanwhile (the trace's, written by its writer thread): that check
 * and the write after it. ThreadSanitizer reports the program's close or open and our call as
 * a race on the descriptor, which is the very case the check answers
 * (e2e.trace-never-writes-into-the-programs-files under e2e.tsan): its runtime (libtsan, not
 * in its public header) is told to ignore this thread's accesses meanwhile. */
#if defined(__SANITIZE_THREAD__)
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define PROF_FD_RACE_BEGIN() __tsan_ignore_thread_begin()
#define PROF_FD_RACE_END() __tsan_ignore_thread_end()
#else
#define PROF_FD_RACE_BEGIN() ((void)0)
#define PROF_FD_RACE_END() ((void)0)
#endif
void nvtxcorr_out_flush(prof_out_t *o);
void nvtxcorr_out_mem(prof_out_t *o, const char *s, size_t n);
void nvtxcorr_out_str(prof_out_t *o, const char *s);
void nvtxcorr_out_u64(prof_out_t *o, uint64_t v);
void nvtxcorr_out_json(prof_out_t *o, const char *s); /* a quoted JSON string, or null */
void nvtxcorr_out_csv(prof_out_t *o, const char *s);  /* a CSV field, quoted when needed */
/* Into a caller's buffer: decimal, and JSON-escaped text; each returns the length written
 * (never more than `size`, no terminator). */
size_t nvtxcorr_fmt_u64(char *buf, uint64_t v);
size_t nvtxcorr_fmt_json(char *buf, size_t size, const char *s);
/* parts[0..n) appended to buf at len, within size, NUL-terminated; the new length.
 * Async-signal-safe (the notes are made where snprintf is not). */
size_t nvtxcorr_prof_join(char *buf, size_t size, size_t len, const char *const *parts, size_t n);
/* The length of the well-formed UTF-8 character at s, or 0 when the byte there starts none. */
/* s for a line of the text table: control characters (C0, DEL, C1) and bytes that are not
 * well-formed UTF-8 become '?', so a name cannot break a line or the columns (NUL-terminated, cut
 * to fit size). */
size_t nvtxcorr_text_safe(char *buf, size_t size, const char *s);
/* A whole diagnostic line, "nvtxcorr: <level>: a b c\n", printed whatever NVTXCORR_LOG says
 * (profile mode's own messages): the parts are concatenated, up to a NULL. */
void nvtxcorr_prof_say(const char *level, ...) __attribute__((sentinel));
const char *nvtxcorr_prof_strerror(int err);
/* Sorts v[0, n) so that before(v[i], v[i + 1]) or neither is before the other; no allocation,
 * so the signal path may use it. */
void nvtxcorr_prof_sort(uint32_t *v, size_t n, int (*before)(uint32_t a, uint32_t b));

/* out.c: the text tables' cells. */
void nvtxcorr_prof_fmt_time(char *buf, uint64_t ns);
void nvtxcorr_prof_pad(prof_out_t *o, const char *s, size_t width, int right);
/* The text tables' layout (docs/profile.md, "CSV and text"; the report's render.py the same): a
 * line is at most PROF_TEXT_WIDTH columns, the numbers take `numbers` of them at the right and
 * the one or two text columns share the rest. Feed every value shown (headings included) to
 * nvtxcorr_prof_cols_need, then nvtxcorr_prof_cols_fit gives the widths. */
#define PROF_TEXT_WIDTH 100
#define PROF_SECOND_MIN 22
typedef struct prof_cols {
    size_t need1, need2, first, second;
} prof_cols_t;
void nvtxcorr_prof_cols_need(prof_cols_t *c, const char *first, const char *second);
void nvtxcorr_prof_cols_fit(prof_cols_t *c, size_t numbers, int two);

#endif
