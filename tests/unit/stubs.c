/* Stand-ins for the parts of the library the unit-tested objects refer to but the tests do
 * not exercise: initialisation (init.c), settings (config.c: the environment read directly),
 * diagnostics (log.c), the entry stubs' routes (routes.c), glibc's dlsym behind our override
 * (dlsym.c) and the hooks themselves (their hidden aliases, one per row of hooks.def, used by
 * resolve.c's table only as addresses). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "nvtxcorr.h"

/* The tests run as an active library: resolvers hand out hooks. */
_Atomic int nvtxcorr_mode = NVTXCORR_MODE_ACTIVE;

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

/* No entry stubs here: nothing to route (routes.c). */
void nvtxcorr_routes_refresh(void) {}

void *nvtxcorr_real_dlsym(void *handle, const char *name)
{
    return dlsym(handle, name);
}

#define DRIVER(kind, sym, ...)                                                                     \
    void nvtxcorr_local_##sym(void);                                                               \
    void nvtxcorr_local_##sym(void) {}
#define RUNTIME DRIVER
#include "hooks.def"

/* context/tree.c counts the paths it records as [other] here (context/nvtx_tool.c's). */
#include "context.h"
nvtxcorr_context_counts_t nvtxcorr_context_counts;
