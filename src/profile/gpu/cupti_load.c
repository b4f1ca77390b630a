/* Finding and starting libcupti for profile mode's GPU time (cupti.c drives it): where the
 * library is looked for, in the order docs/profile.md gives and `nvtxcorr doctor` follows, and
 * the entry points the adapter calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include "core/config.h"
#include "cupti_load.h"
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
    /* A libcupti the process has loaded already (PyTorch links its wheel's copy): that one. A
     * second copy from the toolkit would be a second CUPTI with its own state in one process,
     * two subscribers to one driver, which is not a configuration CUPTI supports. */
    for (size_t k = 0; k < 2; k++) {
        void *h = dlopen(names[1 - k], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h) return h;
    }
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

#ifdef NVTXCORR_HAVE_CUPTI
/* ---- its entry points ---- */
prof_cupti_api_t nvtxcorr_prof_cupti_api;

const char *nvtxcorr_prof_cupti_resolve(void *h)
{
#define RESOLVE(name, req)                                                                         \
    nvtxcorr_prof_cupti_api.name = (__typeof__(nvtxcorr_prof_cupti_api.name))dlsym(h, #name);      \
    if (req && nvtxcorr_prof_cupti_api.name == NULL) return #name;
    NVTXCORR_CUPTI_FUNCTIONS(RESOLVE)
#undef RESOLVE
    return NULL;
}

const char *nvtxcorr_prof_cupti_result_name(CUptiResult r)
{
    const char *s = NULL;
    if (nvtxcorr_prof_cupti_api.cuptiGetResultString == NULL ||
        nvtxcorr_prof_cupti_api.cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == NULL)
        s = "CUPTI error";
    return s;
}
#endif
