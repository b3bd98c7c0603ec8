/*
 * A job on cudaMallocAsync's default pool that asks the runtime what the
 * pool holds, as torch.cuda.memory_reserved() does: four 3 MiB
 * allocations, a reading after each; two freed, a reading; a
 * synchronisation (the pool gives back what it does not use), a reading; a
 * trim to nothing, a reading; the rest freed and synchronised, a reading.
 * Prints each reading in bytes, one a line, for the tests to hold the
 * report to.
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#define BLOCKS 4
#define BLOCK_BYTES (3u << 20)

static void read_reserve(cudaMemPool_t pool)
{
    unsigned long long reserved = 0;
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess)
        printf("%llu\n", reserved);
}

int main(void)
{
    cudaMemPool_t pool;
    void *blocks[BLOCKS];
    if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess)
        return 1;
    for (int i = 0; i < BLOCKS; i++) {
        if (cudaMallocAsync(&blocks[i], BLOCK_BYTES, NULL) != cudaSuccess)
            return 1;
        read_reserve(pool);
    }
    for (int i = 0; i < BLOCKS / 2; i++)
        cudaFreeAsync(blocks[i], NULL);
    read_reserve(pool);
    cudaDeviceSynchronize();
    read_reserve(pool);
    cudaMemPoolTrimTo(pool, 0);
    read_reserve(pool);
    for (int i = BLOCKS / 2; i < BLOCKS; i++)
        cudaFreeAsync(blocks[i], NULL);
    cudaDeviceSynchronize();
    read_reserve(pool);
    return 0;
}
