/*
 * The overhead benchmark's workload: N back-to-back cudaLaunchKernel calls on one no-op kernel,
 * then a single cudaDeviceSynchronize. Usage: launch_loop [launches=1000000]. The loop body is
 * only the launch and a failure tally, so timing it measures the per-call cost of whatever sits
 * between the program and the runtime; it prints that time per launch, leaving out the first
 * launch (where a tracer starts its session) so start-up is not charged to every call. Exits 1 if
 * any call failed.
 */
#include <stdio.h>
#include <time.h>

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
    struct timespec start, end;
    if (launches > 0)
        failures += cudaLaunchKernel(kernel, grid, block, NULL, 0, NULL) != cudaSuccess;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (unsigned long long i = 1; i < launches; i++)
        failures += cudaLaunchKernel(kernel, grid, block, NULL, 0, NULL) != cudaSuccess;
    clock_gettime(CLOCK_MONOTONIC, &end);
    failures += cudaDeviceSynchronize() != cudaSuccess;
    double loop_ns = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);

    if (failures != 0) {
        fprintf(stderr, "launch_loop: %llu calls failed\n", failures);
        return 1;
    }
    printf("launch_loop: %llu launches, %.2f ns per launch\n", launches,
           launches > 1 ? loop_ns / (double)(launches - 1) : 0.0);
    return 0;
}
