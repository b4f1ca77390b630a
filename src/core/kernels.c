/* Kernel records: the slow path taken once per distinct function handle. It finds the
 * kernel's raw name, turns it into the three matchable names, asks the label table, and
 * caches the handle's record (label, raw and base names: record.h) under the handle, so
 * later launches of that handle, in every mode, only do a lock-free map lookup.
 *
 * Names come from the driver (cuFuncGetName / cuKernelGetName, CUDA 12.3+) where it has them;
 * on older drivers from the names the program itself passed to cuModuleGetFunction,
 * cuLibraryGetKernel and cuKernelGetFunction, which the hooks track. Runtime launches by host
 * stub (cudaLaunchKernel) are named through cudaFuncGetName or cudaGetFuncBySymbol. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chain_table.h"
#include "cuda_calls.h"
#include "emit.h"
#include "fork.h"
#include "graphs.h"
#include "kernels.h"
#include "labels/hash.h"
#include "labels/labels.h"
#include "labels/names.h"
#include "map.h"
#include "record.h"
#include "slowstack.h"
#include "state.h"
/* Never NULL: the entry stubs read their tables untested (map.h, NVTXCORR_MAP_EMPTY). */
nvtxcorr_map_t nvtxcorr_function_labels = NVTXCORR_MAP_EMPTY;
nvtxcorr_map_t nvtxcorr_host_labels = NVTXCORR_MAP_EMPTY;
nvtxcorr_map_t nvtxcorr_graph_labels = NVTXCORR_MAP_EMPTY;

typedef CUresult (*get_name_fn)(const char **, void *);

static nvtxcorr_map_t tracked_names; /* CUfunction / CUkernel -> strdup'ed name */
static nvtxcorr_map_t aliases;       /* CUfunction -> the CUkernel it came from */

/* cuFuncGetName or cuKernelGetName (CUDA 12.3+ drivers), or NULL. */
static get_name_fn driver_name_fn(int kernel)
{
    return (get_name_fn)nvtxcorr_cuda_fn(kernel ? NVTXCORR_CUDA_cuKernelGetName
                                                : NVTXCORR_CUDA_cuFuncGetName);
}

void nvtxcorr_track_name(const void *handle, const char *name)
{
    if (driver_name_fn(0) != NULL) return; /* the driver names every handle itself */
    const char *old = nvtxcorr_map_get(&tracked_names, handle);
    if (old && !strcmp(old, name)) return;
    char *copy = strdup(name);
    if (copy)
        nvtxcorr_map_put(&tracked_names, handle, copy); /* a replaced name is kept: a reader
                                                           may hold it */
    if (old) nvtxcorr_map_put(&nvtxcorr_function_labels, handle, NULL);
}

void nvtxcorr_track_alias(const void *function, const void *kernel)
{
    if (driver_name_fn(0) == NULL) nvtxcorr_map_put(&aliases, function, (void *)kernel);
}

/* A module or library was unloaded: its CUfunction and CUkernel handles, and the host stubs
 * of a plugin that registered it (dlclosed, its fat binary unregistered), may come back at
 * the same addresses for other kernels. Both caches are dropped; live handles are simply
 * looked up again (and find their interned record, profile mode's site with it). */
void nvtxcorr_forget_functions(void)
{
    nvtxcorr_map_clear_values(&nvtxcorr_function_labels);
    nvtxcorr_map_clear_values(&nvtxcorr_host_labels);
}

static int copy_name(const char *name, char *buf, size_t size)
{
    if (name == NULL) return -1;
    snprintf(buf, size, "%s", name);
    return 0;
}

int nvtxcorr_function_name(const void *f, char *buf, size_t size)
{
    const char *name = NULL;
    get_name_fn fn = driver_name_fn(0), kn = driver_name_fn(1);
    /* A CUkernel may be launched as a CUfunction: ask for both kinds of handle. */
    if (fn && fn(&name, (void *)f) == CUDA_SUCCESS && name) return copy_name(name, buf, size);
    if (kn && kn(&name, (void *)f) == CUDA_SUCCESS && name) return copy_name(name, buf, size);
    if ((name = nvtxcorr_map_get(&tracked_names, f)) != NULL) return copy_name(name, buf, size);
    const void *k = nvtxcorr_map_get(&aliases, f);
    if (k && (name = nvtxcorr_map_get(&tracked_names, k)) != NULL)
        return copy_name(name, buf, size);
    return -1;
}

/* The runtime names a host stub (the address of the __global__ function's host side). */
static int host_name_unguarded(const void *func, char *buf, size_t size)
{
    typedef cudaError_t (*func_get_name_fn)(const char **, const void *);
    typedef cudaError_t (*func_by_symbol_fn)(cudaFunction_t *, const void *);
    func_get_name_fn get_name = (func_get_name_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaFuncGetName);
    const char *name = NULL;
    if (get_name && get_name(&name, func) == cudaSuccess && name) return copy_name(name, buf, size);
    func_by_symbol_fn by_symbol =
        (func_by_symbol_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaGetFuncBySymbol);
    cudaFunction_t f = NULL;
    if (by_symbol && by_symbol(&f, func) == cudaSuccess && f &&
        nvtxcorr_function_name(f, buf, size) == 0)
        return 0;
    Dl_info info; /* an exported stub names itself */
    if (dladdr(func, &info) && info.dli_sname && info.dli_saddr == func)
        return copy_name(info.dli_sname, buf, size);
    return -1;
}

/* A failing naming call sets the runtime's per-thread last error, which the program would
 * then read from cudaGetLastError after a successful launch (PyTorch checks after every
 * one). An error that was not pending before is consumed again. */
