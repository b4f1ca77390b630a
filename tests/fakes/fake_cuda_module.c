/*
 * Fake CUDA driver: modules, libraries, functions, kernels and their names.
 *
 * A fake "image" (for cuModuleLoadData and cuLibraryLoadData) is text: the line "FAKEIMAGE"
 * followed by one mangled kernel name per line.  Names are looked up by binary search, so large
 * images stay cheap.  Functions and kernels share struct fk_func (see fake_cuda.h).  Unloading
 * clears the magic tags but keeps the memory, so a stale handle reliably fails with
 * CUDA_ERROR_INVALID_HANDLE instead of reading freed memory.
 *
 * fakecuda_make_function() is a test hook that makes a module-less function from a bump arena:
 * scenario programs use it to create very many distinct kernels quickly.
 */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <stdlib.h>
#include <string.h>

#define FK_IMAGE_MAGIC "FAKEIMAGE\n"

struct fk_module {
    uint32_t magic;
    int library; /* loaded by cuLibraryLoadData: entries are kernels */
    size_t n;
    struct fk_func *entries; /* sorted by name: functions, or kernels for a library */
    struct fk_func *twins;   /* library only: the CUfunction of each kernel */
    char *text;              /* owns the names */
};

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Parses a fake image into a module; CUDA_ERROR_INVALID_IMAGE when it is not one. */
static CUresult fk_module_parse(const void *image, int library, struct fk_module **out)
{
    if (image == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (strncmp(image, FK_IMAGE_MAGIC, strlen(FK_IMAGE_MAGIC)) != 0)
        return CUDA_ERROR_INVALID_IMAGE;

    struct fk_module *m = calloc(1, sizeof(*m));
    char *text = strdup((const char *)image + strlen(FK_IMAGE_MAGIC));
    size_t cap = 1;
    for (const char *p = text ? text : ""; *p; p++)
        cap += *p == '\n';
    const char **names = calloc(cap, sizeof(*names));
    if (m == NULL || text == NULL || names == NULL) goto oom;

    size_t n = 0;
    for (char *save = NULL, *tok = strtok_r(text, "\n", &save); tok != NULL;
         tok = strtok_r(NULL, "\n", &save))
        names[n++] = tok;
    qsort(names, n, sizeof(*names), cmp_names);

    m->entries = calloc(n ? n : 1, sizeof(*m->entries));
    m->twins = library ? calloc(n ? n : 1, sizeof(*m->twins)) : NULL;
    if (m->entries == NULL || (library && m->twins == NULL)) goto oom;
    for (size_t i = 0; i < n; i++) {
        if (m->n > 0 && strcmp(m->entries[m->n - 1].name, names[i]) == 0)
            continue; /* a name listed twice is one kernel */
        struct fk_func *e = &m->entries[m->n];
        e->magic = FK_MAGIC_FUNC;
        e->kind = library ? FK_KIND_KERNEL : FK_KIND_FUNCTION;
        e->name = names[i];
        if (library) {
            struct fk_func *f = &m->twins[m->n];
            f->magic = FK_MAGIC_FUNC;
            f->kind = FK_KIND_FUNCTION;
            f->name = names[i];
            f->twin = e;
            e->twin = f;
        }
        m->n++;
    }
    free(names);
    m->magic = FK_MAGIC_MODULE;
    m->library = library;
    m->text = text;
    fk_keep(m);
    *out = m;
    return CUDA_SUCCESS;

oom:
    if (m != NULL) {
        free(m->entries);
        free(m->twins);
    }
    free(m);
    free(text);
    free(names);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static struct fk_func *fk_module_find(struct fk_module *m, const char *name)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, m->entries[mid].name);
        if (c == 0) return &m->entries[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static struct fk_module *fk_module_get(const void *h, int library)
{
    struct fk_module *m = (struct fk_module *)h;
    if (m == NULL || m->magic != FK_MAGIC_MODULE || m->library != library) return NULL;
    return m;
}

static void fk_module_kill(struct fk_module *m)
{
    for (size_t i = 0; i < m->n; i++) {
        m->entries[i].magic = 0;
        if (m->twins != NULL) m->twins[i].magic = 0;
    }
    m->magic = 0;
}

/* ---- modules --------------------------------------------------------------------------------- */

FK_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    if (!atomic_load(&fk_initialized)) return CUDA_ERROR_NOT_INITIALIZED;
    if (module == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_module *m;
    CUresult r = fk_module_parse(image, 0, &m);
    if (r == CUDA_SUCCESS) *module = (CUmodule)m;
    return r;
}

FK_API CUresult cuModuleUnload(CUmodule hmod)
{
    struct fk_module *m = fk_module_get(hmod, 0);
    if (m == NULL) return CUDA_ERROR_INVALID_HANDLE;
    fk_module_kill(m);
    return CUDA_SUCCESS;
}

FK_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    if (hfunc == NULL || name == NULL) return CUDA_ERROR_INVALID_VALUE;
    /* A library's module (cuLibraryGetModule) yields the kernels' functions. */
    struct fk_module *m = fk_module_get(hmod, 0);
    if (m == NULL) m = fk_module_get(hmod, 1);
    if (m == NULL) return CUDA_ERROR_INVALID_HANDLE;
    struct fk_func *e = fk_module_find(m, name);
    if (e == NULL) return CUDA_ERROR_NOT_FOUND;
    *hfunc = (CUfunction)(m->library ? e->twin : e);
    return CUDA_SUCCESS;
}

/* ---- libraries and kernels ------------------------------------------------------------------- */

FK_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                  void **jitOptionsValues, unsigned int numJitOptions,
                                  CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                  unsigned int numLibraryOptions)
{
    if (!atomic_load(&fk_initialized)) return CUDA_ERROR_NOT_INITIALIZED;
    if (library == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_module *m;
    CUresult r = fk_module_parse(code, 1, &m);
    if (r == CUDA_SUCCESS) *library = (CUlibrary)m;
    return r;
}

FK_API CUresult cuLibraryUnload(CUlibrary library)
{
    struct fk_module *m = fk_module_get(library, 1);
    if (m == NULL) return CUDA_ERROR_INVALID_HANDLE;
    fk_module_kill(m);
    return CUDA_SUCCESS;
}

FK_API CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    if (pKernel == NULL || name == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_module *m = fk_module_get(library, 1);
    if (m == NULL) return CUDA_ERROR_INVALID_HANDLE;
    struct fk_func *e = fk_module_find(m, name);
    if (e == NULL) return CUDA_ERROR_NOT_FOUND;
    *pKernel = (CUkernel)e;
    return CUDA_SUCCESS;
}

FK_API CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    if (pMod == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_module *m = fk_module_get(library, 1);
    if (m == NULL) return CUDA_ERROR_INVALID_HANDLE;
    *pMod = (CUmodule)m;
    return CUDA_SUCCESS;
}

FK_API CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    if (pFunc == NULL) return CUDA_ERROR_INVALID_VALUE;
    struct fk_func *k = (struct fk_func *)kernel;
    if (!fk_func_valid(k) || k->kind != FK_KIND_KERNEL) return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = (CUfunction)k->twin;
    return CUDA_SUCCESS;
}

