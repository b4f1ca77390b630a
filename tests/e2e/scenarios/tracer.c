/* Another CUDA interposer, as tracers and vGPU limiters (HAMi-core) are: it defines the six
 * kernel-launch entry points, counts each call and forwards it to the next definition. Built
 * twice: as libtracer.so, preloaded before or after libnvtxcorr.so, and linked into the
 * executable scn_driver_wrapped (exported, so that it interposes like a preload).
 *
 * TRACER_LOOKUP=next (default) finds the next definition with dlsym(RTLD_NEXT); =handle asks
 * dlsym(dlopen("libcuda.so.1"), name), as HAMi-core does. Resolution is lazy, at the first
 * call. Like a real tracer it records after the call returns (so the call is not a tail call:
 * a wrapper handed back to itself recurses until the stack overflows, as it does in the
 * field). At exit it prints "tracer: <symbol> <calls>" per entry point on stderr. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
typedef int (*launch_ex_fn)(const void *, void *, void **, void **);
typedef int (*coop_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       void *, void **);

enum { K, K_PTSZ, EX, EX_PTSZ, COOP, COOP_PTSZ, N };
static const char *const names[N] = {
    "cuLaunchKernel",        "cuLaunchKernel_ptsz",       "cuLaunchKernelEx",
    "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz"};
static _Atomic unsigned long calls[N];

static void *next(int i)
{
    static void *_Atomic cache[N];
    void *p = atomic_load(&cache[i]);
    if (p == NULL) {
        const char *how = getenv("TRACER_LOOKUP");
        if (how && !strcmp(how, "handle")) {
            void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
            p = h ? dlsym(h, names[i]) : NULL;
        } else {
            p = dlsym(RTLD_NEXT, names[i]);
        }
        atomic_store(&cache[i], p);
    }
    return p;
}

static int counted(int i, int r)
{
    atomic_fetch_add(&calls[i], 1);
    return r;
}

#define LAUNCH(sym, i)                                                                             \
    int sym(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
            unsigned shmem, void *s, void **params, void **extra);                                 \
    int sym(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
            unsigned shmem, void *s, void **params, void **extra)                                  \
    {                                                                                              \
        launch_fn n = (launch_fn)next(i);                                                          \
        return counted(i, n ? n(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra) : 999);        \
    }
#define LAUNCH_EX(sym, i)                                                                          \
    int sym(const void *config, void *f, void **params, void **extra);                             \
    int sym(const void *config, void *f, void **params, void **extra)                              \
    {                                                                                              \
        launch_ex_fn n = (launch_ex_fn)next(i);                                                    \
        return counted(i, n ? n(config, f, params, extra) : 999);                                  \
    }
#define COOP(sym, i)                                                                               \
    int sym(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
            unsigned shmem, void *s, void **params);                                               \
    int sym(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
            unsigned shmem, void *s, void **params)                                                \
    {                                                                                              \
        coop_fn n = (coop_fn)next(i);                                                              \
        return counted(i, n ? n(f, gx, gy, gz, bx, by, bz, shmem, s, params) : 999);               \
    }

LAUNCH(cuLaunchKernel, K)
LAUNCH(cuLaunchKernel_ptsz, K_PTSZ)
LAUNCH_EX(cuLaunchKernelEx, EX)
LAUNCH_EX(cuLaunchKernelEx_ptsz, EX_PTSZ)
COOP(cuLaunchCooperativeKernel, COOP)
COOP(cuLaunchCooperativeKernel_ptsz, COOP_PTSZ)

__attribute__((destructor)) static void report(void)
{
    for (int i = 0; i < N; i++)
        fprintf(stderr, "tracer: %s %lu\n", names[i], atomic_load(&calls[i]));
}
