/*
 * Fake CUDA driver: the launch entry points, each counted under its own exported name.
 *
 * This is the hot path of the overhead benchmark (tens of millions of calls), so a launch that
 * runs does no locking and no allocation: it validates its arguments, looks at the stream's
 * capture pointer, and bumps a counter in the calling thread's own block.  Only launches into a
 * capturing stream, or into the legacy stream while a capture is in progress, take the slow path
 * in fake_cuda_capture.c.
 *
 * FAKECUDA_FAIL_LAUNCH=<n> makes every launch return n before anything else is checked, so
 * tests can watch an error travel back through the profiler's wrappers.
 */
#include <string.h>

#include "fake_cuda.h"

/* FAKECUDA_ARGS's line for a kernel launch. Out of line and cold, so that the launch path the
 * benchmark runs keeps its registers (a call in its body made a bare launch 26 instructions
 * dearer). */
__attribute__((noinline, cold)) static void fk_log_launch(unsigned gx, unsigned gy, unsigned gz,
                                                          unsigned bx, unsigned by, unsigned bz,
                                                          unsigned shmem, CUstream h, void **params,
                                                          void **extra)
{
    fk_log_args("args grid=%u,%u,%u block=%u,%u,%u shmem=%u stream=%p params=%p extra=%p", gx, gy,
                gz, bx, by, bz, shmem, (void *)h, (void *)params, (void *)extra);
}

__attribute__((always_inline)) static inline CUresult
fk_launch(enum fk_counter variant, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
          unsigned by, unsigned bz, unsigned shmem, CUstream h, int ptsz, void **params,
          void **extra)
{
    if (FK_UNLIKELY(fk_cfg.args_fd >= 0))
        fk_log_launch(gx, gy, gz, bx, by, bz, shmem, h, params, extra);
    if (FK_UNLIKELY(fk_cfg.fail_launch != CUDA_SUCCESS)) return fk_cfg.fail_launch;
    if (FK_UNLIKELY(!fk_func_valid(f))) return CUDA_ERROR_INVALID_HANDLE;
    if (FK_UNLIKELY(gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0))
        return CUDA_ERROR_INVALID_VALUE;
    /* As on hardware: at most 1024 threads per block, and arguments one way or the other. */
    if (FK_UNLIKELY((unsigned long long)bx * by * bz > 1024 || (params != NULL && extra != NULL)))
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_stream *s = fk_stream_resolve(h, ptsz);
    if (FK_UNLIKELY(s == NULL)) return CUDA_ERROR_INVALID_HANDLE;
    if (FK_UNLIKELY(atomic_load_explicit(&s->cap, memory_order_acquire) != NULL)) {
        const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
        CUresult r;
        if (fk_capture_kernel(s, f, grid, block, shmem, variant, &r)) return r;
    }
    if (FK_UNLIKELY(s->kind == FK_STREAM_LEGACY &&
                    atomic_load_explicit(&fk_blocking_captures, memory_order_relaxed) > 0)) {
        CUresult r = fk_legacy_implicit();
        if (r != CUDA_SUCCESS) return r;
    }
    fk_count(variant, 1);
    if (FK_UNLIKELY(atomic_load_explicit(&fk_activity, memory_order_relaxed) != NULL))
        fk_report_kernel(f, s, (const unsigned[3]){gx, gy, gz}, (const unsigned[3]){bx, by, bz});
    return CUDA_SUCCESS;
}

FK_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                               unsigned int gridDimZ, unsigned int blockDimX,
                               unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                               void **extra)
{
    return FK_FRAMED("cuLaunchKernel", fk_launch(FKC_LAUNCH_KERNEL, f, gridDimX, gridDimY, gridDimZ,
                                                 blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                                 hStream, 0, kernelParams, extra));
}

FK_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                    unsigned int gridDimZ, unsigned int blockDimX,
                                    unsigned int blockDimY, unsigned int blockDimZ,
                                    unsigned int sharedMemBytes, CUstream hStream,
                                    void **kernelParams, void **extra)
{
    return FK_FRAMED("cuLaunchKernel_ptsz",
                     fk_launch(FKC_LAUNCH_KERNEL_PTSZ, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                               blockDimY, blockDimZ, sharedMemBytes, hStream, 1, kernelParams,
                               extra));
}

static inline CUresult fk_launch_ex(enum fk_counter variant, const CUlaunchConfig *c, CUfunction f,
                                    void **params, void **extra, int ptsz)
{
    if (FK_UNLIKELY(c == NULL)) {
        if (fk_cfg.fail_launch != CUDA_SUCCESS) return fk_cfg.fail_launch;
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (FK_UNLIKELY(c->numAttrs != 0 && c->attrs == NULL)) return CUDA_ERROR_INVALID_VALUE;
    return fk_launch(variant, f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                     c->blockDimZ, c->sharedMemBytes, c->hStream, ptsz, params, extra);
}

FK_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                 void **extra)
{
    return FK_FRAMED("cuLaunchKernelEx",
                     fk_launch_ex(FKC_LAUNCH_KERNEL_EX, config, f, kernelParams, extra, 0));
}

