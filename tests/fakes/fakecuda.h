/*
 * Test hooks exported by the fake CUDA driver (tests/fakes/libcuda.so.1) in addition to the
 * real driver API.  Scenario programs and the self-test use them to check what the driver saw.
 */
#ifndef NVTXCORR_FAKECUDA_H
#define NVTXCORR_FAKECUDA_H

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Current value of a counter: a launch entry point by its exported name ("cuLaunchKernel",
 * "cuGraphLaunch_ptsz", ...: launches that ran), "captured.<that name>" (launches recorded into
 * a stream capture), "captured" (all of those), "graph_kernels" (kernel nodes run by graph
 * launches), "cuGetProcAddress_requests", "graph_instantiations", "graph_exec_destroys".
 * Unknown names read 0.  Counts are summed over all threads, exited ones included.
 */
unsigned long long fakecuda_count(const char *name);

/* A new module-less CUfunction named `mangled`; returns a CUresult value.  Cheap: O(1). */
int fakecuda_make_function(const char *mangled, CUfunction *out);

/*
 * Side channel to the fake CUPTI (libfake_cupti.so), found there with dlsym: every launch that
 * runs (not one recorded into a capture) reports what the GPU would execute, from the launching
 * thread, inside the launch call: one operation for a kernel launch, one per kernel, memset or
 * memcpy node for a graph launch (child graphs included). NULL turns it off.
 */
typedef struct fakecuda_op {
    const char *name;   /* kernel's mangled name; NULL for a memset node */
    const void *stream; /* the stream the launch resolved to */
    unsigned graph_id;  /* 0 outside a graph; otherwise the executable graph's number, from 1 */
    unsigned long long node_id; /* graph node: the exec's node's id (fakecuda_node_id) */
    unsigned grid[3], block[3]; /* a kernel's, as launched (or its node's); 0 for a memset */
    int copy;                   /* name NULL: 1 for a memcpy node, 0 for a memset node */
} fakecuda_op_t;
typedef void (*fakecuda_activity_fn)(const fakecuda_op_t *ops, size_t n);
void fakecuda_set_activity_hook(fakecuda_activity_fn fn);

/*
 * Side channel to the fake CUPTI's resource callbacks: every graph node created (stream
 * capture, cuGraphAdd*Node: cloned 0, original NULL) and every node of an executable graph
 * cloned from its source node at instantiation (cloned 1), on the calling thread, inside the
 * call, as CUPTI's CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED / _CLONED. fakecuda_node_id is the
 * node's process-wide id (cuptiGetGraphNodeId), the graphNodeId of its activity records.
 */
typedef void (*fakecuda_node_fn)(int cloned, CUgraph graph, CUgraphNode node, CUgraphNode original,
                                 CUgraphNodeType type);
void fakecuda_set_node_hook(fakecuda_node_fn fn);
unsigned long long fakecuda_node_id(CUgraphNode node);

#ifdef __cplusplus
}
#endif

#endif /* NVTXCORR_FAKECUDA_H */
