/*
 * Shared helpers of the fakes' self-test (selftest.c, selftest_graph.c, selftest_runtime.c):
 * check counting, access to the fake driver loaded with dlopen, reading the files the fakes
 * write, and re-running this program as a child with a changed environment (the fakes read
 * their environment once, when loaded).
 */
#ifndef NVTXCORR_SELFTEST_H
#define NVTXCORR_SELFTEST_H

#define __CUDA_API_VERSION_INTERNAL 1 /* declares every ABI symbol, _ptsz and old versions */
#include <cuda.h>

#include <stdio.h>

extern int st_passed, st_failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            st_passed++;                                                                           \
        } else {                                                                                   \
            st_failed++;                                                                           \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#define CHECK_RC(call, want)                                                                       \
    do {                                                                                           \
        int rc_ = (int)(call);                                                                     \
        CHECK(rc_ == (int)(want), "%s returned %d, expected %d", #call, rc_, (int)(want));         \
    } while (0)

/* A symbol of lib (dlopen'ed as lib_name); aborts the test when missing. */
void *st_sym(void *lib, const char *lib_name, const char *name);

/* A symbol of the fake driver (dlopen'ed by main); aborts the test when missing. */
void *drv(const char *name);
#define DRV(name) ((__typeof__(&name))drv(#name))

unsigned long long count(const char *name);

/* Runs this program again as `self <mode>` with NAME=VALUE pairs added; returns its exit code. */
int run_child(const char *mode, const char *const *env);

/* Is (symbol, version, flags) a request of the real CUDA 13.0 runtime? ("" for the probe) */
int in_reference(const char *symbol, int version, int flags);

/* Reads up to size - 1 bytes of path into buf, NUL-terminated; the length, or -1 if it cannot
 * be opened. */
int read_file(const char *path, char *buf, size_t size);

/* Directory of the fake libraries (where libcuda.so.1 was found). */
const char *fakes_dir(void);

/* Shared state: the dlopen'ed driver, argv (for re-running), functions made by test_modules. */
extern void *st_libcuda;
extern char **st_argv;
extern CUfunction st_fa, st_fb;
extern CUkernel st_kx;

/* The parts of the test, in the order main runs them. */
void test_procaddr(void);
void test_modules(void);
void test_launches(void);
void test_capture(void);
void test_children(void);

/* Child modes and checks of selftest_runtime.c. */
void test_runtime(void);
void test_recorder(void);
int child_runtime_trace(void);
int child_nvtx(void);

#endif /* NVTXCORR_SELFTEST_H */
