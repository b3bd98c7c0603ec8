/*
 * Memory pool hooks: which pool each device uses, pools' lifetimes and
 * settings, and what the pools and the graphs' allocator reserve when the
 * program asks. Allocations from a pool are in memory.c, with the other
 * allocations; graphs are built in graph_build.c.
 */
#include "preload/hooks/hook.h"

#include "cudatrace/runtime_attributes.h"

_Static_assert(cudaMemPoolAttrReservedMemCurrent == CT_POOL_ATTR_RESERVED_MEM_CURRENT,
               "the collector and the report read pools' reserve by this number");
_Static_assert(cudaGraphMemAttrReservedMemCurrent == CT_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
               "the collector reads the graphs' reserve by this number");

#define HOOK_DEVICE_POOL(name)                                                                     \
    CT_HOOK(name, (cudaMemPool_t * pool, int device), (pool, device), device, 0, 0, 0, CT_OUT(pool))
HOOK_DEVICE_POOL(cudaDeviceGetDefaultMemPool)
HOOK_DEVICE_POOL(cudaDeviceGetMemPool)
CT_HOOK(cudaDeviceSetMemPool, (int device, cudaMemPool_t pool), (device, pool), device, 0, 0, 0,
        CT_PTR(pool))

CT_HOOK(cudaMemPoolCreate, (cudaMemPool_t * pool, const struct cudaMemPoolProps *props),
        (pool, props), CT_OUT(pool), 0, 0, 0, 0)
CT_HOOK(cudaMemPoolDestroy, (cudaMemPool_t pool), (pool), CT_PTR(pool), 0, 0, 0, 0)
CT_HOOK(cudaMemPoolTrimTo, (cudaMemPool_t pool, size_t keep), (pool, keep), CT_PTR(pool), 0, 0, 0,
        keep)

/* The reuse switches (attributes 1 to 3) are ints; the thresholds and usage
 * figures after them are cuuint64_t. */
static uint64_t pool_attribute_value(cudaError_t result, enum cudaMemPoolAttr attr,
                                     const void *value)
{
    if (result != cudaSuccess || !value)
        return 0;
    if (attr <= cudaMemPoolReuseAllowInternalDependencies)
        return (uint64_t) * (const int *)value;
    return *(const uint64_t *)value;
}

#define HOOK_POOL_ATTRIBUTE(name)                                                                  \
    CT_HOOK(name, (cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value),                    \
            (pool, attr, value), CT_PTR(pool), 0, attr, pool_attribute_value(result, attr, value), \
            0)
HOOK_POOL_ATTRIBUTE(cudaMemPoolSetAttribute)
HOOK_POOL_ATTRIBUTE(cudaMemPoolGetAttribute)

/* What the graphs' allocator holds on a device (every attribute is a
 * cuuint64_t), asked as a pool's reserve is: the runtime says it only when
 * asked. UsedMemCurrent is attribute 0, which a record shows as none. */
CT_HOOK(cudaDeviceGetGraphMemAttribute,
        (int device, enum cudaGraphMemAttributeType attr, void *value), (device, attr, value),
        device, attr, result == cudaSuccess && value ? *(const uint64_t *)value : 0, 0, 0)
