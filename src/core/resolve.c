/* Symbol resolution: the real-function slots and the one resolver for real symbols (the
 * dlsym override itself is in hooks/dlsym.c; which hook a resolver hands out, hooks/claim.c).
 *
 * Programs reach the driver through direct symbols, dlsym on a libcuda handle (Triton, dlsym.c),
 * cuGetProcAddress (cudart, cuBLAS, PyTorch: procaddr.c) and cudaGetDriverEntryPoint. The
 * first is covered by exporting the hooks. Every path follows the same rule: a real function that
 * arrives for a hooked symbol is stored in that symbol's slot (first one wins) and the caller gets
 * our hook, which calls exactly that function. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attributes.h"
#include "log.h"
#include "resolve.h"
#include "routes.h"
typedef void *(*dlsym_fn)(void *, const char *);

/* Used by the assembly entry, hence not static. */
dlsym_fn nvtxcorr_real_dlsym_resolve(void);

__attribute__((visibility("hidden"))) dlsym_fn _Atomic nvtxcorr_real_dlsym_ptr;

/* glibc's dlsym: GLIBC_2.34 since dlsym moved into libc, else the architecture's base
 * version (dlvsym is not overridden, so this reaches glibc). */
NVTXCORR_NO_SANITIZE __attribute__((visibility("hidden"))) dlsym_fn
nvtxcorr_real_dlsym_resolve(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17",
                                           "GLIBC_2.3",  "GLIBC_2.1",   "GLIBC_2.0"};
    dlsym_fn f = atomic_load_explicit(&nvtxcorr_real_dlsym_ptr, memory_order_acquire);
    for (size_t i = 0; f == NULL && i < sizeof versions / sizeof *versions; i++)
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (f) atomic_store_explicit(&nvtxcorr_real_dlsym_ptr, f, memory_order_release);
    return f;
}

NVTXCORR_NO_SANITIZE void *nvtxcorr_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = atomic_load_explicit(&nvtxcorr_real_dlsym_ptr, memory_order_acquire);
    if (NVTXCORR_UNLIKELY(f == NULL) && (f = nvtxcorr_real_dlsym_resolve()) == NULL) return NULL;
    return f(handle, name);
}

const char *const nvtxcorr_slot_symbol[NVTXCORR_SLOT_COUNT] = {
#define DRIVER(kind, sym, ...) #sym,
#define RUNTIME DRIVER
#include "hooks.def"
};

NVTXCORR_NO_SANITIZE int nvtxcorr_slot_of_symbol(const char *name)
{
    /* Every hooked symbol starts with "cu" or "__cu": reject the rest of dlsym's traffic
     * (every program's) before comparing strings. */
    if (name == NULL || !((name[0] == 'c' && name[1] == 'u') || name[0] == '_')) return -1;
    for (int i = 0; i < NVTXCORR_SLOT_COUNT; i++)
        if (!strcmp(nvtxcorr_slot_symbol[i], name)) return i;
    return -1;
}

struct link_map *nvtxcorr_object_of(const void *addr)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (addr == NULL || !dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP)) return NULL;
    return map;
}

static struct link_map *self_map(void)
{
    static struct link_map *_Atomic self;
    struct link_map *s = atomic_load_explicit(&self, memory_order_relaxed);
    if (s == NULL) {
        s = nvtxcorr_object_of((const void *)nvtxcorr_real_dlsym);
        atomic_store_explicit(&self, s, memory_order_relaxed);
    }
    return s;
}

static int is_ours(const void *addr)
{
    return addr != NULL && nvtxcorr_object_of(addr) == self_map();
}

/* A slot keeps a raw pointer into the library that defines it; a program that dlcloses
 * libcuda after a probe must not leave it dangling. RTLD_NODELETE pins that library. */
void nvtxcorr_keep_loaded(const void *fn)
{
    struct link_map *m = nvtxcorr_object_of(fn);
    void *h = m ? dlopen(m->l_name && m->l_name[0] ? m->l_name : NULL,
                         RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE)
                : NULL;
    if (h) dlclose(h);
}

/* Looks `name` up in one loaded object only (not its dependencies): dlsym on a handle
 * searches the object's whole dependency scope, so a hit elsewhere is rejected. */
void *nvtxcorr_lookup_in(struct link_map *m, const char *name)
{
    void *h = dlopen(m->l_name && m->l_name[0] ? m->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL) return NULL;
    void *p = nvtxcorr_real_dlsym(h, name);
    dlclose(h);
    return p && nvtxcorr_object_of(p) == m ? p : NULL;
}