int nvtxcorr_host_name(const void *func, char *buf, size_t size)
{
    typedef cudaError_t (*last_error_fn)(void);
    last_error_fn peek = (last_error_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaPeekAtLastError);
    last_error_fn get = (last_error_fn)nvtxcorr_cuda_fn(NVTXCORR_CUDA_cudaGetLastError);
    cudaError_t before = peek ? peek() : cudaErrorUnknown;
    int r = host_name_unguarded(func, buf, size);
    if (before == cudaSuccess && get && peek() != cudaSuccess) get();
    return r;
}

static pthread_mutex_t match_lock = PTHREAD_MUTEX_INITIALIZER;

void nvtxcorr_match_lock(void)
{
    pthread_mutex_lock(&match_lock);
}

void nvtxcorr_match_unlock(void)
{
    pthread_mutex_unlock(&match_lock);
}

void nvtxcorr_match_fork(nvtxcorr_fork_t phase)
{
    nvtxcorr_fork_mutex(&match_lock, phase);
}

const nvtxcorr_label_t *nvtxcorr_label_for_name(const char *mangled)
{
    char storage[3 * 1024];
    nvtxcorr_kernel_names_t names;
    nvtxcorr_label_result_t res;
    nvtxcorr_names_from_mangled(mangled, &names, storage, sizeof storage);
    nvtxcorr_match_lock();
    nvtxcorr_labels_match_kernel(nvtxcorr_labels_in_use, &names, &res);
    nvtxcorr_match_unlock();
    return nvtxcorr_label_make(res.label, res.has_color, res.color, res.category, res.skip);
}

/* Kernel records interned by (raw name, label), in a growable chained table (chain_table.h);
 * guarded by match_lock, which every caller holds already. Never freed: a reader may hold one,
 * and a reloaded module's kernels find theirs again. */
typedef struct record_entry {
    nvtxcorr_record_t record;
    nvtxcorr_chain_link_t link;
    const nvtxcorr_label_t *interned; /* the label copied (emit.c's, unique per label) */
} record_entry_t;

static nvtxcorr_chain_table_t records;

/* Caller holds match_lock. NULL when out of memory (or no label). */
static nvtxcorr_record_t *record_intern(const char *raw, const char *base,
                                        const nvtxcorr_label_t *l)
{
    if (l == NULL) return NULL;
    uint64_t h = nvtxcorr_hash_str(raw) ^ ((uint64_t)(uintptr_t)l * 0x9E3779B97F4A7C15ull);
    if (nvtxcorr_chain_reserve(&records) != 0) return NULL;
    record_entry_t *e;
    for (nvtxcorr_chain_link_t *k = nvtxcorr_chain_first(&records, h); k; k = k->next) {
        e = (record_entry_t *)((char *)k - offsetof(record_entry_t, link));
        if (k->hash == h && e->interned == l && !strcmp(e->record.raw, raw)) return &e->record;
    }
    size_t nr = strlen(raw) + 1, nb = strlen(base) + 1;
    if ((e = calloc(1, sizeof *e + nr + nb)) == NULL) return NULL;
    char *names = (char *)(e + 1);
    memcpy(names, raw, nr);
    memcpy(names + nr, base, nb);
    e->record.label = *l; /* a copy: the attributes the launch pushes are the record's own */
    e->record.raw = names;
    e->record.base = names + nr;
    e->interned = l;
    nvtxcorr_chain_insert(&records, &e->link, h);
    return &e->record;
}

/* The record of a kernel by raw name: names, label-table match, interned label and record. */
static nvtxcorr_record_t *record_for_name(const char *mangled)
{
    char storage[3 * 1024];
    nvtxcorr_kernel_names_t names;
    nvtxcorr_label_result_t res;
    nvtxcorr_names_from_mangled(mangled, &names, storage, sizeof storage);
    nvtxcorr_match_lock();
    nvtxcorr_labels_match_kernel(nvtxcorr_labels_in_use, &names, &res);
    /* Under match_lock: emit.c's lock comes after it in the fork order (fork.h). */
    const nvtxcorr_label_t *l =
        nvtxcorr_label_make(res.label, res.has_color, res.color, res.category, res.skip);
    nvtxcorr_record_t *r = record_intern(mangled, names.function, l);
    nvtxcorr_match_unlock();
    return r;
}

typedef struct lookup_job {
    const void *key;
    int host; /* a runtime host stub, else a CUfunction / CUkernel */
    const void *value;
} lookup_job_t;

static void lookup(void *arg)
{
    lookup_job_t *job = arg;
    char name[1024];
    const void *key = job->key;
    int named = key && (job->host ? nvtxcorr_host_name(key, name, sizeof name)
                                  : nvtxcorr_function_name(key, name, sizeof name)) == 0;
    void *v = nvtxcorr_record_value(record_for_name(named ? name : NVTXCORR_UNKNOWN_KERNEL));
    if (key && v)
        nvtxcorr_map_put(job->host ? &nvtxcorr_host_labels : &nvtxcorr_function_labels, key, v);
    job->value = v;
}

/* Runs on the slow-path stack: naming, demangling and matching are deep. */
static const void *lookup_on_slow_stack(const void *key, int host)
{
    lookup_job_t job = {key, host, NULL};
    nvtxcorr_on_slow_stack(lookup, &job);
    return job.value;
}

const void *nvtxcorr_function_label_slow(const void *f)
{
    return lookup_on_slow_stack(f, 0);
}

const void *nvtxcorr_host_label_slow(const void *func)
{
    return lookup_on_slow_stack(func, 1);
}
