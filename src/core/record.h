/* One record per launch handle (kernels.c, graphs.c): what the handle maps hold. */
#ifndef NVTXCORR_RECORD_H
#define NVTXCORR_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include "emit.h"
/* What the handle maps hold: everything known about the handle, derived once at its first
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
 * label library -> emit. */
typedef const void *(*nvtxcorr_label_slow_fn)(const void *key);

#endif
