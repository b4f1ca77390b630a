/* Configuration (config.c): every environment variable is read there, once. */
#ifndef NVTXCORR_CONFIG_H
#define NVTXCORR_CONFIG_H

enum { NVTXCORR_CAPTURE_MARK = 0, NVTXCORR_CAPTURE_SKIP, NVTXCORR_CAPTURE_PLAIN };
enum { NVTXCORR_TRACE_BY_PATH = 0, NVTXCORR_TRACE_KINETO, NVTXCORR_TRACE_CHROME };

typedef struct nvtxcorr_config {
    int enabled;               /* NVTXCORR */
    int log_level;             /* NVTXCORR_LOG */
    const char *labels;        /* NVTXCORR_LABELS */
    const char *labels_inline; /* NVTXCORR_LABELS_INLINE */
    int capture;               /* NVTXCORR_CAPTURE */
    int graph_marks;           /* NVTXCORR_GRAPH_MARKS */
    const char *injection;     /* NVTX_INJECTION64_PATH, only reported */
    const char *profile;       /* NVTXCORR_PROFILE (src/profile/) */
    const char *trace;         /* NVTXCORR_TRACE */
    const char *metrics;       /* NVTXCORR_METRICS: the Prometheus textfile */
    const char *otlp_endpoint; /* NVTXCORR_OTLP_ENDPOINT: OTLP/HTTP push at window closes */
    unsigned trace_max_mb;     /* NVTXCORR_TRACE_MAX_MB */
    int trace_format;          /* NVTXCORR_TRACE_FORMAT: NVTXCORR_TRACE_* below, 0 by the path */
    int trace_writer;          /* NVTXCORR_TRACE_WRITER: 1 (the default) or 0 */
    /* The launcher's rank variables (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK, ...),
     * the first one set of each; NULL when none is. The Kineto trace's distributedInfo. */
    const char *rank, *local_rank, *world_size;
    const char *gpu_off;       /* NVTXCORR_GPU when it says off (0, false, off, no) */
    int gpu_external;          /* NVTXCORR_GPU_CORRELATION=external */
    const char *cupti_library; /* NVTXCORR_CUPTI_LIBRARY */
    const char *cuda_home;     /* CUDA_HOME, where libcupti is looked for first */
    /* NVTXCORR_WINDOW (profile mode's windows, src/profile/window.c): the kind, then the
     * options; window_kind 0 when unset or rejected (one summary for the whole run). */
    int window_kind; /* NVTXCORR_WINDOW_* below */
    unsigned long long window_every_ns, window_delay_ns;
    unsigned window_count;                    /* 0: no limit */
    int window_signal;                        /* NVTXCORR_WINDOW_SIGNAL, SIGUSR2 by default */
    const char *window_range, *window_domain; /* nvtx:<range glob>[@<domain>] */
    int context;                              /* NVTXCORR_CONTEXT=nvtx: program context asked for */
} nvtxcorr_config_t;

extern nvtxcorr_config_t nvtxcorr_config;
void nvtxcorr_config_read(void);
/* Whether the environment says disabled, read without initialising (nvtxcorr_claim_nowait). */
int nvtxcorr_config_disabled(void);
/* NVTXCORR_CONTEXT_DOMAINS, read when the first NVTX instance loads nvtxcorr as its tool
 * (which may be before initialisation); NULL when unset. */
const char *nvtxcorr_config_context_domains(void);
/* The one other environment read: %q{VAR} in the NVTXCORR_PROFILE and NVTXCORR_TRACE paths. */
const char *nvtxcorr_config_env(const char *name);
/* Whether NVTXCORR_CONTEXT or NVTXCORR_WINDOW ask for the program's NVTX ranges, read in the
 * library's constructor (context/inject.c) before any configuration: unset in secure
 * execution and when nvtxcorr is disabled. */
int nvtxcorr_config_wants_context_early(void);

#endif
