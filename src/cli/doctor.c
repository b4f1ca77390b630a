/* `nvtxcorr doctor`: what a user needs before filing a bug, one line per thing nvtxcorr
 * depends on at run time, each with a verdict (ok, warn, fail, unset, none, not found). It
 * inspects; it never fails: the exit status is 0 whatever it finds (2 on a usage error).
 * The launcher passes --library with the libnvtxcorr.so it would preload. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <link.h>
#include <nvtxcorr/version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "labels.h"
#include "names.h"

static void line(const char *what, const char *verdict, const char *detail)
{
    printf("%-12s %s: %s\n", what, verdict, detail);
}

/* The version the library carries as "@(#)nvtxcorr X.Y.Z" (src/init.c), read from the file:
 * loading it here would prove nothing about the host process anyway. */
static int library_version(const char *path, char *out, size_t size)
{
    static const char tag[] = "@(#)nvtxcorr ";
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int found = 0;

    if (fd < 0) return 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            const char *p = memmem(map, (size_t)st.st_size, tag, sizeof tag - 1);
            if (p) {
                const char *v = p + sizeof tag - 1, *end = (const char *)map + st.st_size;
                size_t n = 0;
                while (v + n < end && v[n] != '\0' && n + 1 < size)
                    n++;
                memcpy(out, v, n);
                out[n] = '\0';
                found = 1;
            }
            munmap(map, (size_t)st.st_size);
        }
    }
    close(fd);
    return found;
}

static void check_library(const char *path)
{
    char version[64], detail[4200];

    if (!path || !*path || access(path, R_OK) != 0) {
        line("library", "fail", "libnvtxcorr.so not found (build or install first, or --library)");
        return;
    }
    if (!library_version(path, version, sizeof version)) {
        snprintf(detail, sizeof detail, "%s carries no nvtxcorr version: not libnvtxcorr.so?",
                 path);
        line("library", "fail", detail);
    } else if (strcmp(version, NVTXCORR_VERSION_STRING) != 0) {
        snprintf(detail, sizeof detail, "%s, version %s, but this tool is %s: mixed installs?",
                 path, version, NVTXCORR_VERSION_STRING);
        line("library", "warn", detail);
    } else if (strpbrk(path, " \t\n:")) {
        snprintf(detail, sizeof detail,
                 "%s, version %s, but LD_PRELOAD cannot hold a path "
                 "with a space or a colon",
                 path, version);
        line("library", "fail", detail);
    } else {
        snprintf(detail, sizeof detail, "%s, version %s", path, version);
        line("library", "ok", detail);
    }
}

static void check_nvtx_tool(void)
{
    const char *path = getenv("NVTX_INJECTION64_PATH");
    char detail[4200];

    if (!path || !*path) {
        line("NVTX tool", "unset",
             "NVTX_INJECTION64_PATH is not set: nvtxcorr passes through "
             "(nsys and ncu set it; run the program under them)");
        return;
    }
    char version[64];
    if (library_version(path, version, sizeof version)) {
        snprintf(detail, sizeof detail,
                 "NVTX_INJECTION64_PATH=%s is nvtxcorr itself: the program's NVTX ranges are "
                 "context in profile mode, and nvtxcorr's own ranges reach no tool (nsys and ncu "
                 "name theirs)",
                 path);
        line("NVTX tool", "ok", detail);
        return;
    }
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (h) {
        snprintf(detail, sizeof detail, "NVTX_INJECTION64_PATH=%s loads", path);
        line("NVTX tool", "ok", detail);
        dlclose(h);
    } else {
        snprintf(detail, sizeof detail, "NVTX_INJECTION64_PATH=%s does not load: %s", path,
                 dlerror());
        line("NVTX tool", "fail", detail);
    }
}

static void check_driver(void)
{
    char detail[4200];
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

    if (!h) {
        snprintf(detail, sizeof detail, "libcuda.so.1 does not load (no NVIDIA driver here?): %s",
                 dlerror());
        line("CUDA driver", "not found", detail);
        return;
    }
    struct link_map *map = NULL;
    const char *where = dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map ? map->l_name : "?";
    /* cuDriverGetVersion needs no cuInit and creates no context. */
    int (*get_version)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    int version = 0;
    if (get_version && get_version(&version) == 0) {
        snprintf(detail, sizeof detail, "%s, cuDriverGetVersion %d (CUDA %d.%d)", where, version,
                 version / 1000, version % 1000 / 10);
        line("CUDA driver", "ok", detail);
    } else {
        snprintf(detail, sizeof detail, "%s, but cuDriverGetVersion failed", where);
        line("CUDA driver", "warn", detail);
    }
    dlclose(h);
}

static void report_label_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    char text[4096], shown[4 * sizeof text]; /* control bytes shown as \\xNN */
    (void)ctx;
    nvtxcorr_escape_controls(shown, sizeof shown,
                             nvtxcorr_label_error_text(error, text, sizeof text));
    printf("             nvtxcorr: error: %s\n", shown);
}

static void check_labels(const char *path, const char *inline_rules)
{
    char detail[4200];

    if (!path) path = getenv("NVTXCORR_LABELS");
    if (!inline_rules) inline_rules = getenv("NVTXCORR_LABELS_INLINE");
    if (path && !*path) path = NULL;
    if (inline_rules && !*inline_rules) inline_rules = NULL;
    if (!path && !inline_rules) {
        line("labels", "none",
             "NVTXCORR_LABELS and NVTXCORR_LABELS_INLINE unset (or --labels): "
             "ranges are named after kernels");
        return;
    }
    snprintf(detail, sizeof detail, "%s%s%s", path ? path : "", path && inline_rules ? " and " : "",
             inline_rules ? "NVTXCORR_LABELS_INLINE" : "");
    fflush(stdout);
    nvtxcorr_label_table_t *t = nvtxcorr_labels_load(inline_rules, path, report_label_error, NULL);
    if (t) {
        size_t n = strlen(detail);
        snprintf(detail + n, sizeof detail - n, ": %zu rules OK", nvtxcorr_labels_rule_count(t));
        line("labels", "ok", detail);
        nvtxcorr_labels_free(t);
    } else {
        size_t n = strlen(detail);
        snprintf(detail + n, sizeof detail - n,
                 ": rejected (errors above); the library would "
                 "use default labels");
        line("labels", "fail", detail);
    }
}

