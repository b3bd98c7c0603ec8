/*
 * The overhead benchmark's workload: N back-to-back cudaLaunchKernel calls on one no-op kernel,
 * then a single cudaDeviceSynchronize. Usage: launch_loop [launches=1000000]. The loop body is
 * only the launch and a failure tally, so timing it measures the per-call cost of whatever sits
 * between the program and the runtime. Exits 1 if any call failed.
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void empty_kernel(void) {}

int main(int argc, char **argv)
{
    unsigned long long launches = arg_or(argc, argv, 1, 1000000);
    const void *kernel = (const void *)empty_kernel;
    dim3 grid = {256, 1, 1};
    dim3 block = {256, 1, 1};

    unsigned long long failures = 0;
    for (unsigned long long i = 0; i < launches; i++)
        failures += cudaLaunchKernel(kernel, grid, block, NULL, 0, NULL) != cudaSuccess;
    failures += cudaDeviceSynchronize() != cudaSuccess;

    if (failures != 0) {
        fprintf(stderr, "launch_loop: %llu calls failed\n", failures);
        return 1;
    }
    printf("launch_loop: %llu launches\n", launches);
    return 0;
}
