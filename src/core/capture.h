/* Stream capture (capture.c): which streams capture, and the label a launch into one gets. */
#ifndef NVTXCORR_CAPTURE_H
#define NVTXCORR_CAPTURE_H
#include "emit.h"
/* A capture began (+1) or ended (-1) somewhere: nvtxcorr_captures_open (state.h). */
void nvtxcorr_capture_changed(int delta);
/* Whether `stream` is capturing; call only while nvtxcorr_captures_open is nonzero. */
int nvtxcorr_capture_active(const void *stream, int ptsz);
const nvtxcorr_label_t *nvtxcorr_capture_adjust(const nvtxcorr_label_t *l, const void *stream,
                                                int ptsz);

#endif
