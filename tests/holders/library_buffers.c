/*
 * A library that allocates device memory of its own, as NCCL does for its
 * buffers: built twice by tests/tests.mk, as libnccl.so.2 (a CUDA library:
 * the report names it as the holder) and as libbuffers.so (its healthy
 * twin: memory any other library or the program allocates is the
 * program's). allocate_buffers makes two 32 MiB blocks and frees one, so
 * its holder's peak is 64 MiB and its final 32 MiB; it returns how many
 * calls failed.
 */
#include <cuda_runtime_api.h>

#define MIB (1u << 20)

__attribute__((noinline)) int allocate_buffers(void)
{
    void *first = NULL, *second = NULL;
    int failed = cudaMalloc(&first, 32 * MIB) != cudaSuccess;
    failed += cudaMalloc(&second, 32 * MIB) != cudaSuccess;
    failed += cudaFree(first) != cudaSuccess;
    return failed;
}
