/* NVTXCORR_WINDOW's and NVTXCORR_WINDOW_SIGNAL's grammar (window_spec.c): used by config.c
 * and by nvtxcorr-tool. */
#ifndef NVTXCORR_WINDOW_SPEC_H
#define NVTXCORR_WINDOW_SPEC_H

#include <stddef.h>

enum {
    NVTXCORR_WINDOW_NONE,
    NVTXCORR_WINDOW_API,
    NVTXCORR_WINDOW_SIGNAL,
    NVTXCORR_WINDOW_EVERY,
    NVTXCORR_WINDOW_NVTX
};

typedef struct nvtxcorr_window_spec {
    int kind; /* NVTXCORR_WINDOW_* */
    unsigned long long every_ns, delay_ns;
    unsigned count; /* 0: no limit */
    /* nvtx: the range's name (an fnmatch glob) and its domain ("" for any) */
    char range[128], domain[128];
} nvtxcorr_window_spec_t;

/* Parses an NVTXCORR_WINDOW value: 0, or -1 with the reason in why. */
int nvtxcorr_window_spec(const char *v, nvtxcorr_window_spec_t *spec, char *why, size_t size);

/* Parses an NVTXCORR_WINDOW_SIGNAL value (a name, with or without SIG, or a number): the
 * signal, or -1 with the reason in why (not a signal, or one a window cannot use). */
int nvtxcorr_window_signal(const char *v, char *why, size_t size);

#endif
