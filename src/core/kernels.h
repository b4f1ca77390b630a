/* Kernels by handle (kernels.c): the label cache of CUfunction / CUkernel handles and runtime
 * host stubs, their names, and label-table matching. */
#ifndef NVTXCORR_KERNELS_H
#define NVTXCORR_KERNELS_H

#include <stddef.h>
#include "emit.h"
#include "fork.h"
#include "map.h"
extern nvtxcorr_map_t nvtxcorr_function_labels;          /* CUfunction / CUkernel -> record */
extern nvtxcorr_map_t nvtxcorr_host_labels;              /* runtime host stub -> record */
const void *nvtxcorr_function_label_slow(const void *f); /* nvtxcorr_label_slow_fn */
const void *nvtxcorr_host_label_slow(const void *func);  /* nvtxcorr_label_slow_fn */
/* The label of a kernel known only by its raw name (profile mode's GPU records), as a
 * launched kernel of that name gets it; the label says skip for a "-" rule (kernels.c). */
const nvtxcorr_label_t *nvtxcorr_label_for_name(const char *mangled);
void nvtxcorr_track_name(const void *handle, const char *name);
void nvtxcorr_track_alias(const void *function, const void *kernel);
void nvtxcorr_forget_functions(void);
/* Serialises label-table matching: glibc's regexec locks each compiled regex, and a child
 * forked while another thread matched would inherit that lock held. */
void nvtxcorr_match_lock(void);
void nvtxcorr_match_unlock(void);
/* Raw (mangled) name of a CUfunction/CUkernel, or of a runtime host stub, into buf; 0 on
 * success. */
int nvtxcorr_function_name(const void *f, char *buf, size_t size);
int nvtxcorr_host_name(const void *func, char *buf, size_t size);
void nvtxcorr_match_fork(nvtxcorr_fork_t phase); /* label matching (regexec) */

#endif
