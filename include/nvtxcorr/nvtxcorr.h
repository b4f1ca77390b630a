/* nvtxcorr: what a program or tool that works with nvtxcorr's output may rely on.
 *
 * nvtxcorr is an LD_PRELOAD library: applications do not link against it or call it. This
 * header names its stable interface instead: the NVTX domain and categories its ranges and
 * marks use (for tools that read nsys reports or filter with ncu --nvtx-include), and the
 * environment variables that configure it (docs/configuration.md). */
#ifndef NVTXCORR_NVTXCORR_H
#define NVTXCORR_NVTXCORR_H

/* NVTXCORR_VERSION_MAJOR/_MINOR/_PATCH and NVTXCORR_VERSION_STRING. */
#include <nvtxcorr/version.h>

/* Every range and mark is in this NVTX domain: ncu --nvtx-include "nvtxcorr@<label>/". */
#define NVTXCORR_DOMAIN "nvtxcorr"

/* Categories nvtxcorr names itself (label tables may add their own). */
#define NVTXCORR_CATEGORY_CAPTURE "capture" /* launches recorded during stream capture */
#define NVTXCORR_CATEGORY_GRAPH "graph"     /* marks at graph instantiation and update */

/* Suffix of a launch made while its stream captures (NVTXCORR_CAPTURE=mark). */
#define NVTXCORR_CAPTURE_SUFFIX " [capture]"

/* Environment variables, read once at the first hooked CUDA call. */
#define NVTXCORR_ENV_ENABLE "NVTXCORR"
#define NVTXCORR_ENV_LOG "NVTXCORR_LOG"
#define NVTXCORR_ENV_LABELS "NVTXCORR_LABELS"
#define NVTXCORR_ENV_LABELS_INLINE "NVTXCORR_LABELS_INLINE"
#define NVTXCORR_ENV_CAPTURE "NVTXCORR_CAPTURE"
#define NVTXCORR_ENV_GRAPH_MARKS "NVTXCORR_GRAPH_MARKS"
/* Profile mode (docs/profile.md): per-label summary and timeline without an NVTX tool. */
#define NVTXCORR_ENV_PROFILE "NVTXCORR_PROFILE"
#define NVTXCORR_ENV_WINDOW "NVTXCORR_WINDOW"
#define NVTXCORR_ENV_WINDOW_SIGNAL "NVTXCORR_WINDOW_SIGNAL"
#define NVTXCORR_ENV_TRACE "NVTXCORR_TRACE"
/* Profile mode's Prometheus textfile (docs/profile.md, Fleet metrics). */
#define NVTXCORR_ENV_METRICS "NVTXCORR_METRICS"
/* The same counters pushed to an OpenTelemetry collector (OTLP/HTTP) at window closes. */
#define NVTXCORR_ENV_OTLP_ENDPOINT "NVTXCORR_OTLP_ENDPOINT"
#define NVTXCORR_ENV_TRACE_MAX_MB "NVTXCORR_TRACE_MAX_MB"
#define NVTXCORR_TRACE_MAX_MB_DEFAULT 1024
/* kineto (the default for a path ending .json) or chrome (the default otherwise). */
#define NVTXCORR_ENV_TRACE_FORMAT "NVTXCORR_TRACE_FORMAT"
/* 1 (the default): the trace's launch events are formatted by a writer thread; 0: by the
 * launching thread itself. */
#define NVTXCORR_ENV_TRACE_WRITER "NVTXCORR_TRACE_WRITER"
/* GPU time in profile mode (CUPTI): off with NVTXCORR_GPU=0; which libcupti to load. */
#define NVTXCORR_ENV_GPU "NVTXCORR_GPU"
/* How kernels are tied to their launches: callbacks (the default: CUPTI's launch callbacks'
 * correlation ids) or external (an external correlation id pushed around each launch, with
 * CUPTI's API records; kept for comparison). */
#define NVTXCORR_ENV_GPU_CORRELATION "NVTXCORR_GPU_CORRELATION"
/* Program context (docs/profile.md, Context): nvtx makes nvtxcorr the program's NVTX tool. */
#define NVTXCORR_ENV_CONTEXT "NVTXCORR_CONTEXT"
#define NVTXCORR_ENV_CONTEXT_DOMAINS "NVTXCORR_CONTEXT_DOMAINS"
#define NVTXCORR_ENV_CUPTI_LIBRARY "NVTXCORR_CUPTI_LIBRARY"

#endif
