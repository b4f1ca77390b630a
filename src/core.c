/* Enable state and lazy initialisation. Nothing runs in a constructor: the first hooked call
 * initialises, race-free (pthread_once), and decides once whether this process is ACTIVE
 * (NVTXCORR set and an NVTX tool attached), PROFILE (NVTXCORR set and NVTXCORR_PROFILE or
 * NVTXCORR_TRACE given, tool or not: src/profile/) or PASSTHROUGH, in which every hook is a
 * plain forward. A hook re-entered on the initialising thread (an NVTX tool that calls CUDA while
 * it loads) passes through instead of waiting for itself. */
#include <pthread.h>

#include "labels.h"
#include "nvtxcorr.h"
#include "profile/profile.h"

_Atomic int nvtxcorr_mode;
__thread nvtxcorr_thread_t nvtxcorr_thread __attribute__((tls_model("initial-exec")));
nvtxcorr_labels_t *nvtxcorr_table;

static __thread int initialising;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* A child forked while another thread held one of our locks must not hang on it. */
static void after_fork_in_child(void)
{
    nvtxcorr_map_after_fork();
    nvtxcorr_emit_after_fork();
}

static void initialise(void)
{
    initialising = 1;
    nvtxcorr_config_read();
    int mode = NVTXCORR_MODE_PASSTHROUGH;
    if (!nvtxcorr_config.enabled) { /* inert: no NVTX, no output */
        atomic_store_explicit(&nvtxcorr_mode, mode, memory_order_release);
        initialising = 0;
        return;
    }
    const char *why;
    int tool = nvtxcorr_emit_init();
    int profile =
        (nvtxcorr_config.profile || nvtxcorr_config.trace) && nvtxcorr_profile_init() == 0;
    if (tool || profile) {
        mode = profile ? NVTXCORR_MODE_PROFILE : NVTXCORR_MODE_ACTIVE;
        why = !profile ? "enabled, NVTX tool attached"
              : tool   ? "enabled, profile mode, NVTX tool attached"
                       : "enabled, profile mode, no NVTX tool";
        if (nvtxcorr_config.labels || nvtxcorr_config.labels_inline) {
            nvtxcorr_table = nvtxcorr_labels_load(nvtxcorr_config.labels_inline,
                                                  nvtxcorr_config.labels, nvtxcorr_log_line, NULL);
            if (nvtxcorr_table == NULL)
                nvtxcorr_log(NVTXCORR_LOG_ERROR, "label table rejected; using default labels");
        }
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
        nvtxcorr_log(NVTXCORR_LOG_INFO, "%s; labels: %zu rules; capture: %s; %s", why,
                     nvtxcorr_table ? nvtxcorr_labels_rule_count(nvtxcorr_table) : (size_t)0,
                     (const char *[]){"mark", "skip", "plain"}[nvtxcorr_config.capture], paths);
    }
    if (mode >= NVTXCORR_MODE_ACTIVE) pthread_atfork(NULL, NULL, after_fork_in_child);
    atomic_store_explicit(&nvtxcorr_mode, mode, memory_order_release);
    initialising = 0;
}

int nvtxcorr_init_slow(void)
{
    if (initialising) return 0;
    pthread_once(&once, initialise);
    return atomic_load_explicit(&nvtxcorr_mode, memory_order_acquire) >= NVTXCORR_MODE_ACTIVE;
}
