/*
 * Fake CUDA runtime: what nvcc-generated host code calls.  Static constructors register each
 * translation unit's fat binary and its kernels (host stub address -> mangled device name)
 * before main and before any driver exists, so driver objects are made lazily: the first time a
 * kernel of a fat binary is needed, the fat binary becomes a fake image ("FAKEIMAGE\n" + its
 * kernel names) loaded with cuLibraryLoadData, and kernels come from cuLibraryGetKernel, as
 * with the real CUDA 12+ runtime.  On a driver without libraries (FAKECUDA_DRIVER_VERSION below
 * 12000) it falls back to cuModuleLoadData / cuModuleGetFunction.
 *
 * Lookups by host stub happen on every cudaLaunchKernel, so the map is an open-addressing hash
 * table that readers probe without a lock: entries are published with release stores and a
 * grown table replaces the old one atomically (the old one is leaked: registration is rare).
 */
#define _GNU_SOURCE
#include "fake_cudart.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RT_FATBIN_MAGIC 0x46415442u

struct rt_kernel;

struct rt_fatbin {
    uint32_t magic;
    struct rt_kernel *kernels; /* registration order, newest first */
    size_t nkernels;
    int loaded; /* tried to load into the driver (result in load_error) */
    cudaError_t load_error;
    CUlibrary lib; /* CUDA 12+ drivers */
    CUmodule mod;  /* older drivers */
};

struct rt_kernel {
    const void
        *_Atomic host; /* host stub address: what programs launch by; NULL once unregistered */
    const char *name;  /* mangled device name, in the program's read-only data */
    struct rt_fatbin *fb;
    struct rt_kernel *next;     /* in its fat binary */
    _Atomic(CUfunction) handle; /* CUkernel (cast) or CUfunction, made on first use */
};

struct rt_table {
    size_t mask;
    _Atomic(struct rt_kernel *) *slots;
};

static pthread_mutex_t rt_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct rt_table *) rt_table;
static size_t rt_table_used;

static size_t rt_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static struct rt_kernel *rt_lookup(const void *host)
{
    struct rt_table *t = atomic_load_explicit(&rt_table, memory_order_acquire);
    if (t == NULL || host == NULL) return NULL;
    for (size_t i = rt_hash(host) & t->mask;; i = (i + 1) & t->mask) {
        struct rt_kernel *k = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (k == NULL || atomic_load_explicit(&k->host, memory_order_acquire) == host) return k;
    }
}

static void rt_table_put(struct rt_table *t, struct rt_kernel *k)
{
    size_t i = rt_hash(k->host) & t->mask;
    while (atomic_load_explicit(&t->slots[i], memory_order_relaxed) != NULL)
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slots[i], k, memory_order_release);
}

/* Adds a kernel; lock held.  Keeps the load factor under 1/2 so probes stay short. */
static int rt_table_insert(struct rt_kernel *k)
{
    struct rt_table *t = atomic_load_explicit(&rt_table, memory_order_relaxed);
    if (t == NULL || 2 * (rt_table_used + 1) > t->mask + 1) {
        size_t size = t ? 2 * (t->mask + 1) : 256;
        struct rt_table *n = malloc(sizeof(*n));
        if (n == NULL || (n->slots = calloc(size, sizeof(*n->slots))) == NULL) {
            free(n);
            return -1;
        }
        n->mask = size - 1;
        for (size_t i = 0; t != NULL && i <= t->mask; i++) {
            struct rt_kernel *old = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
            if (old != NULL && atomic_load_explicit(&old->host, memory_order_relaxed) != NULL)
                rt_table_put(n, old);
        }
        atomic_store_explicit(&rt_table, n, memory_order_release);
        t = n;
    }
    rt_table_put(t, k);
    rt_table_used++;
    return 0;
}

/* ---- registration (called from nvcc-generated static constructors) -------------------------- */

