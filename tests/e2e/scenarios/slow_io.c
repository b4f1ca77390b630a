/* A slow disk, for the trace's closing race (tests/e2e/test_reliability_io.py), preloaded in
 * front of nvtxcorr so that its write(2) and close(2) calls come here first:
 *   SLOWIO_WRITE_US=n   a write of SLOWIO_WRITE_MIN bytes or more (default 4096) waits n us
 *                       before it is made
 *   SLOWIO_CLOSE_MS=n   closing a regular file waits n ms before it is made
 * so that a thread's write of its trace buffer is likely in flight while another thread ends
 * the file, and the end stays open a while for a late write to land after it. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long env_long(const char *name)
{
    const char *v = getenv(name);
    return v ? atol(v) : 0;
}

static void wait_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void *buf, size_t n)
{
    static long delay = -1, min = 4096;
    if (delay < 0) {
        delay = env_long("SLOWIO_WRITE_US");
        if (env_long("SLOWIO_WRITE_MIN") > 0) min = env_long("SLOWIO_WRITE_MIN");
    }
    if (delay > 0 && n >= (size_t)min) wait_us(delay);
    return syscall(SYS_write, fd, buf, n);
}

__attribute__((visibility("default"))) int close(int fd)
{
    static long delay = -1;
    struct stat st;
    if (delay < 0) delay = env_long("SLOWIO_CLOSE_MS");
    if (delay > 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) wait_us(delay * 1000);
    return (int)syscall(SYS_close, fd);
}
