/* The one write nvtxcorr makes to a file (io.c). */
#ifndef NVTXCORR_IO_H
#define NVTXCORR_IO_H

#include <stddef.h>

/* Every write nvtxcorr makes to a file (diagnostics, summary, trace): all of buf, retrying
 * EINTR; returns 0, or the errno that stopped it. A write past RLIMIT_FSIZE raises SIGXFSZ,
 * whose default action kills the process: it is blocked on the calling thread for the
 * write, and the one the write raised is taken back, so it fails with EFBIG instead and the
 * host's own writes behave as before. Async-signal-safe. */
int nvtxcorr_write_full(int fd, const void *buf, size_t len);

#endif
