/*
 * Internal header of the recording NVTX tool (libnvtx_recorder.so): the output side, used by
 * the callbacks in nvtx_recorder.c and implemented in nvtx_recorder_out.c.
 */
#ifndef NVTXCORR_NVTX_RECORDER_H
#define NVTXCORR_NVTX_RECORDER_H

#include <stddef.h>

/*
 * The CUDA and NVTX signatures are fixed and a fake ignores many of their arguments; naming
 * each one unused would only add noise.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/*
 * A line under construction.  Most lines fit the inline buffer; long ones (kernel names of
 * heavily templated code run to kilobytes) move to the heap.
 */
struct rec_line {
    char *p;
    size_t len, cap;
    char inline_buf[512];
};

void rec_line_init(struct rec_line *l);
void rec_line_str(struct rec_line *l, const char *s);    /* verbatim */
void rec_line_text(struct rec_line *l, const char *s);   /* tab/newline escaped */
void rec_line_wtext(struct rec_line *l, const void *ws); /* wchar_t text, ASCII subset */
void rec_line_fmt(struct rec_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends the newline, hands the line to the output buffer and releases it. */
void rec_line_emit(struct rec_line *l);

/* Opens NVTXREC_OUT; returns 0 when there is nowhere to write (events are then not formatted). */
int rec_out_open(void);

#endif /* NVTXCORR_NVTX_RECORDER_H */
