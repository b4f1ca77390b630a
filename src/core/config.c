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
#include <stddef.h>
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

/* NVTXCORR_GPU: GPU time is on unless the value says off; gpu_off keeps the value for the
 * summary's note. */
static void parse_gpu(nvtxcorr_config_t *c, const char *name, const char *v)
{
    if (!boolean(name, v, 1, "GPU time stays on")) c->gpu_off = v;
}

static void parse_window(nvtxcorr_config_t *c, const char *name, const char *v)
{
    char why[320];
    nvtxcorr_window_spec_t w;
    if (nvtxcorr_window_spec(v, &w, why, sizeof why) != 0) {
        nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s=%s: %s; no windows (one summary for the whole run)",
                     name, v, why);
    } else if (!c->profile) {
        nvtxcorr_log(NVTXCORR_LOG_WARN, "%s=%s: needs NVTXCORR_PROFILE; ignored", name, v);
    } else {
        static nvtxcorr_window_spec_t kept; /* the range's name and domain live here */
        kept = w;
        c->window_kind = w.kind, c->window_every_ns = w.every_ns;
        c->window_delay_ns = w.delay_ns, c->window_count = w.count;
        c->window_range = kept.range, c->window_domain = kept.domain[0] ? kept.domain : NULL;
    }
}

/* NVTXCORR_METRICS: profile mode's counts, so only with NVTXCORR_PROFILE (read before it). */
static void parse_metrics(nvtxcorr_config_t *c, const char *name, const char *v)
{
    if (!c->profile)
        nvtxcorr_log(NVTXCORR_LOG_WARN, "%s=%s: needs NVTXCORR_PROFILE; ignored", name, v);
    else
        c->metrics = v;
}

/* NVTXCORR_OTLP_ENDPOINT: pushed at window closes, so only with windows (read after them). */
static void parse_otlp(nvtxcorr_config_t *c, const char *name, const char *v)
{
    if (!c->window_kind)
        nvtxcorr_log(NVTXCORR_LOG_WARN,
                     "%s=%s: needs NVTXCORR_PROFILE and NVTXCORR_WINDOW; ignored", name, v);
    else if (v[0])
        c->otlp_endpoint = v;
}

/* After NVTXCORR_WINDOW, whose signal windows a bad signal turns off. */
static void parse_window_signal(nvtxcorr_config_t *c, const char *name, const char *v)
{
    char why[200];
    int sig = nvtxcorr_window_signal(v, why, sizeof why);
    if (sig > 0) {
        c->window_signal = sig;
    } else { /* the front end (bin/nvtxcorr) refuses the same value before the run */
        int signal_windows = c->window_kind == NVTXCORR_WINDOW_SIGNAL;
        nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s=%s: %s; %s", name, v, why,
                     signal_windows ? "no windows (one summary for the whole run)" : "ignored");
        if (signal_windows) c->window_kind = NVTXCORR_WINDOW_NONE;
    }
}

typedef struct word {
    const char *word; /* compared ignoring case */
    int value;
} word_t;

typedef enum {
    OPT_TEXT,     /* a const char * field: the value, NULL when unset or empty */
    OPT_FIRST_OF, /* a const char * field: the first of `names` that is set */
    OPT_BOOL,     /* an int field: 1 or 0 (truthy, falsy), else `initial` */
    OPT_WORD,     /* an int field: the value of the word given (`words`), else `initial` */
    OPT_COUNT,    /* an unsigned field: a decimal count in [min, max], else `initial` */
    OPT_SIGNAL,   /* an int field: `initial`, then what `parse` makes of the value */
    OPT_PARSE,    /* no field of its own: `parse` reads it, after the rows above it */
} option_kind_t;

/* One environment variable (mimalloc's option table): read in table order, each only when set
 * and not empty; an int or unsigned field first takes `initial`. A value not understood keeps
 * `initial` and says so in one error: "<name>=<value>: <why>; <instead>". */
