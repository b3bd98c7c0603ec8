/*
 * Allocation and release hooks: device (also from a memory pool), pinned host
 * and managed memory, and the pinning of memory the program allocated itself
 * (cudaHostRegister). The record carries the pointer and size so the
 * collector can keep live-byte counters and match frees to their allocations.
 */
#include "preload/hooks/hook.h"

CT_HOOK(cudaMalloc, (void **ptr, size_t size), (ptr, size), CT_OUT(ptr), size, 0, 0, 0)
CT_HOOK(cudaMallocManaged, (void **ptr, size_t size, unsigned int flags), (ptr, size, flags),
        CT_OUT(ptr), size, 0, 0, 0)
CT_HOOK(cudaMallocPitch, (void **ptr, size_t *pitch, size_t width, size_t height),
        (ptr, pitch, width, height), CT_OUT(ptr),
        (result == cudaSuccess && pitch ? *pitch : width) * height, 0, 0, 0)
CT_HOOK(cudaMallocHost, (void **ptr, size_t size), (ptr, size), CT_OUT(ptr), size, 0, 0, 0)
CT_HOOK(cudaHostAlloc, (void **ptr, size_t size, unsigned int flags), (ptr, size, flags),
        CT_OUT(ptr), size, flags, 0, 0)
CT_HOOK(cudaFree, (void *ptr), (ptr), CT_PTR(ptr), 0, 0, 0, 0)
CT_HOOK(cudaFreeHost, (void *ptr), (ptr), CT_PTR(ptr), 0, 0, 0, 0)

#define HOOK_MALLOC_ASYNC(name)                                                                    \
    CT_HOOK(name, (void **ptr, size_t size, cudaStream_t stream), (ptr, size, stream),             \
            CT_OUT(ptr), size, CT_PTR(stream), 0, 0)
HOOK_MALLOC_ASYNC(cudaMallocAsync)
HOOK_MALLOC_ASYNC(cudaMallocAsync_ptsz)

#define HOOK_FREE_ASYNC(name)                                                                      \
    CT_HOOK(name, (void *ptr, cudaStream_t stream), (ptr, stream), CT_PTR(ptr), 0, CT_PTR(stream), \
            0, 0)
HOOK_FREE_ASYNC(cudaFreeAsync)
HOOK_FREE_ASYNC(cudaFreeAsync_ptsz)

#define HOOK_MALLOC_FROM_POOL(name)                                                                \
    CT_HOOK(name, (void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream),              \
            (ptr, size, pool, stream), CT_OUT(ptr), size, CT_PTR(stream), CT_PTR(pool), 0)
HOOK_MALLOC_FROM_POOL(cudaMallocFromPoolAsync)
HOOK_MALLOC_FROM_POOL(cudaMallocFromPoolAsync_ptsz)

/* Registered memory stays the program's: it is not counted as pinned bytes
 * the runtime allocated. */
CT_HOOK(cudaHostRegister, (void *ptr, size_t size, unsigned int flags), (ptr, size, flags),
        CT_PTR(ptr), size, flags, 0, 0)
CT_HOOK(cudaHostUnregister, (void *ptr), (ptr), CT_PTR(ptr), 0, 0, 0, 0)