RT_API void **__cudaRegisterFatBinary(void *fatCubin)
{
    /* The contents are real device code the fake cannot use; only the handle matters. */
    struct rt_fatbin *fb = calloc(1, sizeof(*fb));
    if (fb != NULL) fb->magic = RT_FATBIN_MAGIC;
    return (void **)fb;
}

RT_API void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) {}

RT_API void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    /*
     * Called from the registering object's atexit handler: at process exit, or when a plugin
     * is dlclosed.  As the real runtime does, the fat binary's kernels are forgotten (their host
     * stubs and names lived in that object, and another object may be loaded at the same
     * address) and its module or library is unloaded from the driver.  Kernel records stay
     * allocated, with no host stub, because lock-free lookups may still be reading them.
     */
    struct rt_fatbin *fb = (struct rt_fatbin *)fatCubinHandle;
    if (fb == NULL || fb->magic != RT_FATBIN_MAGIC) return;
    pthread_mutex_lock(&rt_reg_lock);
    fb->magic = 0;
    for (struct rt_kernel *k = fb->kernels; k != NULL; k = k->next)
        atomic_store_explicit(&k->host, NULL, memory_order_release);
    if (fb->lib != NULL && rt_drv.libraryUnload != NULL) rt_drv.libraryUnload(fb->lib);
    if (fb->mod != NULL && rt_drv.moduleUnload != NULL) rt_drv.moduleUnload(fb->mod);
    fb->lib = NULL;
    fb->mod = NULL;
    pthread_mutex_unlock(&rt_reg_lock);
}

RT_API void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                   const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                   dim3 *bDim, dim3 *gDim, int *wSize)
{
    struct rt_fatbin *fb = (struct rt_fatbin *)fatCubinHandle;
    if (fb == NULL || fb->magic != RT_FATBIN_MAGIC || hostFun == NULL || deviceFun == NULL) return;
    pthread_mutex_lock(&rt_reg_lock);
    if (rt_lookup(hostFun) == NULL) {
        struct rt_kernel *k = calloc(1, sizeof(*k));
        if (k != NULL) {
            k->host = hostFun;
            k->name = deviceFun;
            k->fb = fb;
            if (rt_table_insert(k) == 0) {
                k->next = fb->kernels;
                fb->kernels = k;
                fb->nkernels++;
            } else {
                free(k);
            }
        }
    }
    pthread_mutex_unlock(&rt_reg_lock);
}

RT_API void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global)
{
    /* Device variables have no fake counterpart; programs must not rely on their contents. */
}

RT_API void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                     char *deviceAddress, const char *deviceName, int ext,
                                     size_t size, int constant, int global)
{
}

RT_API char __cudaInitModule(void **fatCubinHandle)
{
    return 1;
}

/* ---- kernels --------------------------------------------------------------------------------- */

/* Loads a fat binary's kernels into the driver; rt_reg_lock held, driver initialised. */
static cudaError_t rt_fatbin_load(struct rt_fatbin *fb)
{
    if (fb->loaded) return fb->load_error;
    fb->loaded = 1;
    size_t len = sizeof("FAKEIMAGE\n");
    for (struct rt_kernel *k = fb->kernels; k != NULL; k = k->next)
        len += strlen(k->name) + 1;
    char *image = malloc(len), *p = image;
    if (image == NULL) return fb->load_error = cudaErrorMemoryAllocation;
    p = stpcpy(p, "FAKEIMAGE\n");
    for (struct rt_kernel *k = fb->kernels; k != NULL; k = k->next) {
        p = stpcpy(p, k->name);
        *p++ = '\n';
    }
    *p = '\0';
    CUresult r;
    if (rt_drv.libraryLoadData != NULL && rt_drv.libraryGetKernel != NULL)
        r = rt_drv.libraryLoadData(&fb->lib, image, NULL, NULL, 0, NULL, NULL, 0);
    else if (rt_drv.moduleLoadData != NULL && rt_drv.moduleGetFunction != NULL)
        r = rt_drv.moduleLoadData(&fb->mod, image);
    else
        r = CUDA_ERROR_NOT_SUPPORTED;
    free(image);
    return fb->load_error = r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidKernelImage;
}