/*
 * Both name queries accept a function or a kernel, as the real driver does.  They appeared in
 * CUDA 12.3: with FAKECUDA_DRIVER_VERSION below that they act as if absent.
 */
static CUresult fk_get_name(const char **name, const void *h)
{
    if (!fk_version_ok(12030)) return CUDA_ERROR_NOT_FOUND;
    if (name == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (!fk_func_valid(h)) return CUDA_ERROR_INVALID_HANDLE;
    *name = ((const struct fk_func *)h)->name;
    return CUDA_SUCCESS;
}

FK_API CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    return fk_get_name(name, hfunc);
}

FK_API CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    return fk_get_name(name, hfunc);
}

/* ---- test hook ------------------------------------------------------------------------------- */

#define FK_ARENA_FUNCS 4096
#define FK_ARENA_CHARS 65536

static pthread_mutex_t fk_arena_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fk_func *fk_arena_funcs;
static size_t fk_arena_funcs_left;
static char *fk_arena_chars;
static size_t fk_arena_chars_left;

/* Makes a module-less CUfunction named `mangled`.  Returns a CUresult value. */
FK_API int fakecuda_make_function(const char *mangled, CUfunction *out)
{
    if (mangled == NULL || out == NULL) return CUDA_ERROR_INVALID_VALUE;
    size_t len = strlen(mangled) + 1;
    pthread_mutex_lock(&fk_arena_lock);
    if (fk_arena_funcs_left == 0) {
        fk_arena_funcs = calloc(FK_ARENA_FUNCS, sizeof(*fk_arena_funcs));
        fk_arena_funcs_left = fk_arena_funcs ? FK_ARENA_FUNCS : 0;
        fk_keep(fk_arena_funcs);
    }
    if (fk_arena_chars_left < len) {
        size_t size = len > FK_ARENA_CHARS ? len : FK_ARENA_CHARS;
        fk_arena_chars = malloc(size);
        fk_arena_chars_left = fk_arena_chars ? size : 0;
        fk_keep(fk_arena_chars);
    }
    if (fk_arena_funcs_left == 0 || fk_arena_chars_left < len) {
        pthread_mutex_unlock(&fk_arena_lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct fk_func *f = fk_arena_funcs++;
    fk_arena_funcs_left--;
    char *name = fk_arena_chars;
    fk_arena_chars += len;
    fk_arena_chars_left -= len;
    pthread_mutex_unlock(&fk_arena_lock);

    memcpy(name, mangled, len);
    f->kind = FK_KIND_FUNCTION;
    f->name = name;
    f->magic = FK_MAGIC_FUNC;
    *out = (CUfunction)f;
    return CUDA_SUCCESS;
}
