/* Enable state and lazy initialisation. Nothing runs in a constructor: the first hooked call
 * initialises, and decides once whether this process is ACTIVE (NVTXCORR set and an NVTX tool
 * attached), PROFILE (NVTXCORR set and NVTXCORR_PROFILE or NVTXCORR_TRACE given, tool or not:
 * src/profile/) or PASSTHROUGH, in which every hook is a plain forward.
 *
 * Exactly one thread initialises (a compare-and-swap to INITIALISING), and no thread ever
 * waits for it. Initialisation loads the NVTX tool with dlopen, which takes the loader lock;
 * a thread that holds that lock (running a library constructor that calls CUDA or dlsym) and
 * waited for initialisation would deadlock with it. So while it runs, hooked calls on other
 * threads pass through (their launches get no range), the resolvers hand out our hooks
 * (correct whatever initialisation decides), and a hook re-entered on the initialising thread
 * itself (an NVTX tool that calls CUDA while it loads) passes through too. */
#include <nvtxcorr/version.h>
#include <pthread.h>
#include "core/config.h"
#include "core/emit.h"
#include "core/fork.h"
#include "core/graphs.h"
#include "core/kernels.h"
#include "core/log.h"
#include "core/map.h"
#include "core/resolve.h"
#include "core/routes.h"
#include "core/slowstack.h"
#include "core/state.h"
#include "init.h"
#include "labels/labels.h"
#include "profile/profile.h"
/* The version, readable in the file without loading it (`nvtxcorr doctor` looks for it; so
 * does `strings libnvtxcorr.so | grep '@(#)'`), after the SCCS what(1) convention. */
__attribute__((used)) static const char version_tag[] = "@(#)nvtxcorr " NVTXCORR_VERSION_STRING;

static __thread int initialising;

static void initialise_here(void *unused)
{
    (void)unused;
    int mode = NVTXCORR_MODE_PASSTHROUGH;
    if (!nvtxcorr_config.enabled) { /* inert: no NVTX, no output */
        nvtxcorr_set_mode(mode);
        return;
    }
    const char *why;
    int prepared =
        (nvtxcorr_config.profile || nvtxcorr_config.trace) && nvtxcorr_profile_prepare() == 0;
    int tool = nvtxcorr_emit_init();
    int profile = prepared && nvtxcorr_profile_init() == 0;
    if (tool || profile) {
        mode = profile ? nvtxcorr_profile_mode(tool) : NVTXCORR_MODE_ACTIVE;
        nvtxcorr_profiling = profile;
        why = !profile ? "enabled, NVTX tool attached"
              : tool   ? "enabled, profile mode, NVTX tool attached"
                       : "enabled, profile mode, no NVTX tool";
        if (nvtxcorr_config.labels || nvtxcorr_config.labels_inline) {
            /* Set before the mode says ACTIVE (published by its release). */
            nvtxcorr_labels_in_use =
                nvtxcorr_labels_load(nvtxcorr_config.labels_inline, nvtxcorr_config.labels,
                                     nvtxcorr_log_label_error, NULL);
            if (nvtxcorr_labels_in_use == NULL)
                nvtxcorr_log(NVTXCORR_LOG_ERROR, "label table rejected; using default labels");
        }
    } else if (atomic_load_explicit(&nvtxcorr_nvtx_refused_self, memory_order_relaxed)) {
        why = "enabled, pass-through: NVTX_INJECTION64_PATH names nvtxcorr itself";
        nvtxcorr_log(NVTXCORR_LOG_WARN,
                     "NVTX_INJECTION64_PATH names nvtxcorr itself: it takes the program's NVTX "
                     "ranges as context for profile mode, which is off here, and is no tool for "
                     "its own ranges; pass-through (for Nsight, name its tool instead)");
    } else if (nvtxcorr_config.injection) {
        why = "enabled, pass-through: the NVTX tool could not be loaded";
        nvtxcorr_log(NVTXCORR_LOG_WARN,
                     "NVTX_INJECTION64_PATH=%s could not be loaded; pass-through",
                     nvtxcorr_config.injection);
    } else {
        why = "enabled, pass-through: no NVTX tool attached (NVTX_INJECTION64_PATH unset)";
    }
    if (NVTXCORR_LOG_ON(NVTXCORR_LOG_INFO)) {
        char paths[768];
        nvtxcorr_describe_paths(paths, sizeof paths);
        nvtxcorr_log(NVTXCORR_LOG_INFO, "%s; labels: %zu rules; capture: %s; %s; version %s", why,
                     nvtxcorr_labels_in_use ? nvtxcorr_labels_rule_count(nvtxcorr_labels_in_use)
                                            : (size_t)0,
                     (const char *[]){"mark", "skip", "plain"}[nvtxcorr_config.capture], paths,
                     NVTXCORR_VERSION_STRING);
    }
    if (mode >= NVTXCORR_MODE_ACTIVE) {
        static const nvtxcorr_fork_fn core[] = {nvtxcorr_match_fork, nvtxcorr_graphs_fork,
                                                nvtxcorr_emit_fork, nvtxcorr_map_fork};
        nvtxcorr_fork_start(core, sizeof core / sizeof core[0]);
    }
    nvtxcorr_set_mode(mode);
    if (profile) nvtxcorr_profile_started();
}

/* Loading the NVTX tool (dlopen) and the label table is deep: done on the slow-path stack,
 * except when disabled, where nothing is loaded and no stack is mapped. */
static void initialise(void)
{
    initialising = 1;
    const char *first;
    if (!nvtxcorr_config_disabled() && (first = nvtxcorr_first_copy()) != NULL) {
        /* Another copy of the library came first (resolve.c): this one reads no setting and
         * writes nothing but this line, and every hook forwards, so each launch gets the first
         * copy's one range and the process one summary. */
        nvtxcorr_warn("another copy of nvtxcorr at %s is active; this one (%s) stands aside", first,
                      nvtxcorr_this_copy());
        nvtxcorr_set_mode(NVTXCORR_MODE_PASSTHROUGH);
        initialising = 0;
        return;
    }
    nvtxcorr_config_read();
    if (nvtxcorr_config.enabled)
        nvtxcorr_on_slow_stack(initialise_here, NULL);
    else
        initialise_here(NULL);
    initialising = 0;
}

int nvtxcorr_init_slow(void)
{
    int expected = NVTXCORR_MODE_UNINIT;
    if (!initialising && atomic_compare_exchange_strong_explicit(
                             &nvtxcorr_mode, &expected, NVTXCORR_MODE_INITIALISING,
                             memory_order_acq_rel, memory_order_acquire))
        initialise();
    return atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire) >= NVTXCORR_MODE_ACTIVE;
}

int nvtxcorr_initialising_here(void)
{
    return initialising;
}
