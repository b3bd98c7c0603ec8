/*
 * A job whose device takes no context (the runtime double's
 * CT_DOUBLE_DEVICES_UNAVAILABLE plays a compute mode that forbids it, or
 * another process holding the device exclusively): it asks for the device
 * count, then tries a cudaMalloc every 20 ms for `ms` milliseconds, as a
 * launcher's retry would, and prints how many tries failed and with which
 * error. Exits 1 when none succeeded, as the job would.
 * Usage: busy_device [ms=400]
 */
#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define TRY_MS 20

int main(int argc, char **argv)
{
    unsigned long long ms = arg_or(argc, argv, 1, 400), failed = 0, tries = ms / TRY_MS;
    int devices = 0;
    cudaError_t last = cudaSuccess;
    cudaGetDeviceCount(&devices);
    const struct timespec pause = {0, TRY_MS * 1000000L};
    for (unsigned long long i = 0; i < tries; i++) {
        void *block = NULL;
        last = cudaMalloc(&block, 1 << 20);
        if (last == cudaSuccess) {
            cudaFree(block);
            break;
        }
        failed++;
        nanosleep(&pause, NULL);
    }
    printf("devices %d failed %llu error %d\n", devices, failed, (int)last);
    return failed == tries ? 1 : 0;
}
