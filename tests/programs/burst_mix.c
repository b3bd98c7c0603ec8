/*
 * A burst that outruns the collector, with the allocations and syncs that a
 * report's memory view stands on: 20000 cudaLaunchKernel, 100 cudaMalloc of
 * 1 MiB, 60 cudaFree, 50 cudaMemcpy, 25 cudaMemcpyAsync, 40
 * cudaStreamSynchronize and 10 cudaDeviceSynchronize, back to back, in
 * `rounds` rounds (default 1; the rounds before the last free all 100
 * blocks) — the workload of the exact-under-load tests. Prints its own count
 * of each call, then the bytes it left allocated. Usage: burst_mix [rounds=1]
 * [go_file]: with a go file, one cudaDeviceSynchronize first (which starts a
 * tracer's session), then a wait (up to 30 s) until that file exists, so a
 * test can act on the collector before the burst.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define MIB (1u << 20)

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void burst_kernel(void) {}

static unsigned long long launches, mallocs, frees, copies, async_copies, stream_syncs,
    device_syncs, live_bytes;

/* One round of the mix; all but the last free every block they allocated,
 * so a long run's memory stays that of one round. */
static void one_round(int last)
{
    dim3 one = {1, 1, 1};
    static char host[4096];
    void *blocks[100];
    for (int i = 0; i < 100; i++) {
        mallocs += cudaMalloc(&blocks[i], MIB) == cudaSuccess;
        live_bytes += MIB;
        for (int k = 0; k < 200; k++)
            launches += cudaLaunchKernel((const void *)burst_kernel, one, one, NULL, 0, NULL) ==
                        cudaSuccess;
        if (i % 2 == 0)
            copies +=
                cudaMemcpy(blocks[i], host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess;
        if (i % 4 == 0)
            async_copies += cudaMemcpyAsync(blocks[i], host, sizeof host, cudaMemcpyHostToDevice,
                                            NULL) == cudaSuccess;
        if (i % 5 == 0 || i % 5 == 1)
            stream_syncs += cudaStreamSynchronize(NULL) == cudaSuccess;
        if (i % 10 == 9)
            device_syncs += cudaDeviceSynchronize() == cudaSuccess;
    }
    for (int i = 0; i < (last ? 60 : 100); i++) {
        frees += cudaFree(blocks[i]) == cudaSuccess;
        live_bytes -= MIB;
    }
}

static void wait_for(const char *go_file)
{
    device_syncs += cudaDeviceSynchronize() == cudaSuccess;
    const struct timespec pause = {0, 1000000};
    for (int i = 0; i < 30000 && access(go_file, F_OK) != 0; i++)
        nanosleep(&pause, NULL);
}

int main(int argc, char **argv)
{
    unsigned long long rounds = arg_or(argc, argv, 1, 1);
    if (argc > 2)
        wait_for(argv[2]);
    for (unsigned long long r = 1; r < rounds; r++)
        one_round(0);
    one_round(1);
    printf("cudaLaunchKernel %llu\ncudaMalloc %llu\ncudaFree %llu\ncudaMemcpy %llu\n"
           "cudaMemcpyAsync %llu\ncudaStreamSynchronize %llu\ncudaDeviceSynchronize %llu\n"
           "live_bytes %llu\n",
           launches, mallocs, frees, copies, async_copies, stream_syncs, device_syncs, live_bytes);
    return 0;
}