FK_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                      void **kernelParams, void **extra)
{
    return FK_FRAMED("cuLaunchKernelEx_ptsz",
                     fk_launch_ex(FKC_LAUNCH_KERNEL_EX_PTSZ, config, f, kernelParams, extra, 1));
}

FK_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                          unsigned int gridDimY, unsigned int gridDimZ,
                                          unsigned int blockDimX, unsigned int blockDimY,
                                          unsigned int blockDimZ, unsigned int sharedMemBytes,
                                          CUstream hStream, void **kernelParams)
{
    return FK_FRAMED("cuLaunchCooperativeKernel",
                     fk_launch(FKC_LAUNCH_COOP, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                               blockDimY, blockDimZ, sharedMemBytes, hStream, 0, kernelParams,
                               NULL));
}

FK_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                               unsigned int gridDimY, unsigned int gridDimZ,
                                               unsigned int blockDimX, unsigned int blockDimY,
                                               unsigned int blockDimZ, unsigned int sharedMemBytes,
                                               CUstream hStream, void **kernelParams)
{
    return FK_FRAMED("cuLaunchCooperativeKernel_ptsz",
                     fk_launch(FKC_LAUNCH_COOP_PTSZ, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                               blockDimY, blockDimZ, sharedMemBytes, hStream, 1, kernelParams,
                               NULL));
}

/* A graph launch runs every kernel node of the executable graph: one count per node. */
__attribute__((always_inline)) static inline CUresult
fk_graph_launch(enum fk_counter variant, CUgraphExec exec, CUstream h, int ptsz)
{
    if (FK_UNLIKELY(fk_cfg.args_fd >= 0))
        fk_log_args("args exec=%p stream=%p", (void *)exec, (void *)h);
    if (FK_UNLIKELY(fk_cfg.fail_launch != CUDA_SUCCESS)) return fk_cfg.fail_launch;
    if (FK_UNLIKELY(fk_exec_graph(exec) == NULL)) return CUDA_ERROR_INVALID_HANDLE;
    struct fk_stream *s = fk_stream_resolve(h, ptsz);
    if (FK_UNLIKELY(s == NULL)) return CUDA_ERROR_INVALID_HANDLE;
    if (FK_UNLIKELY(atomic_load_explicit(&s->cap, memory_order_acquire) != NULL)) {
        CUresult r;
        if (fk_capture_graph(s, exec, variant, &r)) return r;
    }
    if (FK_UNLIKELY(s->kind == FK_STREAM_LEGACY &&
                    atomic_load_explicit(&fk_blocking_captures, memory_order_relaxed) > 0)) {
        CUresult r = fk_legacy_implicit();
        if (r != CUDA_SUCCESS) return r;
    }
    fk_count(variant, 1);
    fk_count(FKC_GRAPH_KERNELS, fk_exec_kernels(exec));
    if (FK_UNLIKELY(atomic_load_explicit(&fk_activity, memory_order_relaxed) != NULL))
        fk_report_graph(exec, s);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    return FK_FRAMED("cuGraphLaunch", fk_graph_launch(FKC_GRAPH_LAUNCH, hGraphExec, hStream, 0));
}

FK_API CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return FK_FRAMED("cuGraphLaunch_ptsz",
                     fk_graph_launch(FKC_GRAPH_LAUNCH_PTSZ, hGraphExec, hStream, 1));
}

FK_API int fakecuda_launch_unhooked(CUfunction f, CUstream stream)
{
    CUresult r = FK_FRAMED("cuLaunchKernel", fk_launch(FKC_LAUNCH_KERNEL, f, 1, 1, 1, 32, 1, 1, 0,
                                                       stream, 0, NULL, NULL));
    if (r == CUDA_SUCCESS) fk_count(FKC_UNHOOKED, 1);
    return (int)r;
}

/* ---- the fake CUPTI's side channels ---- */

_Atomic(fakecuda_activity_fn) fk_activity;
_Atomic(fakecuda_api_fn) fk_api;

FK_API void fakecuda_set_api_hook(fakecuda_api_fn fn)
{
    atomic_store(&fk_api, fn);
}

FK_API void fakecuda_api_frame(int domain, const char *name, int exit, int result)
{
    fakecuda_api_fn fn = atomic_load_explicit(&fk_api, memory_order_relaxed);
    if (fn != NULL) fn(domain, name, exit, result);
}

void fk_api_enter(const char *name)
{
    fakecuda_api_frame(1, name, 0, 0);
}

CUresult fk_api_exit(const char *name, CUresult r)
{
    fakecuda_api_frame(1, name, 1, (int)r);
    return r;
}

FK_API void fakecuda_set_activity_hook(fakecuda_activity_fn fn)
{
    atomic_store(&fk_activity, fn);
}

void fk_report_kernel(CUfunction f, const struct fk_stream *s, const unsigned grid[3],
                      const unsigned block[3])
{
    fakecuda_activity_fn fn = atomic_load(&fk_activity);
    fakecuda_op_t op = {((const struct fk_func *)f)->name, s, 0, 0, {0}, {0}, 0};
    memcpy(op.grid, grid, sizeof op.grid), memcpy(op.block, block, sizeof op.block);
    if (fn != NULL) fn(&op, 1);
}
