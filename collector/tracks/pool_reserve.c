/*
 * What cudaMallocAsync's pools hold of the device beyond their live
 * allocations, as a counter beside the live-memory one: the sum of each
 * pool's latest cudaMemPoolGetAttribute(cudaMemPoolAttrReservedMemCurrent)
 * answer, written at the answer's time. The runtime says it only when the
 * program asks (torch.cuda.memory_reserved() does under PyTorch's
 * cudaMallocAsync backend), so the counter steps at each answer and has
 * no value for a program that never asks. This counter is the one place
 * the answers are summed: the report reads the pools' peak and final from
 * it (viewer-export/model/pools.c).
 */
#include "collector/tracks/pool_reserve.h"

#include "collector/perfetto/process_tracks.h"
#include "common/u64_map.h"
#include "cudatrace/functions.h"
#include "cudatrace/runtime_attributes.h"

static struct ct_u64_map latest; /* pool -> its latest answer + 1 */
static uint64_t sum;

void ct_pool_reserve_note(const struct ct_record *r, uint64_t end_ns)
{
    /* The hook's arguments: the pool, 0, the attribute, the value read. */
    if (r->func != CT_FN_cudaMemPoolGetAttribute || r->result != 0 ||
        r->arg[2] != CT_POOL_ATTR_RESERVED_MEM_CURRENT)
        return;
    const uint64_t *before = ct_u64_map_find(&latest, r->arg[0]);
    sum = sum - (before ? *before - 1 : 0) + r->arg[3];
    ct_u64_map_put(&latest, r->arg[0], r->arg[3] + 1);
    ct_process_counter(CT_TRACK_POOL_RESERVED, end_ns, (int64_t)sum);
}
