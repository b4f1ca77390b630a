/* The Kineto form's top-level fields (trace_meta.c). */
#ifndef NVTXCORR_PROF_TRACE_META_H
#define NVTXCORR_PROF_TRACE_META_H

#include <stddef.h>

/* The Kineto form's top-level fields. The head, up to "traceEvents": [ (at most
 * 512 bytes); deviceProperties, asked of the driver at the first GPU operation; the tail
 * written after the events' "]" at a normal close (deviceProperties, "}"). */
size_t nvtxcorr_prof_kineto_head(char *p);
void nvtxcorr_prof_kineto_devices(void);
size_t nvtxcorr_prof_kineto_tail(char *p, size_t size);
#endif
