/*
 * Test hooks exported by the fake CUDA driver (tests/fakes/libcuda.so.1) in addition to the
 * real driver API.  Scenario programs and the self-test use them to check what the driver saw.
 */
#ifndef NVTXCORR_FAKECUDA_H
#define NVTXCORR_FAKECUDA_H

#include <cuda.h>

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

#ifdef __cplusplus
}
#endif

#endif /* NVTXCORR_FAKECUDA_H */
