/* The one write nvtxcorr makes to a file (io.h): diagnostics, summaries and traces alike. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include "io.h"
int nvtxcorr_write_full(int fd, const void *buf, size_t len)
{
    sigset_t xfsz, old, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    /* One already pending (the program's own) is left for the program. */
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    const char *p = buf;
    int err = 0;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            err = w < 0 ? errno : EIO;
            break;
        }
        p += w, len -= (size_t)w;
    }
    if (err == EFBIG && !was_pending) {
        /* The kernel sends it to this thread (send_sig: thread-directed), where it is blocked:
         * take it back before the mask is restored. sigtimedwait is not on POSIX's list of
         * async-signal-safe functions, but glibc's is the bare rt_sigtimedwait system call. */
        struct timespec zero = {0, 0};
        sigtimedwait(&xfsz, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}