/* The one resolver for real symbols. RTLD_NEXT from here finds libraries in the global
 * scope. A libcudart that PyTorch-style loading put in a local scope (a dependency of a
 * library dlopen'ed RTLD_LOCAL) is invisible to RTLD_NEXT, so every object loaded after this
 * library is then searched in load order. (Not the ones before: a wrapper in the main
 * program that calls RTLD_NEXT would call itself through us.) */
void *nvtxcorr_find_real(const char *name)
{
    void *p = nvtxcorr_real_dlsym(RTLD_NEXT, name);
    if (p && !is_ours(p)) return p;
    for (struct link_map *m = self_map(); m && (m = m->l_next) != NULL;) {
        p = nvtxcorr_lookup_in(m, name);
        if (p && !is_ours(p)) return p;
    }
    return NULL;
}

void *nvtxcorr_resolve_slot(nvtxcorr_slot_id_t id)
{
    void *p = nvtxcorr_find_real(nvtxcorr_slot_symbol[id]);
    if (p == NULL) {
        nvtxcorr_log(NVTXCORR_LOG_ERROR, "%s: real function not found; call fails",
                     nvtxcorr_slot_symbol[id]);
        return NULL;
    }
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&nvtxcorr_real_fn[id], &expected, p)) {
        nvtxcorr_keep_loaded(p);
        nvtxcorr_routes_refresh(); /* a stub's route may now be its real function */
    } else {
        p = expected;
    }
    return p;
}

/* Two copies of this library in one process (a pip-installed one and a packaged one, both
 * in LD_PRELOAD, or one preloaded and another dlopened) both hooked every launch: the first
 * copy's hook found the second's as its "real" function, so each launch got two nested
 * ranges, and profile mode wrote two summaries. One copy must stand aside. The marker is an
 * exported symbol that only nvtxcorr defines, looked up with dlsym(RTLD_DEFAULT): the loader
 * answers with the first definition in the global scope, the same order in which the
 * program's own calls bind to a copy's hooks, so the copy that sees the calls first is the
 * one that finds itself, every copy gets the same answer without talking to the others, and
 * it holds in a forked child. An environment variable would leak into exec'd children (whose
 * copies start afresh), and a shared-memory name keyed by pid needs a file, cleaned up, and
 * lets a race pick the winner. A copy loaded RTLD_LOCAL finds the global one first (then it
 * stands aside), or none (then it is alone there). Copies older than the marker are not seen. */
NVTXCORR_EXPORT const char nvtxcorr_copy_marker[] = "nvtxcorr";

static const char *path_of(const void *addr)
{
    Dl_info info;
    return dladdr(addr, &info) && info.dli_fname ? info.dli_fname : "?";
}

const char *nvtxcorr_first_copy(void)
{
    /* 0: not asked yet; 1: this copy is the first (or the only one); 2: another is. */
    static _Atomic int state;
    static const void *_Atomic first;
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == 0) {
        const void *m = nvtxcorr_real_dlsym(RTLD_DEFAULT, "nvtxcorr_copy_marker");
        /* By object, not address: the name nvtxcorr_copy_marker, exported, would bind to the
         * first copy's definition here too. */
        s = m != NULL && nvtxcorr_object_of(m) != self_map() ? 2 : 1;
        atomic_store_explicit(&first, m, memory_order_relaxed);
        atomic_store_explicit(&state, s, memory_order_release);
    }
    return s == 2 ? path_of(atomic_load_explicit(&first, memory_order_relaxed)) : NULL;
}

const char *nvtxcorr_this_copy(void)
{
    return path_of((const void *)nvtxcorr_this_copy); /* hidden: always this copy's */
}

void *nvtxcorr_first_copy_lookup(const char *name)
{
    if (nvtxcorr_first_copy() == NULL) return NULL;
    struct link_map *m =
        nvtxcorr_object_of(nvtxcorr_real_dlsym(RTLD_DEFAULT, "nvtxcorr_copy_marker"));
    return m ? nvtxcorr_lookup_in(m, name) : NULL;
}

void nvtxcorr_describe_paths(char *buf, size_t size)
{
    Dl_info drv = {0}, rt = {0};
    void *d = nvtxcorr_find_real("cuGetProcAddress_v2");
    void *r = nvtxcorr_find_real("cudaGetDriverEntryPoint");
    if (d) dladdr(d, &drv);
    if (r) dladdr(r, &rt);
    snprintf(buf, size,
             "hooks: driver symbols, dlsym, cuGetProcAddress(_v2), runtime symbols, "
             "cudaGetDriverEntryPoint(ByVersion); libcuda: %s; libcudart: %s",
             drv.dli_fname ? drv.dli_fname : "not loaded yet",
             rt.dli_fname ? rt.dli_fname : "not loaded (static runtime or none)");
}
