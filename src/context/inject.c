/* NVTXCORR_CONTEXT=nvtx: nvtxcorr becomes the program's NVTX tool (nvtx_tool.c) by naming
 * itself in NVTX_INJECTION64_PATH when that is unset. Every NVTX instance reads the variable
 * at its own first call, which may come long before nvtxcorr's lazy initialisation (the
 * first CUDA call), so this one step runs as the library is loaded: a constructor that only
 * reads four variables and sets one, before the program has threads. An instance that made
 * its first NVTX call earlier still (another preloaded library's constructor) has no tool. An
 * existing value wins: that tool (Nsight's) is attached, and profile mode says there is no
 * context (profile/profile.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include "core/config.h"
#include "core/resolve.h"
__attribute__((constructor)) static void context_injection_early(void)
{
    /* A copy that stands aside (another came first: core/resolve.c) names nothing; the first
     * does. */
    if (!nvtxcorr_config_wants_context_early() || nvtxcorr_first_copy()) return;
    Dl_info self;
    if (dladdr((const void *)context_injection_early, &self) && self.dli_fname &&
        self.dli_fname[0] == '/')
        setenv("NVTX_INJECTION64_PATH", self.dli_fname, 0);
}
