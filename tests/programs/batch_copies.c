/*
 * Batched copies (cudaMemcpyBatchAsync, CUDA 12.8 on): `batches` batches of
 * four host-to-device copies of 1, 2, 3 and 4 KiB on a stream of its own,
 * each followed by a stream synchronisation, and one batch the runtime
 * refuses (no copies). Prints the batches that succeeded.
 * Usage: batch_copies [batches=5]
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define COPIES 4
#define KIB 1024

int main(int argc, char **argv)
{
    unsigned long long batches = arg_or(argc, argv, 1, 5), done = 0;
    static char host[COPIES * COPIES * KIB];
    char *device = NULL;
    cudaStream_t stream = NULL;
    if (cudaMalloc((void **)&device, sizeof host) != cudaSuccess ||
        cudaStreamCreate(&stream) != cudaSuccess)
        return 1;
    void *dsts[COPIES];
    const void *srcs[COPIES];
    size_t sizes[COPIES], first = 0;
    for (int i = 0, at = 0; i < COPIES; at += (i + 1) * KIB, i++) {
        dsts[i] = device + at;
        srcs[i] = host + at;
        sizes[i] = (size_t)(i + 1) * KIB;
    }
    struct cudaMemcpyAttributes attrs = {.srcAccessOrder = cudaMemcpySrcAccessOrderStream};
    for (unsigned long long b = 0; b < batches; b++) {
        done += cudaMemcpyBatchAsync(dsts, srcs, sizes, COPIES, &attrs, &first, 1, stream) ==
                cudaSuccess;
        cudaStreamSynchronize(stream);
    }
    if (cudaMemcpyBatchAsync(dsts, srcs, sizes, 0, &attrs, &first, 1, stream) == cudaSuccess)
        return 1;
    cudaStreamDestroy(stream);
    cudaFree(device);
    printf("batch_copies: %llu batches\n", done);
    return 0;
}
