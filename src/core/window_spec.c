/* The NVTXCORR_WINDOW and NVTXCORR_WINDOW_SIGNAL values' grammar, apart from config.c so that
 * the front end checks a value with the very parser the library uses (src/cli/launch.c)
 * before a long run. No state, no allocation. */
#define _GNU_SOURCE
#include "window_spec.h"
#include <math.h>
#include <signal.h>
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

/* Every signal a window might be asked for, and why it cannot be one (NULL: it can). A window
 * signal toggles windows each time it arrives, so it must come only from whoever sends it on
 * purpose: nvtxcorr's own (whose handler would stand in the way, and then the warning would
 * blame the program), and signals the kernel, the C library or the terminal raise for their
 * own reasons, are refused. */
static const struct {
    const char *name;
    int sig;
    const char *why;
} signals[] = {
    {"HUP", SIGHUP,
     "profile mode's own handler takes SIGHUP (it writes the outputs and ends "
     "the process)"},
    {"INT", SIGINT,
     "profile mode's own handler takes SIGINT (it writes the outputs and ends "
     "the process)"},
    {"TERM", SIGTERM,
     "profile mode's own handler takes SIGTERM (it writes the outputs and "
     "ends the process)"},
    {"KILL", SIGKILL, "SIGKILL cannot be caught"},
    {"STOP", SIGSTOP, "SIGSTOP cannot be caught"},
    {"ABRT", SIGABRT, "abort() raises SIGABRT: the process is ending"},
    {"PIPE", SIGPIPE, "the kernel raises SIGPIPE at every write to a closed pipe or socket"},
    {"CHLD", SIGCHLD, "the kernel sends SIGCHLD each time a child process ends or stops"},
    {"XFSZ", SIGXFSZ,
     "the kernel raises SIGXFSZ at a write past the file-size limit "
     "(nvtxcorr's own writes take theirs back)"},
    {"SEGV", SIGSEGV, "SIGSEGV is a fault"},
    {"BUS", SIGBUS, "SIGBUS is a fault"},
    {"FPE", SIGFPE, "SIGFPE is a fault"},
    {"ILL", SIGILL, "SIGILL is a fault"},
    {"TRAP", SIGTRAP, "SIGTRAP is a debugger's"},
    {"SYS", SIGSYS, "SIGSYS is a fault (a bad system call)"},
    {"CONT", SIGCONT, "SIGCONT is job control (the shell sends it)"},
    {"TSTP", SIGTSTP, "SIGTSTP is job control (the terminal sends it)"},
    {"TTIN", SIGTTIN, "SIGTTIN is job control (the terminal sends it)"},
    {"TTOU", SIGTTOU, "SIGTTOU is job control (the terminal sends it)"},
    {"USR1", SIGUSR1, NULL},
    {"USR2", SIGUSR2, NULL},
    {"QUIT", SIGQUIT, NULL},
    {"ALRM", SIGALRM, NULL},
    {"VTALRM", SIGVTALRM, NULL},
    {"PROF", SIGPROF, NULL},
    {"URG", SIGURG, NULL},
    {"WINCH", SIGWINCH, NULL},
    {"IO", SIGIO, NULL},
    {"PWR", SIGPWR, NULL},
    {"XCPU", SIGXCPU, NULL},
#ifdef SIGSTKFLT
    {"STKFLT", SIGSTKFLT, NULL},
#endif
};

int nvtxcorr_window_signal(const char *v, char *why, size_t size)
{
    const char *name = !strncasecmp(v, "SIG", 3) ? v + 3 : v;
    char *end;
    long n = strtol(v, &end, 10);
    int number = end != v && !*end;
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) {
        if (number ? n != signals[i].sig : strcasecmp(name, signals[i].name) != 0) continue;
        if (signals[i].why == NULL) return signals[i].sig;
        return snprintf(why, size, "%s", signals[i].why), -1;
    }
    return snprintf(why, size,
                    "not a signal a window can use (USR1, USR2, or another name or "
                    "number from 1 to 31)"),
           -1;
}
