/*
 * A pool of cudaMallocAsync holds device memory beyond what its live
 * allocations use, until it gives it back at a synchronisation (past its
 * release threshold) or a cudaMemPoolTrimTo; no call the tracer sees says
 * how much, and the runtime tells only when asked: cudaMemPoolGetAttribute
 * with cudaMemPoolAttrReservedMemCurrent, which is what
 * torch.cuda.memory_reserved() asks under PyTorch's cudaMallocAsync
 * backend. So the report keeps each answer with its time, and sums the
 * pools' latest answers in time order: the most they held together as far
 * as the answers show, and what they held when last asked. Between two
 * answers the reserve is not known, so the peak is a floor.
 */
#include "viewer-export/model/pools.h"

#include <stdlib.h>

#include "common/array.h"
#include "cudatrace/functions.h"
#include "cudatrace/trace_names.h"

#define RESERVED_MEM_CURRENT 5 /* cudaMemPoolAttrReservedMemCurrent */

void ct_pool_reserve_slice(struct ct_pool_reserve *r, int fn, const struct ct_event *e)
{
    if (ct_event_int(e, ct_key_result, 0) != 0)
        return;
    if (fn == CT_FN_cudaMemPoolTrimTo) {
        r->trims++;
        return;
    }
    if (fn != CT_FN_cudaMemPoolGetAttribute ||
        ct_event_int(e, ct_key_attribute, 0) != RESERVED_MEM_CURRENT)
        return;
    r->readings = ct_array_grow(r->readings, r->count, sizeof *r->readings);
    r->readings[r->count++] =
        (struct ct_pool_reading){e->end, (uint64_t)ct_event_int(e, ct_key_handle, 0),
                                 (uint64_t)ct_event_int(e, ct_key_value, 0)};
}

static int by_time(const void *a, const void *b)
{
    uint64_t x = ((const struct ct_pool_reading *)a)->ts,
             y = ((const struct ct_pool_reading *)b)->ts;
    return (x > y) - (x < y);
}

void ct_pool_reserve_summarise(const struct ct_pool_reserve *r, struct ct_pool_summary *out)
{
    *out = (struct ct_pool_summary){.readings = r->count, .trims = r->trims};
    struct ct_pool_reading *sorted = malloc((r->count + 1) * sizeof *sorted);
    struct ct_pool_reading *latest = malloc((r->count + 1) * sizeof *latest); /* by pool */
    if (!sorted || !latest)
        abort();
    for (size_t i = 0; i < r->count; i++)
        sorted[i] = r->readings[i];
    qsort(sorted, r->count, sizeof *sorted, by_time);
    uint64_t sum = 0;
    for (size_t i = 0; i < r->count; i++) {
        size_t k = 0;
        while (k < out->pools && latest[k].pool != sorted[i].pool)
            k++;
        if (k == out->pools)
            latest[out->pools++] = (struct ct_pool_reading){0, sorted[i].pool, 0};
        sum = sum - latest[k].bytes + sorted[i].bytes;
        latest[k].bytes = sorted[i].bytes;
        if (sum > out->peak_bytes)
            out->peak_bytes = sum;
    }
    out->final_bytes = sum;
    free(sorted);
    free(latest);
}

void ct_pool_reserve_free(struct ct_pool_reserve *r)
{
    free(r->readings);
    r->readings = NULL;
    r->count = 0;
}
