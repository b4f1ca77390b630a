/* The NVTXCORR_WINDOW value's grammar, apart from config.c so that the launcher checks a
 * value with the very parser the library uses (nvtxcorr-tool check-window) before a long run.
 * No state, no allocation. */
#define _GNU_SOURCE
#include "window_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Seconds as a decimal number (0.2, 60), at most a year, into ns; -1 when not one. */
static long long seconds_ns(const char *v, int allow_zero)
{
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || !isfinite(s) || s < 0 || s > 366 * 86400.0 || (!allow_zero && !(s > 0)))
        return -1;
    return (long long)(s * 1e9 + 0.5);
}

/* NVTXCORR_WINDOW: cudaProfilerApi | signal | every:<s>, then ",delay:<s>" and ",count:<n>"
 * in any order (nsys's --capture-range with --delay and --capture-range-end repeat[:n]). */
int nvtxcorr_window_spec(const char *v, nvtxcorr_window_spec_t *c, char *why, size_t size)
{
    char buf[256];
    if (strlen(v) >= sizeof buf) return snprintf(why, size, "value too long"), -1;
    strcpy(buf, v);
    memset(c, 0, sizeof *c);
    int kind = NVTXCORR_WINDOW_NONE;
    unsigned long long every = 0, delay = 0;
    unsigned long count = 0;
    char *save = NULL, *nvtx = NULL;
    for (char *p = buf; *p; p++) /* the range may hold commas: it takes the rest */
        if ((p == buf || p[-1] == ',') && !strncasecmp(p, "nvtx:", 5)) {
            nvtx = p;
            if (p > buf) p[-1] = 0;
            break;
        }
    for (char *part = nvtx == buf ? NULL : strtok_r(buf, ",", &save); part || nvtx;
         part = part && save ? strtok_r(NULL, ",", &save) : NULL) {
        if (part == NULL) part = nvtx, nvtx = NULL;
        long long ns;
        if (!strcasecmp(part, "cudaProfilerApi") && !kind) {
            kind = NVTXCORR_WINDOW_API;
        } else if (!strcasecmp(part, "signal") && !kind) {
            kind = NVTXCORR_WINDOW_SIGNAL;
        } else if (!strncasecmp(part, "every:", 6) && !kind) {
            if ((ns = seconds_ns(part + 6, 0)) < 1000000)
                return snprintf(why, size, "%s: not a window length in seconds (0.001 or more)",
                                part),
                       -1;
            kind = NVTXCORR_WINDOW_EVERY, every = (unsigned long long)ns;
        } else if (!strncasecmp(part, "delay:", 6)) {
            if ((ns = seconds_ns(part + 6, 1)) < 0)
                return snprintf(why, size, "%s: not a delay in seconds", part), -1;
            delay = (unsigned long long)ns;
        } else if (!strncasecmp(part, "count:", 6)) {
            char *end;
            count = strtoul(part + 6, &end, 10);
            if (end == part + 6 || *end || count == 0 || count > 1000000)
                return snprintf(why, size, "%s: not a window count (1 or more)", part), -1;
        } else if (!strncasecmp(part, "nvtx:", 5) && !kind) {
            /* nvtx:<name or glob>[@domain]: the last '@' starts the domain */
            const char *name = part + 5, *at = strrchr(name, '@');
            size_t n = at ? (size_t)(at - name) : strlen(name);
            if (n == 0 || n >= sizeof c->range || (at && !at[1]) ||
                (at && strlen(at + 1) >= sizeof c->domain))
                return snprintf(why, size,
                                "%s: not an NVTX range (nvtx:<name or glob>[@domain], at most "
                                "127 bytes each)",
                                part),
                       -1;
            memcpy(c->range, name, n);
            c->range[n] = 0;
            if (at) strcpy(c->domain, at + 1);
            kind = NVTXCORR_WINDOW_NVTX;
        } else {
            return snprintf(why, size,
                            "%s: unknown window (cudaProfilerApi, signal, every:<seconds>, "
                            "nvtx:<range>[@domain]; options delay:<seconds>, count:<n>)",
                            part),
                   -1;
        }
    }
    if (!kind)
        return snprintf(why, size, "no window kind (cudaProfilerApi, signal, every:<s>)"), -1;
    c->kind = kind;
    c->every_ns = every;
    c->delay_ns = delay;
    c->count = (unsigned)count;
    return 0;
}