/* The handle the runtime launches a host stub with; made on first use. */
cudaError_t rt_kernel_for(const void *hostFun, CUfunction *out)
{
    struct rt_kernel *k = rt_lookup(hostFun);
    if (RT_UNLIKELY(k == NULL)) return rt_ret(cudaErrorInvalidDeviceFunction);
    CUfunction h = atomic_load_explicit(&k->handle, memory_order_acquire);
    if (RT_LIKELY(h != NULL)) {
        *out = h;
        return cudaSuccess;
    }
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    pthread_mutex_lock(&rt_reg_lock);
    e = rt_fatbin_load(k->fb);
    h = atomic_load_explicit(&k->handle, memory_order_relaxed);
    if (e == cudaSuccess && h == NULL) {
        CUresult r;
        if (k->fb->lib != NULL) {
            CUkernel kern = NULL;
            r = rt_drv.libraryGetKernel(&kern, k->fb->lib, k->name);
            h = (CUfunction)kern; /* the driver takes a CUkernel wherever a CUfunction goes */
        } else {
            r = rt_drv.moduleGetFunction(&h, k->fb->mod, k->name);
        }
        e = r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidDeviceFunction;
        if (e == cudaSuccess) atomic_store_explicit(&k->handle, h, memory_order_release);
    }
    pthread_mutex_unlock(&rt_reg_lock);
    if (e != cudaSuccess) return rt_ret(e);
    *out = h;
    return cudaSuccess;
}

/* The CUfunction of a host stub (cudaGetFuncBySymbol): cuKernelGetFunction of its kernel. */
cudaError_t rt_function_for(const void *hostFun, CUfunction *out)
{
    CUfunction h;
    cudaError_t e = rt_kernel_for(hostFun, &h);
    if (e != cudaSuccess) return e;
    if (rt_lookup(hostFun)->fb->lib == NULL) {
        *out = h; /* module path: already a function */
        return cudaSuccess;
    }
    return RT_CALL(kernelGetFunction, out, (CUkernel)h);
}

RT_API cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (kernel == NULL) return rt_ret(cudaErrorInvalidValue);
    CUfunction h;
    cudaError_t e = rt_kernel_for(hostFun, &h);
    if (e == cudaSuccess) *kernel = (cudaKernel_t)h;
    return e;
}

RT_API cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

RT_API cudaError_t cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    if (functionPtr == NULL) return rt_ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = rt_function_for(symbolPtr, &f);
    if (e == cudaSuccess) *functionPtr = (cudaFunction_t)f;
    return e;
}

RT_API cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    if (name == NULL) return rt_ret(cudaErrorInvalidValue);
    struct rt_kernel *k = rt_lookup(func);
    if (k == NULL) return rt_ret(cudaErrorInvalidDeviceFunction);
    *name = k->name; /* the mangled name, as the CUDA 12+ runtime returns */
    return cudaSuccess;
}

/* ---- <<<>>> configuration stack -------------------------------------------------------------- */

RT_API unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                            struct CUstream_st *stream)
{
    /* A stack, because a kernel argument may itself contain a <<<>>> launch. */
    struct rt_thread *t = rt_self();
    if (t->nconfigs == RT_MAX_CONFIGS) return 1;
    struct rt_config *c = &t->configs[t->nconfigs++];
    c->grid = gridDim;
    c->block = blockDim;
    c->shmem = sharedMem;
    c->stream = (cudaStream_t)stream;
    return 0;
}

RT_API cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                              void *stream)
{
    struct rt_thread *t = rt_self();
    if (t->nconfigs == 0) return rt_ret(cudaErrorMissingConfiguration);
    struct rt_config *c = &t->configs[--t->nconfigs];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shmem;
    *(cudaStream_t *)stream = c->stream;
    return cudaSuccess;
}
