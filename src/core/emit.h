/* Labels ready to push, and the NVTX calls that push them (emit.c). */
#ifndef NVTXCORR_EMIT_H
#define NVTXCORR_EMIT_H

#include <stdint.h>

#include <nvtx3/nvToolsExt.h>
#include "fork.h"
/* A label is what a launch's NVTX range is pushed with: the label table's answer for a
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
/* The name of a category id a label carries; NULL for 0. */
const char *nvtxcorr_category_name(uint32_t id);
void nvtxcorr_emit_fork(nvtxcorr_fork_t phase); /* interned labels, NVTX calls */

#endif
