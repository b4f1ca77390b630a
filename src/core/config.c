/* Every environment variable nvtxcorr reads, read here and only here, once, during lazy
 * initialisation (docs/configuration.md lists them). Settings come from the environment
 * alone, never from a configuration file, so a disabled library opens no file at all.
 *
 * A set-user-ID or set-group-ID program, or one that gained file capabilities, runs in secure
 * execution (AT_SECURE): its environment comes from a less privileged caller, who must not
 * choose a library for it to load (NVTX_INJECTION64_PATH) or a file for it to read and echo
 * (NVTXCORR_LABELS). There nvtxcorr reads no variable at all and stays a silent pass-through.
 * secure_getenv is a second guard: it returns NULL in that mode. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

#include <nvtxcorr/nvtxcorr.h>
#include "config.h"
#include "log.h"
#include "window_spec.h"
nvtxcorr_config_t nvtxcorr_config = {.log_level = NVTXCORR_LOG_ERROR, .graph_marks = 1};

static int truthy(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
                 !strcasecmp(v, "yes"));
}

static int falsy(const char *v)
{
    return v && (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "off") ||
                 !strcasecmp(v, "no"));
}

/* A boolean variable: 1 or 0 by truthy/falsy, else (a value neither says) `fallback`, and an
 * error naming the value and what is used instead: a typo must not silently mean the
 * opposite of what was meant. */
static int boolean(const char *name, const char *v, int fallback, const char *instead)
{
    if (truthy(v)) return 1;
    if (falsy(v)) return 0;
    nvtxcorr_log(NVTXCORR_LOG_ERROR,
                 "%s=%s: not understood (1, true, on, yes or 0, false, off, no); %s", name, v,
                 instead);
    return fallback;
}

static const char *nonempty(const char *v)
{
    return v && *v ? v : NULL;
}

static const char *first_env(const char *const *names)
{
    for (; *names; names++) {
        const char *v = nonempty(secure_getenv(*names));
        if (v) return v;
    }
    return NULL;
}

static int secure_execution(void)
{
    return getauxval(AT_SECURE) != 0;
}

int nvtxcorr_config_disabled(void)
{
    return secure_execution() || !truthy(secure_getenv(NVTXCORR_ENV_ENABLE));
}

/* The configuration as read so far, and the log's level with it (log.h). */
static void publish(const nvtxcorr_config_t *c)
{
    nvtxcorr_config = *c;
    nvtxcorr_log_level = c->log_level;
}

