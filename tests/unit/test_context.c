/* The context tree (src/context/tree.c): a path interned once, an id per node, paths read
 * back outermost first, a graph node's capture path joined under a launch's, and the bound on
 * distinct paths (past it, ["[other]"]). */
#include <string.h>
#include "context/context.h"
#include "test_core.h"

static uint32_t child(uint32_t parent, const char *name)
{
    return nvtxcorr_context_child(parent, name, strlen(name));
}

void test_context_tree(void)
{
    uint32_t a = child(NVTXCORR_CONTEXT_ROOT, "layers.0");
    uint32_t b = child(a, "attn");
    CHECK(a != NVTXCORR_CONTEXT_ROOT && a != NVTXCORR_CONTEXT_OTHER && b != a);
    CHECK_EQ(child(NVTXCORR_CONTEXT_ROOT, "layers.0"), a); /* interned once */
    CHECK_EQ(child(a, "attn"), b);
    CHECK(child(NVTXCORR_CONTEXT_ROOT, "attn") != b); /* same name, other parent: other node */
    CHECK_EQ(nvtxcorr_context_parent(b), a);
    CHECK_EQ(nvtxcorr_context_depth(b), 2);
    CHECK(!strcmp(nvtxcorr_context_name(b), "attn"));
    CHECK(!strcmp(nvtxcorr_context_name(NVTXCORR_CONTEXT_OTHER), "[other]"));
    uint32_t path[NVTXCORR_CONTEXT_PATH_MAX];
    CHECK_EQ(nvtxcorr_context_path(b, path, NVTXCORR_CONTEXT_PATH_MAX), 2);
    CHECK_EQ(path[0], a);
    CHECK_EQ(path[1], b);
    /* A name with a NUL-free prefix of another is another node: lengths count. */
    CHECK(nvtxcorr_context_child(a, "attn", 3) != b);
    /* serve/step > graph > (layers.0 > attn): the capture path under the launch's. */
    uint32_t g = child(child(NVTXCORR_CONTEXT_ROOT, "serve/step"), "graph#1");
    uint32_t j = nvtxcorr_context_join(g, b);
    CHECK_EQ(nvtxcorr_context_depth(j), 4);
    CHECK_EQ(nvtxcorr_context_path(j, path, NVTXCORR_CONTEXT_PATH_MAX), 4);
    CHECK(!strcmp(nvtxcorr_context_name(path[0]), "serve/step"));
    CHECK(!strcmp(nvtxcorr_context_name(path[2]), "layers.0"));
    CHECK_EQ(path[3], j);
    CHECK_EQ(nvtxcorr_context_join(g, NVTXCORR_CONTEXT_ROOT), g);
    /* Fill the table: every path past the bound is [other], and [other] has no children. */
    uint32_t before = nvtxcorr_context_count(), last = 0, others = 0;
    char name[32];
    for (uint32_t i = 0; i < NVTXCORR_CONTEXT_MAX_PATHS + 100; i++) {
        snprintf(name, sizeof name, "p%u", i);
        last = child(NVTXCORR_CONTEXT_ROOT, name);
        others += last == NVTXCORR_CONTEXT_OTHER;
    }
    CHECK_EQ(others, NVTXCORR_CONTEXT_MAX_PATHS + 100 - (NVTXCORR_CONTEXT_IDS - before));
    CHECK_EQ(nvtxcorr_context_count(), NVTXCORR_CONTEXT_IDS);
    CHECK_EQ(last, NVTXCORR_CONTEXT_OTHER);
    CHECK_EQ(child(NVTXCORR_CONTEXT_OTHER, "x"), NVTXCORR_CONTEXT_OTHER);
    CHECK_EQ(child(a, "attn"), b);                                 /* old paths still found */
    CHECK_EQ(atomic_load(&nvtxcorr_context_counts.other), others); /* below [other]: not new */
}
