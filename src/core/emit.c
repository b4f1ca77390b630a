/* NVTX emission: the `nvtxcorr` domain, labels as registered strings (so nsys
 * --capture-range=nvtx works without NSYS_NVTX_PROFILER_REGISTER_ONLY=0), named categories and
 * marks. NVTX3 is header-only: this library has its own NVTX state and loads the tool named
 * by NVTX_INJECTION64_PATH itself; with none, nvtxDomainCreateA returns NULL, which is how
 * pass-through is decided. Labels are interned, so a label shared by many kernels is
 * registered once; everything here runs on slow paths, under one mutex. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtxcorr/nvtxcorr.h>
#include "chain_table.h"
#include "emit.h"
#include "fork.h"
#include "labels/hash.h"
#include "labels/labels.h"
#include "labels/names.h"
#include "map.h"
#include "record.h"
#include "slowstack.h"
#include "state.h"
nvtxDomainHandle_t nvtxcorr_domain;
_Atomic int nvtxcorr_nvtx_refused_self;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static nvtxcorr_map_t capture_variants; /* label -> its " [capture]" variant */

/* Creating the domain is this library's first NVTX call: NVTX3 loads the tool and has it fill
 * in its function pointers before returning (nvtxInitOnce; another thread's first call waits
 * for the same), and from then on each is the tool's function or NULL. The entry stubs call
 * the push and pop from there: NVTX's inline nvtxDomainRangePushEx only loads the same
 * pointer and tests it. A tool without either gets no stub fast path (routes.c). */
int nvtxcorr_emit_init(void)
{
    nvtxcorr_domain = nvtxDomainCreateA(NVTXCORR_DOMAIN);
    if (nvtxcorr_domain) {
        nvtxcorr_tool_push =
            (void *)NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).nvtxDomainRangePushEx_impl_fnptr;
        nvtxcorr_tool_pop =
            (void *)NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).nvtxDomainRangePop_impl_fnptr;
    }
    return nvtxcorr_domain != NULL;
}

enum { CATEGORIES_MAX = 256 };           /* NVTX category ids this library names */
static char *categories[CATEGORIES_MAX]; /* id - 1 -> name */
static unsigned category_count;

/* Caller holds lock. 0 when none or when the table is full. */
static uint32_t category_id(const char *name)
{
    if (name == NULL || !*name) return 0;
    for (unsigned i = 0; i < category_count; i++)
        if (!strcmp(categories[i], name)) return i + 1;
    if (category_count == CATEGORIES_MAX || !(categories[category_count] = strdup(name))) return 0;
    if (nvtxcorr_domain) nvtxDomainNameCategoryA(nvtxcorr_domain, category_count + 1, name);
    return ++category_count;
}

typedef struct interned {
    nvtxcorr_label_t label;
    nvtxcorr_chain_link_t link; /* hashed by the label's text */
    uint32_t color_key, category;
} interned_t;

/* Growable (chain_table.h), so the first launch of the 100,000th distinct kernel costs what
 * the first one did. Guarded by lock. */
static nvtxcorr_chain_table_t interned;

/* The ready-to-push attributes of a label whose text lives at `text` (not copied). */
static void fill(nvtxcorr_label_t *l, const char *text, int has_color, uint32_t color,
                 uint32_t category, int skip)
{
    nvtxEventAttributes_t *a = &l->attr;
    memset(a, 0, sizeof *a);
    l->text = text;
    l->skip = skip;
    a->version = NVTX_VERSION;
    a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a->category = category;
    a->colorType = has_color ? NVTX_COLOR_ARGB : NVTX_COLOR_UNKNOWN;
    a->color = has_color ? color | 0xFF000000u : 0;
    a->messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    if (!skip && nvtxcorr_domain) /* none without a tool (profile mode) */
        a->message.registered = nvtxDomainRegisterStringA(nvtxcorr_domain, text);
    if (!skip && a->message.registered == NULL) { /* a tool without registered strings */
        a->messageType = NVTX_MESSAGE_TYPE_ASCII;
        a->message.ascii = text;
    }
}

/* A label owned by the caller (graphs.c keeps one per exec and recycles it): not interned,
 * so labels that embed an ever-growing ordinal do not accumulate. */