void nvtxcorr_config_read(void)
{
    nvtxcorr_config_t c = {.log_level = NVTXCORR_LOG_ERROR, .graph_marks = 1};
    const char *v;

    if (secure_execution()) { /* pass-through, and not even an error message */
        c.log_level = NVTXCORR_LOG_SILENT;
        publish(&c);
        return;
    }
    c.enabled = truthy(secure_getenv(NVTXCORR_ENV_ENABLE));
    if (!c.enabled) { /* inert: nothing else is read, validated or reported */
        publish(&c);
        return;
    }
    if ((v = secure_getenv(NVTXCORR_ENV_LOG)) != NULL) {
        static const char *const levels[] = {"error", "warn", "info", "debug"};
        int found = 0;
        for (int i = 0; i < 4; i++)
            if (!strcasecmp(v, levels[i])) c.log_level = i, found = 1;
        publish(&c); /* so the error below is printed with a sane level */
        if (!found && *v)
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_LOG=%s: unknown level (error, warn, info, debug); using error",
                         v);
    }
    c.labels = nonempty(secure_getenv(NVTXCORR_ENV_LABELS));
    c.labels_inline = nonempty(secure_getenv(NVTXCORR_ENV_LABELS_INLINE));
    c.injection = nonempty(secure_getenv("NVTX_INJECTION64_PATH"));
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_CAPTURE))) != NULL) {
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
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_GRAPH_MARKS))) != NULL)
        c.graph_marks = boolean(NVTXCORR_ENV_GRAPH_MARKS, v, 1, "using 1 (marks on)");
    c.profile = nonempty(secure_getenv(NVTXCORR_ENV_PROFILE));
    c.trace = nonempty(secure_getenv(NVTXCORR_ENV_TRACE));
    c.trace_max_mb = NVTXCORR_TRACE_MAX_MB_DEFAULT;
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_TRACE_MAX_MB))) != NULL) {
        char *end;
        unsigned long mb = strtoul(v, &end, 10); /* in MiB */
        if (*end || mb == 0 || mb > (1ul << 30))
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_TRACE_MAX_MB=%s: not a size in MiB (1 or more); using %d", v,
                         NVTXCORR_TRACE_MAX_MB_DEFAULT);
        else
            c.trace_max_mb = (unsigned)mb;
    }
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_TRACE_FORMAT))) != NULL) {
        if (!strcasecmp(v, "kineto"))
            c.trace_format = NVTXCORR_TRACE_KINETO;
        else if (!strcasecmp(v, "chrome"))
            c.trace_format = NVTXCORR_TRACE_CHROME;
        else
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_TRACE_FORMAT=%s: unknown format (kineto, chrome); using kineto "
                         "for a .json path, chrome otherwise",
                         v);
    }
    c.trace_writer = 1;
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_TRACE_WRITER))) != NULL)
        c.trace_writer = boolean(NVTXCORR_ENV_TRACE_WRITER, v, 1, "using 1 (a writer thread)");
    /* The variables launchers set, in the order torchrun, Open MPI, Slurm, MPICH/Intel MPI
     * (PMI) are looked at: the first one set wins. */
    c.rank = first_env(
        (const char *[]){"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK", NULL});
    c.local_rank = first_env((const char *[]){"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                              "SLURM_LOCALID", "MPI_LOCALRANKID", NULL});
    c.world_size = first_env(
        (const char *[]){"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE", NULL});
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_GPU))) != NULL &&
        !boolean(NVTXCORR_ENV_GPU, v, 1, "GPU time stays on"))
        c.gpu_off = v;
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_GPU_CORRELATION))) != NULL) {
        if (!strcasecmp(v, "external"))
            c.gpu_external = 1;
        else if (strcasecmp(v, "callbacks"))
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_GPU_CORRELATION=%s: unknown mode (callbacks, external); using "
                         "callbacks",
                         v);
    }
    c.cupti_library = nonempty(secure_getenv(NVTXCORR_ENV_CUPTI_LIBRARY));
    c.cuda_home = nonempty(secure_getenv("CUDA_HOME"));
    c.window_signal = SIGUSR2;
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_WINDOW))) != NULL) {
        char why[320];
        nvtxcorr_window_spec_t w;
        if (nvtxcorr_window_spec(v, &w, why, sizeof why) != 0) {
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_WINDOW=%s: %s; no windows (one summary for the whole run)", v,
                         why);
        } else if (!c.profile) {
            nvtxcorr_log(NVTXCORR_LOG_WARN, "NVTXCORR_WINDOW=%s: needs NVTXCORR_PROFILE; ignored",
                         v);
        } else {
            static nvtxcorr_window_spec_t kept; /* the range's name and domain live here */
            kept = w;
            c.window_kind = w.kind, c.window_every_ns = w.every_ns;
            c.window_delay_ns = w.delay_ns, c.window_count = w.count;
            c.window_range = kept.range, c.window_domain = kept.domain[0] ? kept.domain : NULL;
        }
    }
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_WINDOW_SIGNAL))) != NULL) {
        char why[200];
        int sig = nvtxcorr_window_signal(v, why, sizeof why);
        if (sig > 0) {
            c.window_signal = sig;
        } else { /* the launcher's check-window refuses the same value before the run */
            int signal_windows = c.window_kind == NVTXCORR_WINDOW_SIGNAL;
            nvtxcorr_log(NVTXCORR_LOG_ERROR, "NVTXCORR_WINDOW_SIGNAL=%s: %s; %s", v, why,
                         signal_windows ? "no windows (one summary for the whole run)" : "ignored");
            if (signal_windows) c.window_kind = NVTXCORR_WINDOW_NONE;
        }
    }
    if ((v = nonempty(secure_getenv(NVTXCORR_ENV_CONTEXT))) != NULL) {
        if (!strcasecmp(v, "nvtx"))
            c.context = 1;
        else if (!falsy(v))
            nvtxcorr_log(NVTXCORR_LOG_ERROR,
                         "NVTXCORR_CONTEXT=%s: unknown source (nvtx, or 0 for none); no context",
                         v);
    }
    publish(&c);
}

const char *nvtxcorr_config_context_domains(void)
{
    return secure_execution() ? NULL : secure_getenv(NVTXCORR_ENV_CONTEXT_DOMAINS);
}

int nvtxcorr_config_wants_context_early(void)
{
    if (secure_execution() || !truthy(getenv(NVTXCORR_ENV_ENABLE))) return 0;
    const char *v = getenv(NVTXCORR_ENV_CONTEXT), *w = getenv(NVTXCORR_ENV_WINDOW);
    /* NVTXCORR_WINDOW=nvtx:... needs the program's ranges too (profile/window.c). */
    int want = v && strcasecmp(v, "nvtx") == 0;
    for (const char *p = w; p && *p && !want; p++)
        want = (p == w || p[-1] == ',') && strncasecmp(p, "nvtx:", 5) == 0;
    return want && !nonempty(getenv("NVTX_INJECTION64_PATH"));
}

const char *nvtxcorr_config_env(const char *name)
{
    return secure_getenv(name);
}
