/* Every environment variable nvtxcorr reads, read here and only here, once, during lazy
 * initialisation (docs/configuration.md lists them). getenv only: no file is touched while
 * the library is disabled. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nvtxcorr/nvtxcorr.h>

#include "nvtxcorr.h"

nvtxcorr_config_t nvtxcorr_config = {.log_level = NVTXCORR_LOG_ERROR, .graph_marks = 1};

static int truthy(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
                 !strcasecmp(v, "yes"));
}

static const char *nonempty(const char *v)
{
    return v && *v ? v : NULL;
}

void nvtxcorr_config_read(void)
{
    nvtxcorr_config_t c = {.log_level = NVTXCORR_LOG_ERROR, .graph_marks = 1};
    const char *v;

    c.enabled = truthy(getenv(NVTXCORR_ENV_ENABLE));
    if (!c.enabled) { /* inert: nothing else is read, validated or reported */
        nvtxcorr_config = c;
        return;
    }
    if ((v = getenv(NVTXCORR_ENV_LOG)) != NULL) {
        static const char *const levels[] = {"error", "warn", "info", "debug"};
        int found = 0;
        for (int i = 0; i < 4; i++)
            if (!strcasecmp(v, levels[i])) c.log_level = i, found = 1;
        nvtxcorr_config = c; /* so the error below is printed with a sane level */
        if (!found && *v)
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_LOG=%s: unknown level (error, warn, info, debug); using error",
                         v);
    }
    c.labels = nonempty(getenv(NVTXCORR_ENV_LABELS));
    c.labels_inline = nonempty(getenv(NVTXCORR_ENV_LABELS_INLINE));
    c.injection = nonempty(getenv("NVTX_INJECTION64_PATH"));
    if ((v = nonempty(getenv(NVTXCORR_ENV_CAPTURE))) != NULL) {
        if (!strcasecmp(v, "mark"))
            c.capture = NVTXCORR_CAPTURE_MARK;
        else if (!strcasecmp(v, "skip"))
            c.capture = NVTXCORR_CAPTURE_SKIP;
        else if (!strcasecmp(v, "plain"))
            c.capture = NVTXCORR_CAPTURE_PLAIN;
        else
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_CAPTURE=%s: unknown mode (mark, skip, plain); using mark", v);
    }
    if ((v = nonempty(getenv(NVTXCORR_ENV_GRAPH_MARKS))) != NULL) c.graph_marks = truthy(v);
    c.profile = nonempty(getenv(NVTXCORR_ENV_PROFILE));
    c.trace = nonempty(getenv(NVTXCORR_ENV_TRACE));
    c.trace_max_mb = NVTXCORR_TRACE_MAX_MB_DEFAULT;
    if ((v = nonempty(getenv(NVTXCORR_ENV_TRACE_MAX_MB))) != NULL) {
        char *end;
        unsigned long mb = strtoul(v, &end, 10); /* in MiB */
        if (*end || mb == 0 || mb > (1ul << 30))
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_TRACE_MAX_MB=%s: not a size in MiB (1 or more); using %d", v,
                         NVTXCORR_TRACE_MAX_MB_DEFAULT);
        else
            c.trace_max_mb = (unsigned)mb;
    }
    nvtxcorr_config = c;
}

const char *nvtxcorr_config_env(const char *name)
{
    return getenv(name);
}