void nvtxcorr_label_init(nvtxcorr_label_t *l, const char *text, int has_color, uint32_t color,
                         const char *category, int skip)
{
    nvtxcorr_map_put(&capture_variants, l, NULL); /* a recycled label's old text */
    pthread_mutex_lock(&lock);
    uint32_t cat = skip ? 0 : category_id(category);
    fill(l, text, has_color, color, cat, skip);
    pthread_mutex_unlock(&lock);
}

const nvtxcorr_label_t *nvtxcorr_label_make(const char *text, int has_color, uint32_t color,
                                            const char *category, int skip)
{
    uint32_t color_key = has_color ? color | 0xFF000000u : 0;
    pthread_mutex_lock(&lock);
    uint32_t cat = skip ? 0 : category_id(category);
    if (nvtxcorr_chain_reserve(&interned) != 0) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    uint64_t h = nvtxcorr_hash_str(text);
    interned_t *e = NULL;
    for (nvtxcorr_chain_link_t *k = nvtxcorr_chain_first(&interned, h); k && !e; k = k->next) {
        interned_t *x = (interned_t *)((char *)k - offsetof(interned_t, link));
        if (k->hash == h && x->label.skip == skip && x->color_key == color_key &&
            x->category == cat && !strcmp(x->label.text, text))
            e = x;
    }
    if (e == NULL && (e = calloc(1, sizeof *e)) != NULL) {
        e->label.text = strdup(text);
        if (e->label.text == NULL) {
            free(e);
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        e->color_key = color_key;
        e->category = cat;
        fill(&e->label, e->label.text, has_color, color_key, cat, skip);
        nvtxcorr_chain_insert(&interned, &e->link, h);
    }
    pthread_mutex_unlock(&lock);
    return e ? &e->label : NULL;
}

/* A launch made while its stream captures is recorded into a graph, not run: it gets the
 * "capture" category and a " [capture]" suffix, so it is never mistaken for execution. The
 * variant of each label is made once and kept in a map keyed by the label. */
typedef struct variant_job {
    const nvtxcorr_label_t *label;
    const nvtxcorr_label_t *variant;
} variant_job_t;

static void make_capture_variant(void *arg)
{
    variant_job_t *job = arg;
    const nvtxcorr_label_t *l = job->label;
    char text[NVTXCORR_LABEL_MAX + sizeof NVTXCORR_CAPTURE_SUFFIX];
    snprintf(text, sizeof text, "%s" NVTXCORR_CAPTURE_SUFFIX, l->text);
    job->variant = nvtxcorr_label_make(text, l->attr.colorType == NVTX_COLOR_ARGB, l->attr.color,
                                       NVTXCORR_CATEGORY_CAPTURE, 0);
    if (job->variant) nvtxcorr_map_put(&capture_variants, l, nvtxcorr_label_value(job->variant));
}

const nvtxcorr_label_t *nvtxcorr_label_capture_variant(const nvtxcorr_label_t *l)
{
    if (l == NULL || l->skip) return l;
    const nvtxcorr_label_t *c = nvtxcorr_label_of(nvtxcorr_map_get(&capture_variants, l));
    if (c) return c;
    variant_job_t job = {l, NULL};
    nvtxcorr_on_slow_stack(make_capture_variant, &job); /* once per label */
    return job.variant ? job.variant : l;
}

void nvtxcorr_emit_mark(const char *text, const char *category)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    pthread_mutex_lock(&lock);
    a.category = category_id(category);
    pthread_mutex_unlock(&lock);
    /* Marks carry kernel base names (graph descriptors): no control bytes to the tool. */
    char shown[4096];
    nvtxcorr_escape_controls(shown, sizeof shown, text);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = shown;
    nvtxDomainMarkEx(nvtxcorr_domain, &a);
}

const char *nvtxcorr_category_name(uint32_t id)
{
    return id >= 1 && id <= CATEGORIES_MAX ? categories[id - 1] : NULL;
}

void nvtxcorr_emit_fork(nvtxcorr_fork_t phase)
{
    nvtxcorr_fork_mutex(&lock, phase);
}
