/* What the scenario programs on the fake driver share: a current context and a stream, the
 * fake module holding the three kernels most scenarios launch (KERNELS6 in harness.py), the
 * "rc <what> <code>" line the harness reads back (Run.rcs), and the peak resident set that the
 * memory scenarios compare (harness.peak_rss). */
#ifndef SCN_COMMON_H
#define SCN_COMMON_H

#include <cuda.h>
#include <stdio.h>

/* Makes the call and prints its result as "rc <what> <code>". */
#define CHECK(what, call)                                                                          \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        printf("rc %s %d\n", what, (int)r_);                                                       \
    } while (0)

/* cuInit, device 0's primary context made current; returns a new stream. */
CUstream scn_context(void);

/* Loads the module of add1, flash::flash_fwd_kernel<128> and triton_poi_fused_add_0 and looks
 * the three up; returns what cuModuleLoadData returned. */
CUresult scn_load_kernels(CUfunction *add1, CUfunction *flash, CUfunction *triton);

/* A fake function named by fmt with i (snprintf); on failure says so and exits 3. */
CUfunction scn_make_function(const char *fmt, long i);

/* A graph of one kernel node launching f. */
CUgraph scn_graph_of(CUfunction f);

/* Instantiates g, launches the exec on stream and destroys it: the first error, or 0. */
int scn_graph_cycle(CUgraph g, CUstream stream);

/* Prints "peak_rss_kb N", the process's peak resident set (VmHWM). */
void scn_print_peak_rss(void);

#endif /* SCN_COMMON_H */
