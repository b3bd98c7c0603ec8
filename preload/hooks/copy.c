/*
 * Copy and memset hooks. 2D copies record width x height, the bytes that
 * actually move, not the pitched extent; a batch (cudaMemcpyBatchAsync) its
 * copies' bytes in all, its first destination and source, and the kind the
 * runtime decides (cudaMemcpyDefault). A batch's arrays are read only once
 * the call succeeded, which says they were the program's to read.
 */
#include "preload/hooks/hook.h"

#define HOOK_MEMCPY(name)                                                                          \
    CT_HOOK(name, (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind),            \
            (dst, src, count, kind), CT_PTR(dst), count, 0, kind, CT_PTR(src))
HOOK_MEMCPY(cudaMemcpy)
HOOK_MEMCPY(cudaMemcpy_ptds)

#define HOOK_MEMCPY_ASYNC(name)                                                                    \
    CT_HOOK(                                                                                       \
        name,                                                                                      \
        (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream), \
        (dst, src, count, kind, stream), CT_PTR(dst), count, CT_PTR(stream), kind, CT_PTR(src))
HOOK_MEMCPY_ASYNC(cudaMemcpyAsync)
HOOK_MEMCPY_ASYNC(cudaMemcpyAsync_ptsz)

static uint64_t batch_bytes(cudaError_t result, const size_t *sizes, size_t count)
{
    uint64_t bytes = 0;
    for (size_t i = 0; result == cudaSuccess && sizes && i < count; i++)
        bytes += sizes[i];
    return bytes;
}

static uint64_t batch_first(cudaError_t result, const void *const *pointers, size_t count)
{
    return result == cudaSuccess && pointers && count ? CT_PTR(pointers[0]) : 0;
}

#define HOOK_MEMCPY_BATCH(name)                                                                    \
    CT_HOOK(name,                                                                                  \
            (void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,        \
             struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,               \
             cudaStream_t stream),                                                                 \
            (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream),                        \
            batch_first(result, (const void *const *)dsts, count),                                 \
            batch_bytes(result, sizes, count), CT_PTR(stream), cudaMemcpyDefault,                  \
            batch_first(result, srcs, count))
HOOK_MEMCPY_BATCH(cudaMemcpyBatchAsync)
HOOK_MEMCPY_BATCH(cudaMemcpyBatchAsync_ptsz)

#define HOOK_MEMCPY_2D(name)                                                                       \
    CT_HOOK(name,                                                                                  \
            (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,               \
             size_t height, enum cudaMemcpyKind kind),                                             \
            (dst, dpitch, src, spitch, width, height, kind), CT_PTR(dst), width *height, 0, kind,  \
            CT_PTR(src))
HOOK_MEMCPY_2D(cudaMemcpy2D)
HOOK_MEMCPY_2D(cudaMemcpy2D_ptds)

#define HOOK_MEMCPY_2D_ASYNC(name)                                                                 \
    CT_HOOK(name,                                                                                  \
            (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,               \
             size_t height, enum cudaMemcpyKind kind, cudaStream_t stream),                        \
            (dst, dpitch, src, spitch, width, height, kind, stream), CT_PTR(dst), width *height,   \
            CT_PTR(stream), kind, CT_PTR(src))
HOOK_MEMCPY_2D_ASYNC(cudaMemcpy2DAsync)
HOOK_MEMCPY_2D_ASYNC(cudaMemcpy2DAsync_ptsz)

CT_HOOK(cudaMemcpyPeer, (void *dst, int dst_device, const void *src, int src_device, size_t count),
        (dst, dst_device, src, src_device, count), CT_PTR(dst), count, 0, CT_COPY_KIND_PEER,
        CT_PTR(src))
CT_HOOK(cudaMemcpyPeerAsync,
        (void *dst, int dst_device, const void *src, int src_device, size_t count,
         cudaStream_t stream),
        (dst, dst_device, src, src_device, count, stream), CT_PTR(dst), count, CT_PTR(stream),
        CT_COPY_KIND_PEER, CT_PTR(src))

#define HOOK_MEMSET(name)                                                                          \
    CT_HOOK(name, (void *ptr, int value, size_t count), (ptr, value, count), CT_PTR(ptr), count,   \
            0, (uint32_t)value, 0)
HOOK_MEMSET(cudaMemset)
HOOK_MEMSET(cudaMemset_ptds)

#define HOOK_MEMSET_ASYNC(name)                                                                    \
    CT_HOOK(name, (void *ptr, int value, size_t count, cudaStream_t stream),                       \
            (ptr, value, count, stream), CT_PTR(ptr), count, CT_PTR(stream), (uint32_t)value, 0)
HOOK_MEMSET_ASYNC(cudaMemsetAsync)
HOOK_MEMSET_ASYNC(cudaMemsetAsync_ptsz)
