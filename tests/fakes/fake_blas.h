/* The fake cuBLAS's API (libfake_blas.so, fake_blas.c): a stream is a CUstream / cudaStream_t. */
#ifndef NVTXCORR_FAKE_BLAS_H
#define NVTXCORR_FAKE_BLAS_H

/* One GEMM on stream (gemmSN_NN_kernel, then splitKreduce_kernel); the first error, or 0. */
int fakeblas_gemm(void *stream);
/* The GEMM captured by the library's own runtime into a graph it launches `replays` times. */
int fakeblas_gemm_graph(void *stream, int replays);

#endif /* NVTXCORR_FAKE_BLAS_H */
