/*
 * A pool of cudaMallocAsync holds device memory beyond what its live
 * allocations use, until it gives it back at a synchronisation (past its
 * release threshold) or a cudaMemPoolTrimTo; no call the tracer sees says
 * how much, and the runtime tells only when asked: cudaMemPoolGetAttribute
 * with cudaMemPoolAttrReservedMemCurrent, which is what
 * torch.cuda.memory_reserved() asks under PyTorch's cudaMallocAsync
 * backend. The collector sums the pools' latest answers into a counter
 * (collector/tracks/pool_reserve.c); the report takes the peak and final
 * from it, as it takes the live bytes from theirs, and counts from the call
 * slices only the readings, the pools read and the trims. Between two
 * answers the reserve is not known, so the peak is a floor.
 */
#include "viewer-export/model/pools.h"

#include <stdlib.h>

#include "common/array.h"

#include "cudatrace/functions.h"
#include "cudatrace/runtime_attributes.h"
#include "cudatrace/trace_names.h"

void ct_pool_reserve_slice(struct ct_pool_reserve *r, int fn, const struct ct_event *e)
{
    if (ct_event_int(e, ct_key_result, 0) != 0)
        return;
    if (fn == CT_FN_cudaMemPoolTrimTo) {
        r->trims++;
        return;
    }
    if (fn != CT_FN_cudaMemPoolGetAttribute ||
        ct_event_int(e, ct_key_attribute, 0) != CT_POOL_ATTR_RESERVED_MEM_CURRENT)
        return;
    r->readings++;
    ct_u64_map_put(&r->pools_read, (uint64_t)ct_event_int(e, ct_key_handle, 0), 1);
}

void ct_pool_reserve_counter(struct ct_pool_reserve *r, uint64_t ts, double bytes)
{
    if (bytes > r->peak_bytes)
        r->peak_bytes = bytes;
    if (ts >= r->final_ts) {
        r->final_bytes = bytes;
        r->final_ts = ts;
    }
    r->points = ct_array_grow(r->points, r->point_count, sizeof *r->points);
    r->points[r->point_count++] = (struct ct_pool_point){ts, bytes};
}

int ct_pool_reserve_at(const struct ct_pool_reserve *r, uint64_t ts, double *bytes)
{
    const struct ct_pool_point *latest = NULL;
    for (size_t i = 0; i < r->point_count; i++)
        if (r->points[i].ts <= ts && (!latest || r->points[i].ts >= latest->ts))
            latest = &r->points[i];
    if (latest)
        *bytes = latest->bytes;
    return latest != NULL;
}

void ct_pool_reserve_free(struct ct_pool_reserve *r)
{
    ct_u64_map_free(&r->pools_read);
    free(r->points);
    *r = (struct ct_pool_reserve){0};
}
