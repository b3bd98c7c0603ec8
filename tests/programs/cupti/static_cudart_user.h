/*
 * The one entry point of libstatic_cudart_user.so (the cuBLAS stand-in with a runtime of its
 * own), shared by the library and the program that calls it.
 */
#ifndef CT_STATIC_CUDART_USER_H
#define CT_STATIC_CUDART_USER_H

/* cudaMalloc, n launches of cublas_gemm_kernel, cudaDeviceSynchronize, cudaFree, all through the
 * library's own runtime; returns how many of those calls failed. */
int run_library_kernels(int n);

#endif
