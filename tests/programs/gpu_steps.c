/*
 * Training steps that last a known time, for the tests of the GPU's own
 * state (NVML): every 10 ms one kernel launch, then, with copies on, one
 * cudaMemcpy of 1 MiB to the device, then a cudaDeviceSynchronize, for
 * `ms` milliseconds in all. The steps sleep between them, so a test of a
 * slow or stuck NVML sees the program's own time. With `warm` set, that many
 * launches of warm_kernel on a stream of its own come first, and a pause
 * long enough for them to finish. With `rest` set, it waits that many
 * milliseconds after the steps before it ends. Prints the steps it ran.
 * Usage: gpu_steps [ms=600] [copies=0] [warm=0] [rest=0]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define STEP_MS 10
#define COPY_BYTES (1u << 20)

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void step_kernel(void) {}
void warm_kernel(void) {}

static void warm_up(unsigned long long launches)
{
    cudaStream_t stream = NULL;
    if (!launches || cudaStreamCreate(&stream) != cudaSuccess)
        return;
    for (unsigned long long i = 0; i < launches; i++)
        cudaLaunchKernel((const void *)warm_kernel, (dim3){1, 1, 1}, (dim3){32, 1, 1}, NULL, 0,
                         stream);
    const struct timespec finish = {0, 50 * 1000000L};
    nanosleep(&finish, NULL);
}

int main(int argc, char **argv)
{
    unsigned long long ms = arg_or(argc, argv, 1, 600), copies = arg_or(argc, argv, 2, 0);
    unsigned long long warm = arg_or(argc, argv, 3, 0), rest = arg_or(argc, argv, 4, 0);
    static char host[COPY_BYTES];
    void *device = NULL;
    if (cudaMalloc(&device, COPY_BYTES) != cudaSuccess)
        return 1;
    warm_up(warm);
    const struct timespec pause = {0, STEP_MS * 1000000L};
    unsigned long long steps = ms / STEP_MS;
    for (unsigned long long i = 0; i < steps; i++) {
        cudaLaunchKernel((const void *)step_kernel, (dim3){1, 1, 1}, (dim3){32, 1, 1}, NULL, 0,
                         NULL);
        if (copies)
            cudaMemcpy(device, host, COPY_BYTES, cudaMemcpyHostToDevice);
        cudaDeviceSynchronize();
        nanosleep(&pause, NULL);
    }
    const struct timespec resting = {(time_t)(rest / 1000), (long)(rest % 1000) * 1000000L};
    nanosleep(&resting, NULL);
    cudaFree(device);
    printf("gpu_steps: %llu steps\n", steps);
    return 0;
}
