/*
 * A steadily leaking workload for leak detection: each step allocates a working buffer and a
 * second buffer, copies a host buffer in, makes 10 launches and a cudaDeviceSynchronize, then
 * frees only the working buffer. Usage: leak_loop [steps=50] [leak_bytes=1048576]
 * [work_bytes=4194304]. With S steps, L leak and W work bytes: cudaMalloc 2S, cudaFree S,
 * cudaMemcpy S, cudaLaunchKernel 10S, cudaDeviceSynchronize S; device bytes allocated
 * S*(W+L), peak S*L+W, left allocated at exit S*L. Exits 1 if any call failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define LAUNCHES_PER_STEP 10

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void leaky_step_kernel(void) {}

int main(int argc, char **argv)
{
    unsigned long long steps = arg_or(argc, argv, 1, 50);
    size_t leak_bytes = (size_t)arg_or(argc, argv, 2, 1 << 20);
    size_t work_bytes = (size_t)arg_or(argc, argv, 3, 4 << 20);
    unsigned char *host = malloc(work_bytes ? work_bytes : 1);
    if (!host) {
        perror("leak_loop");
        return 1;
    }
    for (size_t i = 0; i < work_bytes; i++)
        host[i] = (unsigned char)i;
    dim3 grid = {32, 1, 1};
    dim3 block = {256, 1, 1};

    unsigned long long failures = 0;
    for (unsigned long long step = 0; step < steps; step++) {
        void *work = NULL;
        void *leaked = NULL;
        failures += cudaMalloc(&work, work_bytes) != cudaSuccess;
        failures += cudaMalloc(&leaked, leak_bytes) != cudaSuccess;
        failures += cudaMemcpy(work, host, work_bytes, cudaMemcpyHostToDevice) != cudaSuccess;
        void *args[] = {&work, &leaked};
        for (int i = 0; i < LAUNCHES_PER_STEP; i++)
            failures += cudaLaunchKernel((const void *)leaky_step_kernel, grid, block, args, 0,
                                         NULL) != cudaSuccess;
        failures += cudaDeviceSynchronize() != cudaSuccess;
        failures += cudaFree(work) != cudaSuccess;
    }
    free(host);

    if (failures != 0) {
        fprintf(stderr, "leak_loop: %llu calls failed\n", failures);
        return 1;
    }
    printf("leak_loop: %llu steps, leaked %llu bytes\n", steps,
           steps * (unsigned long long)leak_bytes);
    return 0;
}
