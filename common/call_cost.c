/*
 * The rules of call_cost.h: which calls block the host and which copies
 * are pageable or small, for the collector's tallies and the report alike.
 */
#include "common/call_cost.h"

#include <string.h>

enum ct_copy_direction ct_copy_direction_of_kind(uint64_t kind)
{
    return kind == 1 ? CT_COPY_TO_DEVICE : kind == 2 ? CT_COPY_TO_HOST : CT_COPY_OTHER;
}

/* Whether `ptr` lies in memory the runtime pinned. */
static int is_pinned(const struct ct_pinned_memory *pinned, uint64_t ptr)
{
    const struct ct_u64_map *m = &pinned->ranges;
    for (uint32_t i = 0; i < m->capacity; i++) {
        uint64_t start = m->keys[i];
        if (start && start != UINT64_MAX && ptr >= start && ptr - start < m->values[i])
            return 1;
    }
    return 0;
}

/* An async copy from or to pageable memory is staged through a pinned
 * buffer and returns only once the host side is read or written: it blocks
 * like a synchronous one. */
static unsigned copy_cost(const struct ct_pinned_memory *pinned, const struct ct_call_shape *call,
                          uint64_t small_bytes)
{
    int is_async = strstr(ct_function_name(call->fn), "Async") != NULL;
    if (call->direction == CT_COPY_OTHER)
        return is_async ? 0 : CT_COST_BLOCKS;
    unsigned cost = call->bytes < small_bytes ? CT_COST_SMALL : 0;
    if (is_async && !is_pinned(pinned, call->host))
        cost |= CT_COST_PAGEABLE | CT_COST_BLOCKS;
    if (!is_async)
        cost |= CT_COST_BLOCKS;
    return cost;
}

unsigned ct_call_cost(const struct ct_pinned_memory *pinned, const struct ct_call_shape *call,
                      uint64_t small_bytes)
{
    switch (ct_function_family(call->fn)) {
    case CT_FAMILY_LAUNCH:
    case CT_FAMILY_GRAPH:
        return CT_COST_LAUNCH;
    case CT_FAMILY_SYNC_DEVICE:
    case CT_FAMILY_SYNC_STREAM:
    case CT_FAMILY_SYNC_EVENT:
        return CT_COST_BLOCKS;
    case CT_FAMILY_COPY:
        return copy_cost(pinned, call, small_bytes);
    case CT_FAMILY_ALLOC_DEVICE:
        return CT_COST_ALLOC_TIME;
    case CT_FAMILY_FREE_DEVICE: /* cudaFree waits for the device */
        return CT_COST_ALLOC_TIME | (call->fn == CT_FN_cudaFree ? CT_COST_BLOCKS : 0);
    case CT_FAMILY_VMM:
        return call->fn == CT_FN_cuMemCreate || call->fn == CT_FN_cuMemRelease ? CT_COST_ALLOC_TIME
                                                                               : 0;
    default:
        return 0;
    }
}

void ct_pinned_note(struct ct_pinned_memory *pinned, enum ct_function fn, uint64_t ptr,
                    uint64_t bytes)
{
    enum ct_family family = ct_function_family(fn);
    uint64_t gone;
    if ((family == CT_FAMILY_ALLOC_HOST || family == CT_FAMILY_HOST_REGISTER) &&
        fn != CT_FN_cudaHostUnregister)
        ct_u64_map_put(&pinned->ranges, ptr, bytes);
    else if (family == CT_FAMILY_FREE_HOST || fn == CT_FN_cudaHostUnregister)
        ct_u64_map_remove(&pinned->ranges, ptr, &gone);
}

void ct_pinned_free(struct ct_pinned_memory *pinned)
{
    ct_u64_map_free(&pinned->ranges);
}
