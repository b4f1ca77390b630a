/* This process's facts, which every output carries (process.h), and its helper threads. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include "clock.h"
#include "core/config.h"
#include "out.h"
#include "process.h"
prof_process_t nvtxcorr_prof_process;
uint64_t nvtxcorr_prof_label_hash;

/* A path too long after expansion is empty: the summary then goes to stderr at exit (as for
 * every path that cannot be written), the trace is not recorded. */
static void expand_or_say(const char *pattern, char *out, size_t size, const char *instead)
{
    out[0] = 0;
    if (pattern && nvtxcorr_prof_expand(pattern, out, size) != 0) {
        nvtxcorr_prof_say("error", pattern, ": path too long after expansion; ", instead,
                          (char *)NULL);
        out[0] = 0;
    }
}

/* At start-up and in a forked child: this process's own facts. */
void nvtxcorr_prof_facts_reset(void)
{
    nvtxcorr_prof_process.pid = (int)getpid();
    nvtxcorr_prof_process.start_ns = nvtxcorr_prof_realtime_ns();
    expand_or_say(nvtxcorr_config.profile, nvtxcorr_prof_process.profile_path,
                  sizeof nvtxcorr_prof_process.profile_path,
                  "summary printed to stderr instead (at exit)");
    expand_or_say(nvtxcorr_config.trace, nvtxcorr_prof_process.trace_path,
                  sizeof nvtxcorr_prof_process.trace_path, "no trace recorded");
    expand_or_say(nvtxcorr_config.metrics, nvtxcorr_prof_process.metrics_path,
                  sizeof nvtxcorr_prof_process.metrics_path, "no metrics written");
}

/* Starts fn on a detached thread that blocks every signal: the program's threads take them,
 * as without nvtxcorr. 0, or pthread_create's error. */
int nvtxcorr_prof_helper_thread(void *(*fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&t, &attr, fn, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

size_t nvtxcorr_prof_cmdline(char *buf, size_t size)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;
    if (fd >= 0) close(fd);
    n = n > 0 ? n : 0;
    buf[n] = 0;
    return (size_t)n;
}
