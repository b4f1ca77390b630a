/* Program context: the program's own NVTX ranges, seen by nvtxcorr as the NVTX tool
 * (nvtx_tool.c), kept as one stack per thread and interned as the nodes of one tree (tree.c).
 * A node is a path of range names from the outermost in; its id is what a launch records
 * (profile mode reads nvtxcorr_context_now) and what a graph node keeps from its capture.
 *
 * Ids: 0 is the root (no range open: the path []), NVTXCORR_CONTEXT_OTHER the node ["[other]"]
 * that every path past NVTXCORR_CONTEXT_MAX_PATHS distinct ones is recorded as. Nodes are never
 * removed; a node's fields never change once its id is published.
 *
 * This layer includes the core's header (configuration, diagnostics) and nothing of profile
 * mode: profile mode reads it (scripts/check-layers). */
#ifndef NVTXCORR_CONTEXT_H
#define NVTXCORR_CONTEXT_H

#include <stdatomic.h>
#include <stdint.h>

enum {
    NVTXCORR_CONTEXT_ROOT = 0,
    NVTXCORR_CONTEXT_OTHER = 1,
    NVTXCORR_CONTEXT_MAX_DEPTH = 32,    /* deeper ranges add no element */
    NVTXCORR_CONTEXT_MAX_PATHS = 65536, /* distinct paths, the root and [other] aside */
    NVTXCORR_CONTEXT_ELEMENT_MAX = 256, /* bytes of a path element (the range's message) */
    /* Distinct NVTX domains and registered strings (nvtx_tool.c), each held once; past these
     * every new one is the shared "[other]" (said once). */
    NVTXCORR_CONTEXT_MAX_DOMAINS = 4096,
    NVTXCORR_CONTEXT_MAX_STRINGS = 65536,
    NVTXCORR_CONTEXT_IDS = NVTXCORR_CONTEXT_MAX_PATHS + 2,
    /* A replayed kernel's path: the launch's live path, the graph's label, the node's capture
     * path (each bounded), cut here. */
    NVTXCORR_CONTEXT_PATH_MAX = 2 * NVTXCORR_CONTEXT_MAX_DEPTH + 1
};

/* ---- the per-thread stack (nvtx_tool.c) ---- */
typedef struct nvtxcorr_context_thread {
    uint32_t depth;                                /* ranges open, the truncated ones too */
    uint32_t node[NVTXCORR_CONTEXT_MAX_DEPTH + 1]; /* node[i]: the path of the i outermost */
} nvtxcorr_context_thread_t;
extern __thread nvtxcorr_context_thread_t nvtxcorr_context_self
    __attribute__((tls_model("initial-exec")));

/* The context open on the calling thread: one thread-local load. */
static inline uint32_t nvtxcorr_context_now(void)
{
    const nvtxcorr_context_thread_t *t = &nvtxcorr_context_self;
    return t->node[t->depth < NVTXCORR_CONTEXT_MAX_DEPTH ? t->depth : NVTXCORR_CONTEXT_MAX_DEPTH];
}

/* Whether an NVTX instance of the program took nvtxcorr as its tool (any but nvtxcorr's own):
 * set once, by the first, and never cleared. */
extern _Atomic int nvtxcorr_context_active;
int nvtxcorr_context_injected(void);

/* What hostile or unusual NVTX use cost, for the summary's totals (never trusted, only counted). */
typedef struct nvtxcorr_context_counts {
    _Atomic uint64_t truncated;     /* pushes deeper than NVTXCORR_CONTEXT_MAX_DEPTH */
    _Atomic uint64_t other;         /* pushes recorded as [other]: the path table was full */
    _Atomic uint64_t unbalanced;    /* pops with nothing open on the thread */
    _Atomic uint64_t long_messages; /* messages cut to NVTXCORR_CONTEXT_ELEMENT_MAX bytes */
    _Atomic uint64_t invalid_utf8;  /* messages with bytes that are not UTF-8, escaped */
    _Atomic uint64_t instances;     /* NVTX instances that took nvtxcorr as their tool */
} nvtxcorr_context_counts_t;
extern nvtxcorr_context_counts_t nvtxcorr_context_counts;

/* ---- registered listeners: every range pushed and popped in a domain other than nvtxcorr's
 * (NVTXCORR_CONTEXT_DOMAINS does not narrow these), called on the pushing thread, inside the
 * program's NVTX call. `domain`: the domain's name ("" for the default domain); `message`: the
 * range's path element as the context records it (cut, escaped) for a push, and for a pop the
 * element of the range it closes, or NULL when not known (deeper than the bound, a domain left
 * out of the context, nothing open). Up to NVTXCORR_CONTEXT_LISTENERS; registered once, never
 * removed; a listener must not call NVTX. Returns 0, or -1 when the table is full. ---- */
enum { NVTXCORR_CONTEXT_LISTENERS = 4 };
typedef void (*nvtxcorr_range_fn)(int push, const char *domain, const char *message);
int nvtxcorr_context_on_range(nvtxcorr_range_fn fn);

/* ---- the tree (tree.c) ---- */
/* The child of `parent` named by the element text[0, len) (already cut and escaped); the
 * [other] node when the table is full, or when out of memory. Lock-free when it exists. */
uint32_t nvtxcorr_context_child(uint32_t parent, const char *text, size_t len);
/* The same with the element's hash (nvtxcorr_context_hash) already known. */
uint32_t nvtxcorr_context_child_hashed(uint32_t parent, const char *text, size_t len,
                                       uint32_t text_hash);
uint32_t nvtxcorr_context_hash(const char *text, size_t len);
/* `base` followed by every element of `path` (a graph node's capture path under its launch). */
uint32_t nvtxcorr_context_join(uint32_t base, uint32_t path);
/* Ids in use: [0, count). */
uint32_t nvtxcorr_context_count(void);
uint32_t nvtxcorr_context_parent(uint32_t id);
unsigned nvtxcorr_context_depth(uint32_t id);
const char *nvtxcorr_context_name(uint32_t id); /* "" for the root */
/* The path of `id` from the outermost in: up to `max` ids into out, returns the depth. */
unsigned nvtxcorr_context_path(uint32_t id, uint32_t *out, unsigned max);

#endif
