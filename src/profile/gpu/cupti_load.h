/* libcupti's loading (cupti_load.c): where it is looked for, and the entry points the adapter's
 * other files call, resolved with dlsym. */
#ifndef NVTXCORR_PROF_CUPTI_LOAD_H
#define NVTXCORR_PROF_CUPTI_LOAD_H

#include <stddef.h>
/* dlopen of libcupti where it is looked for (the paths tried, appended to `tried`). */
void *nvtxcorr_prof_cupti_open(char *tried, size_t size);

#ifdef NVTXCORR_HAVE_CUPTI
#include <cupti.h>

/* The external correlation kind nvtxcorr pushes around a launch: CUSTOM2, since PyTorch's
 * profiler (Kineto) uses CUSTOM0 and CUSTOM1 and CUPTI keeps one id per kind. */
#define NVTXCORR_CUPTI_EXTERNAL_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

/* The entry points used, resolved with dlsym (names and types from the headers); 1: required. */
#define NVTXCORR_CUPTI_FUNCTIONS(X)                                                                \
    X(cuptiActivityRegisterCallbacks, 1)                                                           \
    X(cuptiActivityEnable, 1)                                                                      \
    X(cuptiActivityDisable, 1)                                                                     \
    X(cuptiActivityFlushAll, 1)                                                                    \
    X(cuptiActivityGetNextRecord, 1)                                                               \
    X(cuptiActivityGetNumDroppedRecords, 1)                                                        \
    X(cuptiActivityPushExternalCorrelationId, 1)                                                   \
    X(cuptiActivityPopExternalCorrelationId, 1)                                                    \
    X(cuptiGetResultString, 1)                                                                     \
    X(cuptiGetLastError, 0)                                                                        \
    X(cuptiGetTimestamp, 0)                                                                        \
    X(cuptiActivityRegisterTimestampCallback, 0)                                                   \
    X(cuptiSubscribe, 0)                                                                           \
    X(cuptiUnsubscribe, 0)                                                                         \
    X(cuptiEnableCallback, 0)                                                                      \
    X(cuptiGetGraphNodeId, 0)                                                                      \
    X(cuptiActivityEnableDriverApi, 0)                                                             \
    X(cuptiActivityEnableRuntimeApi, 0)
#define NVTXCORR_CUPTI_SLOT(name, required) __typeof__(&name) name;
typedef struct prof_cupti_api {
    NVTXCORR_CUPTI_FUNCTIONS(NVTXCORR_CUPTI_SLOT)
} prof_cupti_api_t;
#undef NVTXCORR_CUPTI_SLOT
extern prof_cupti_api_t nvtxcorr_prof_cupti_api;
/* Fills nvtxcorr_prof_cupti_api from libcupti's handle: NULL, or the name of a required entry
 * point it lacks. */
const char *nvtxcorr_prof_cupti_resolve(void *h);
const char *nvtxcorr_prof_cupti_result_name(CUptiResult r);
#endif

#endif
