/*
 * The program half of the static-runtime test: a few launches through the shared runtime (the
 * framework's own), then run_library_kernels in a library that carries its own runtime (as
 * cuBLAS does). Usage: static_runtime [app launches=3] [library launches=5]. Prints one summary
 * line; exits 1 if any call failed.
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "tests/programs/program_args.h"
#include "tests/programs/cupti/static_cudart_user.h"

/* Exported (the build links with -rdynamic) so the runtime can name it. */
void app_kernel(void) {}

int main(int argc, char **argv)
{
    int app = (int)arg_or(argc, argv, 1, 3);
    int library = (int)arg_or(argc, argv, 2, 5);
    dim3 grid = {32, 1, 1}, block = {64, 1, 1};
    int failures = 0;
    for (int i = 0; i < app; i++)
        failures +=
            cudaLaunchKernel((const void *)app_kernel, grid, block, NULL, 0, NULL) != cudaSuccess;
    failures += cudaDeviceSynchronize() != cudaSuccess;
    failures += run_library_kernels(library);
    if (failures != 0) {
        fprintf(stderr, "static_runtime: %d calls failed\n", failures);
        return 1;
    }
    printf("static_runtime: %d app launches, %d library launches\n", app, library);
    return 0;
}