typedef struct option {
    const char *name;
    option_kind_t kind;
    size_t field; /* offsetof(nvtxcorr_config_t, ...) */
    int initial;
    const char *expected; /* OPT_WORD: "unknown <expected>"; OPT_COUNT: "not <expected>" */
    const char *instead;  /* OPT_BOOL, OPT_WORD: what a value not understood gives */
    const word_t *words;  /* OPT_WORD, ended by a NULL word */
    const char *const *names;
    unsigned long min, max;
    void (*parse)(nvtxcorr_config_t *c, const char *name, const char *v);
} option_t;

#define FIELD(f) offsetof(nvtxcorr_config_t, f)
#define WORDS(...)                                                                                 \
    (const word_t[])                                                                               \
    {                                                                                              \
        __VA_ARGS__,                                                                               \
        {                                                                                          \
            NULL, 0                                                                                \
        }                                                                                          \
    }
#define NAMES(...)                                                                                 \
    (const char *const[])                                                                          \
    {                                                                                              \
        __VA_ARGS__, NULL                                                                          \
    }

/* docs/configuration.md documents every `.name` here (scripts/check-env-docs, CTest
 * style.env-docs). NVTXCORR itself is read first, alone (a disabled library reads no other). */
static const option_t options[] = {
    /* First: errors about the variables after it are printed at the level it sets. */
    {.name = NVTXCORR_ENV_LOG,
     .kind = OPT_WORD,
     .field = FIELD(log_level),
     .initial = NVTXCORR_LOG_ERROR,
     .expected = "level (error, warn, info, debug)",
     .instead = "using error",
     .words = WORDS({"error", NVTXCORR_LOG_ERROR}, {"warn", NVTXCORR_LOG_WARN},
                    {"info", NVTXCORR_LOG_INFO}, {"debug", NVTXCORR_LOG_DEBUG})},
    {.name = NVTXCORR_ENV_LABELS, .kind = OPT_TEXT, .field = FIELD(labels)},
    {.name = NVTXCORR_ENV_LABELS_INLINE, .kind = OPT_TEXT, .field = FIELD(labels_inline)},
    {.name = "NVTX_INJECTION64_PATH", .kind = OPT_TEXT, .field = FIELD(injection)},
    {.name = NVTXCORR_ENV_CAPTURE,
     .kind = OPT_WORD,
     .field = FIELD(capture),
     .initial = NVTXCORR_CAPTURE_MARK,
     .expected = "mode (mark, skip, plain)",
     .instead = "using mark",
     .words = WORDS({"mark", NVTXCORR_CAPTURE_MARK}, {"skip", NVTXCORR_CAPTURE_SKIP},
                    {"plain", NVTXCORR_CAPTURE_PLAIN})},
    {.name = NVTXCORR_ENV_GRAPH_MARKS,
     .kind = OPT_BOOL,
     .field = FIELD(graph_marks),
     .initial = 1,
     .instead = "using 1 (marks on)"},
    {.name = NVTXCORR_ENV_PROFILE, .kind = OPT_TEXT, .field = FIELD(profile)},
    {.name = NVTXCORR_ENV_TRACE, .kind = OPT_TEXT, .field = FIELD(trace)},
    {.name = NVTXCORR_ENV_METRICS, .kind = OPT_PARSE, .parse = parse_metrics},
    {.name = NVTXCORR_ENV_TRACE_MAX_MB,
     .kind = OPT_COUNT,
     .field = FIELD(trace_max_mb),
     .initial = NVTXCORR_TRACE_MAX_MB_DEFAULT,
     .expected = "a size in MiB (1 or more)",
     .min = 1,
     .max = 1ul << 30},
    {.name = NVTXCORR_ENV_TRACE_FORMAT,
     .kind = OPT_WORD,
     .field = FIELD(trace_format),
     .initial = NVTXCORR_TRACE_BY_PATH,
     .expected = "format (kineto, chrome)",
     .instead = "using kineto for a .json path, chrome otherwise",
     .words = WORDS({"kineto", NVTXCORR_TRACE_KINETO}, {"chrome", NVTXCORR_TRACE_CHROME})},
    {.name = NVTXCORR_ENV_TRACE_WRITER,
     .kind = OPT_BOOL,
     .field = FIELD(trace_writer),
     .initial = 1,
     .instead = "using 1 (a writer thread)"},
    /* The variables launchers set, in the order torchrun, Open MPI, Slurm, MPICH/Intel MPI
     * (PMI) are looked at: the first one set wins (docs/profile.md). */
    {.kind = OPT_FIRST_OF,
     .field = FIELD(rank),
     .names = NAMES("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK")},
    {.kind = OPT_FIRST_OF,
     .field = FIELD(local_rank),
     .names =
         NAMES("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID")},
    {.kind = OPT_FIRST_OF,
     .field = FIELD(world_size),
     .names = NAMES("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE")},
    {.name = NVTXCORR_ENV_GPU, .kind = OPT_PARSE, .parse = parse_gpu},
    {.name = NVTXCORR_ENV_GPU_CORRELATION,
     .kind = OPT_WORD,
     .field = FIELD(gpu_external),
     .initial = 0,
     .expected = "mode (callbacks, external)",
     .instead = "using callbacks",
     .words = WORDS({"callbacks", 0}, {"external", 1})},
    {.name = NVTXCORR_ENV_CUPTI_LIBRARY, .kind = OPT_TEXT, .field = FIELD(cupti_library)},
    {.name = "CUDA_HOME", .kind = OPT_TEXT, .field = FIELD(cuda_home)},
    /* After NVTXCORR_PROFILE, which windows need. */
    {.name = NVTXCORR_ENV_WINDOW, .kind = OPT_PARSE, .parse = parse_window},
    {.name = NVTXCORR_ENV_OTLP_ENDPOINT, .kind = OPT_PARSE, .parse = parse_otlp},
    {.name = NVTXCORR_ENV_WINDOW_SIGNAL,
     .kind = OPT_SIGNAL,
     .field = FIELD(window_signal),
     .initial = SIGUSR2,
     .parse = parse_window_signal},
    {.name = NVTXCORR_ENV_CONTEXT,
     .kind = OPT_WORD,
     .field = FIELD(context),
     .initial = 0,
     .expected = "source (nvtx, or 0 for none)",
     .instead = "no context",
     .words = WORDS({"nvtx", 1}, {"0", 0}, {"false", 0}, {"off", 0}, {"no", 0})},
};

