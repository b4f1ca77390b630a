/* Finding and starting libcupti for profile mode's GPU time (cupti.c drives it): where the
 * library is looked for, in the order docs/profile.md gives and `nvtxcorr doctor` follows, and
 * the stack CUPTI's start runs on. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cuda.h>

#include "internal.h"

/* ---- finding libcupti ---- */
static void *try_open(const char *dir, const char *name, char *tried, size_t size)
{
    char path[4096];
    if (dir)
        snprintf(path, sizeof path, "%s/%s", dir, name);
    else
        snprintf(path, sizeof path, "%s", name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    size_t n = strlen(tried);
    if (h == NULL && n + strlen(path) + 3 < size)
        snprintf(tried + n, size - n, "%s%s", n ? ", " : "", path);
    return h;
}

static int find_cudart(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (slash && !strncmp(slash + 1, "libcudart.so", 12)) {
        snprintf(data, 4096, "%.*s", (int)(slash - info->dlpi_name), info->dlpi_name);
        return 1;
    }
    return 0;
}

void *nvtxcorr_prof_cupti_open(char *tried, size_t size)
{
    char soname[32]; /* the major version of the headers built against: libcupti.so.13 */
    snprintf(soname, sizeof soname, "libcupti.so.%d", CUDA_VERSION / 1000);
    const char *const names[] = {"libcupti.so", soname};
    const char *explicit = nvtxcorr_config.cupti_library;
    if (explicit && *explicit) return try_open(NULL, explicit, tried, size);
    const char *homes[] = {nvtxcorr_config.cuda_home, "/usr/local/cuda"};
    for (size_t i = 0; i < 2; i++) {
        if (homes[i] == NULL || !*homes[i]) continue;
        for (int sub = 0; sub < 2; sub++) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/%s", homes[i], sub ? "extras/CUPTI/lib64" : "lib64");
            for (size_t k = 0; k < 2; k++) {
                char path[4200];
                snprintf(path, sizeof path, "%s/%s", dir, names[k]);
                if (access(path, R_OK) != 0) continue; /* absent: not worth listing */
                void *h = try_open(dir, names[k], tried, size);
                if (h) return h;
            }
        }
    }
    /* The wheels: nvidia/cu13/lib holds both (CUDA 13); nvidia/cuda_runtime/lib and
     * nvidia/cuda_cupti/lib (CUDA 12). */
    char rt[4096] = "";
    if (dl_iterate_phdr(find_cudart, rt) && rt[0]) {
        void *h = try_open(rt, soname, tried, size);
        if (h) return h;
        char sibling[4200];
        snprintf(sibling, sizeof sibling, "%s/../../cuda_cupti/lib", rt);
        if (access(sibling, X_OK) == 0 && (h = try_open(sibling, soname, tried, size))) return h;
    }
    for (size_t k = 0; k < 2; k++) {
        void *h = try_open(NULL, names[1 - k], tried, size);
        if (h) return h;
    }
    return NULL;
}

/* CUPTI's start (dlopen of a 4 MB library and its constructors, the first activity enable,
 * which sets up its profiling state) is deeper than the slow-path stack it is called on was
 * sized for (256 KiB, slowstack.c). It runs on a stack of its own: 8 MiB reserved with
 * MAP_NORESERVE (only the pages touched cost memory), a guard page below, unmapped after.
 * ASan does not follow swapcontext: the sanitized build starts CUPTI where it is. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NVTXCORR_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(NVTXCORR_ASAN)
int nvtxcorr_prof_on_start_stack(int (*fn)(void))
{
    return fn();
}
#else
enum { START_STACK = 8 << 20, GUARD = 64 << 10 };
static ucontext_t start_caller, start_callee;
static int (*start_fn)(void);
static int start_result;

static void start_trampoline(void)
{
    start_result = start_fn();
}

int nvtxcorr_prof_on_start_stack(int (*fn)(void))
{
    char *p = mmap(NULL, START_STACK, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) return fn();
    mprotect(p, GUARD, PROT_NONE);
    if (getcontext(&start_callee) != 0) {
        munmap(p, START_STACK);
        return fn();
    }
    start_callee.uc_stack.ss_sp = p + GUARD;
    start_callee.uc_stack.ss_size = START_STACK - GUARD;
    start_callee.uc_link = &start_caller;
    makecontext(&start_callee, start_trampoline, 0);
    start_fn = fn, start_result = -1;
    int r = swapcontext(&start_caller, &start_callee) == 0 ? start_result : fn();
    munmap(p, START_STACK);
    return r;
}
#endif
