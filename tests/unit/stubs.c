/* Stand-ins for the parts of the library the unit-tested objects refer to but the tests do
 * not exercise: initialisation (init.c), settings (config.c: the environment read directly),
 * diagnostics (log.c), the process state routes.c reads (state.c), and the hooks themselves (their
 * hidden aliases, one per row of hooks.def, used by claim.c's table only as addresses). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/config.h"
#include "core/fork.h"
#include "core/io.h"
#include "core/log.h"
#include "core/resolve.h"
#include "core/state.h"
#include "hooks/init.h"
/* The tests run as an active library: resolvers hand out hooks. */
_Atomic int nvtxcorr_mode = NVTXCORR_MODE_ACTIVE;
int nvtxcorr_log_level = NVTXCORR_LOG_ERROR;
void *_Atomic nvtxcorr_real_fn[NVTXCORR_SLOT_COUNT];

int nvtxcorr_init_slow(void)
{
    return 1;
}

int nvtxcorr_initialising_here(void)
{
    return 0;
}

const char *nvtxcorr_config_env(const char *name)
{
    return getenv(name);
}

int nvtxcorr_config_disabled(void)
{
    return 0;
}

void nvtxcorr_log(int level, const char *fmt, ...)
{
    (void)level, (void)fmt;
}

int nvtxcorr_write_full(int fd, const void *buf, size_t len)
{
    return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

void nvtxcorr_fork_mutex(void *mutex, nvtxcorr_fork_t phase)
{
    (void)mutex, (void)phase;
}

/* What routes.c reads besides the mode: the captures open (capture.c) and the NVTX tool's
 * range push and pop (emit.c), set by test_routes.c. */
_Atomic unsigned nvtxcorr_captures_open;
void *nvtxcorr_tool_push, *nvtxcorr_tool_pop;

#define DRIVER(kind, sym, ...)                                                                     \
    void nvtxcorr_local_##sym(void);                                                               \
    void nvtxcorr_local_##sym(void) {}
#define RUNTIME DRIVER
#include "core/hooks.def"
