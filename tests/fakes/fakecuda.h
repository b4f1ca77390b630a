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

/*
 * Side channel to the fake CUPTI's callback API and API records: an API call's frame, its entry
 * (exit 0) and its exit (exit 1, with its result), on the calling thread, as CUPTI sees the call.
 * domain is CUPTI's: 1 the driver API, 2 the runtime API; name is the function's exported name,
 * a string constant. The fake driver reports its own launch entry points and a few other calls
 * (fake_cuda_launch.c); a runtime reports its frames through fakecuda_api_frame, found with dlsym
 * in libcuda.so.1, as the real runtime reports to CUPTI through the driver. NULL turns it off.
 */
typedef void (*fakecuda_api_fn)(int domain, const char *name, int exit, int result);
void fakecuda_set_api_hook(fakecuda_api_fn fn);
void fakecuda_api_frame(int domain, const char *name, int exit, int result);

/*
 * A launch by a path no profiler can hook: the driver runs f (a grid of one block of 32) on
 * stream as cuLaunchKernel would, its frame reported as "cuLaunchKernel", but it is reached
 * through this test symbol, not a CUDA entry point (as a launch through a private export table).
 */
int fakecuda_launch_unhooked(CUfunction f, CUstream stream);

#ifdef __cplusplus
}
#endif

#endif /* NVTXCORR_FAKECUDA_H */
