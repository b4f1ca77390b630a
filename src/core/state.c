/* The process state every hook and route reads (state.h), defined below everything that
 * reads or writes it. */
#include <stdatomic.h>
#include "resolve.h"
#include "state.h"
_Atomic int nvtxcorr_mode;
int nvtxcorr_profiling;
__thread nvtxcorr_thread_t nvtxcorr_thread __attribute__((tls_model("initial-exec")));
const struct nvtxcorr_label_table *nvtxcorr_labels_in_use;
_Atomic unsigned long long nvtxcorr_launches_while_starting;
_Atomic unsigned nvtxcorr_captures_open;
void *nvtxcorr_tool_push, *nvtxcorr_tool_pop;
void *_Atomic nvtxcorr_real_fn[NVTXCORR_SLOT_COUNT];

void nvtxcorr_passed_while_starting(void)
{
    atomic_fetch_add_explicit(&nvtxcorr_launches_while_starting, 1, memory_order_relaxed);
}
