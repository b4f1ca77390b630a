/* Diagnostics (log.c): "nvtxcorr: <level>: ..." on stderr via write(2), safe inside the host
 * process. The level is the log's own, set by configuration (config.c) once it is read. */
#ifndef NVTXCORR_LOG_H
#define NVTXCORR_LOG_H

enum {
    NVTXCORR_LOG_SILENT = -1, /* secure execution */
    NVTXCORR_LOG_ERROR = 0,
    NVTXCORR_LOG_WARN,
    NVTXCORR_LOG_INFO,
    NVTXCORR_LOG_DEBUG
};
/* NVTXCORR_LOG as read (config.c); NVTXCORR_LOG_ERROR until then. */
extern int nvtxcorr_log_level;
#define NVTXCORR_LOG_ON(level) ((level) <= nvtxcorr_log_level)
void nvtxcorr_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct nvtxcorr_label_error;
void nvtxcorr_log_label_error(void *ctx, const struct nvtxcorr_label_error *error);
/* "nvtxcorr: warn: ..." whatever NVTXCORR_LOG says (silent only in secure execution), for what
 * a user must hear unasked: a bound that made nvtxcorr drop names, a copy that stands aside. It
 * may come before initialisation, when the level is not read yet. */
void nvtxcorr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