static void read_option(nvtxcorr_config_t *c, const option_t *o)
{
    void *field = (char *)c + o->field;
    if (o->kind == OPT_FIRST_OF) {
        *(const char **)field = first_env(o->names);
        return;
    }
    if (o->kind == OPT_WORD || o->kind == OPT_BOOL || o->kind == OPT_SIGNAL)
        *(int *)field = o->initial;
    if (o->kind == OPT_COUNT) *(unsigned *)field = (unsigned)o->initial;
    const char *v = nonempty(secure_getenv(o->name));
    if (o->kind == OPT_TEXT) *(const char **)field = v;
    if (v == NULL || o->kind == OPT_TEXT) return;
    if (o->parse) {
        o->parse(c, o->name, v);
    } else if (o->kind == OPT_BOOL) {
        *(int *)field = boolean(o->name, v, o->initial, o->instead);
    } else if (o->kind == OPT_WORD) {
        const word_t *w = o->words;
        while (w->word && strcasecmp(v, w->word))
            w++;
        if (w->word)
            *(int *)field = w->value;
        else
            nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s=%s: unknown %s; %s", o->name, v, o->expected,
                         o->instead);
    } else if (o->kind == OPT_COUNT) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (*end || n < o->min || n > o->max)
            nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s=%s: not %s; using %d", o->name, v, o->expected,
                         o->initial);
        else
            *(unsigned *)field = (unsigned)n;
    }
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
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        read_option(&c, &options[i]);
        nvtxcorr_log_level = c.log_level; /* so errors are printed at the level set */
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