/* The directory of the shipped tables (--labels NAME), as the launcher found it: its tables by
 * name, sorted as ls would. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int conf_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 5 && strcmp(e->d_name + n - 5, ".conf") == 0;
}

static void check_tables(const char *dir)
{
    char detail[4200];
    struct dirent **names = NULL;
    int n;

    if (!dir || !*dir) {
        line("tables", "none", "no shipped label tables found next to the launcher");
        return;
    }
    n = scandir(dir, &names, conf_file, by_name);
    if (n < 0) {
        snprintf(detail, sizeof detail, "%s: %s", dir, strerror(errno));
        line("tables", "fail", detail);
        return;
    }
    size_t len = (size_t)snprintf(detail, sizeof detail, "%s (--labels NAME):", dir);
    for (int i = 0; i < n; i++) {
        if (len < sizeof detail)
            len += (size_t)snprintf(detail + len, sizeof detail - len, " %.*s",
                                    (int)(strlen(names[i]->d_name) - 5), names[i]->d_name);
        free(names[i]);
    }
    free(names);
    if (n == 0) snprintf(detail, sizeof detail, "%s: no *.conf in it", dir);
    line("tables", n ? "ok" : "none", detail);
}

/* CUPTI, for profile mode's GPU time: the places src/profile/gpu/cupti_load.c looks, in its order
 * (NVTXCORR_CUPTI_LIBRARY alone when set; $CUDA_HOME then /usr/local/cuda, lib64 then
 * extras/CUPTI/lib64; the loader's search for the soname). The wheel next to a loaded
 * libcudart is only known inside the program. */
static void cupti_line(const char *path, void *h)
{
    char detail[4200];
    snprintf(detail, sizeof detail, "%s %s%s%s", path,
             h ? "loads" : "does not load: ", h ? "" : dlerror(),
             h ? "" : "; profile mode will report no GPU time");
    line("CUPTI", h ? "ok" : "fail", detail);
    if (h) dlclose(h);
}

static void check_cupti(void)
{
    const char *explicit = getenv("NVTXCORR_CUPTI_LIBRARY");
    const char *off = getenv("NVTXCORR_GPU");
    if (off && (!strcmp(off, "0") || !strcasecmp(off, "off") || !strcasecmp(off, "no") ||
                !strcasecmp(off, "false"))) {
        line("CUPTI", "off", "NVTXCORR_GPU=0: profile mode does not load CUPTI");
        return;
    }
    if (explicit && *explicit) {
        cupti_line(explicit, dlopen(explicit, RTLD_LAZY | RTLD_LOCAL));
        return;
    }
    const char *home = getenv("CUDA_HOME");
    const char *homes[] = {home && *home ? home : NULL, "/usr/local/cuda"};
    char soname[32];
    snprintf(soname, sizeof soname, "libcupti.so.%d", CUDA_VERSION / 1000);
    const char *const names[] = {"libcupti.so", soname};
    for (int i = 0; i < 2; i++) {
        if (homes[i] == NULL) continue;
        for (int sub = 0; sub < 2; sub++)
            for (int k = 0; k < 2; k++) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s/%s", homes[i],
                         sub ? "extras/CUPTI/lib64" : "lib64", names[k]);
                if (access(path, R_OK) != 0) continue;
                cupti_line(path, dlopen(path, RTLD_LAZY | RTLD_LOCAL));
                return;
            }
    }
    for (int k = 1; k >= 0; k--) {
        void *h = dlopen(names[k], RTLD_LAZY | RTLD_LOCAL);
        if (h) {
            char detail[256];
            snprintf(detail, sizeof detail, "%s loads from the loader's search path", names[k]);
            line("CUPTI", "ok", detail);
            dlclose(h);
            return;
        }
    }
    line("CUPTI", "not found",
         "no libcupti in $CUDA_HOME or /usr/local/cuda (lib64, extras/CUPTI/lib64) or the "
         "loader's path: profile mode will report no GPU time (NVTXCORR_CUPTI_LIBRARY names one)");
}

int nvtxcorr_doctor(int argc, char **argv)
{
    const char *library = NULL, *labels = NULL, *inline_rules = NULL, *tables = NULL;

    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--library") == 0)
            library = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--labels") == 0)
            labels = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--labels-inline") == 0)
            inline_rules = argv[++i];
        else if (strncmp(argv[i], "--labels=", 9) == 0)
            labels = argv[i] + 9;
        else if (strncmp(argv[i], "--labels-inline=", 16) == 0)
            inline_rules = argv[i] + 16;
        else if (i + 1 < argc && strcmp(argv[i], "--tables") == 0)
            tables = argv[++i];
        else {
            fprintf(stderr,
                    "usage: nvtxcorr doctor [--labels FILE|NAME] [--labels-inline RULES]\n");
            return 2;
        }
    }
    printf("nvtxcorr %s\n", NVTXCORR_VERSION_STRING);
    check_library(library);
    check_nvtx_tool();
    check_driver();
    check_labels(labels, inline_rules);
    check_tables(tables);
    check_cupti();
    return 0;
}
