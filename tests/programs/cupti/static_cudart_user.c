/*
 * The library half of the static-runtime test, standing for cuBLAS: it is linked with its own
 * copy of the runtime double (as cuBLAS links libcudart_static), and its version script and
 * -Bsymbolic bind every cuda* call inside it, so an LD_PRELOAD tracer never sees them; only
 * CUPTI, reached through the driver, does. Its kernel is exported so the runtime can name it,
 * under a C++ mangled name as cuBLAS's template kernels have (void gemm_tile<128>(float const*,
 * float*, int)), which the trace shows demangled.
 */
#include <cuda_runtime_api.h>

#include "tests/programs/cupti/static_cudart_user.h"

void cublas_gemm_kernel(void) __asm__("_Z9gemm_tileILi128EEvPKfPfi");
void cublas_gemm_kernel(void) {}

int run_library_kernels(int n)
{
    void *workspace = NULL;
    int failures = cudaMalloc(&workspace, 1 << 16) != cudaSuccess;
    dim3 grid = {128, 1, 1}, block = {256, 1, 1};
    for (int i = 0; i < n; i++)
        failures += cudaLaunchKernel((const void *)cublas_gemm_kernel, grid, block, NULL, 0,
                                     NULL) != cudaSuccess;
    failures += cudaDeviceSynchronize() != cudaSuccess;
    failures += cudaFree(workspace) != cudaSuccess;
    return failures;
}
