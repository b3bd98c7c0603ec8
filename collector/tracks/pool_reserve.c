/*
 * What the runtime's own allocators hold of the device, as counters beside
 * the live-memory ones: cudaMallocAsync's pools (the sum of each pool's
 * latest cudaMemPoolGetAttribute(cudaMemPoolAttrReservedMemCurrent)
 * answer) and the CUDA graphs' allocator for memory-allocation nodes (the
 * sum of each device's latest
 * cudaDeviceGetGraphMemAttribute(cudaGraphMemAttrReservedMemCurrent)
 * answer), each written at the answer's time. The runtime says them only
 * when asked: the pools' when the program asks (torch.cuda.memory_reserved()
 * does under PyTorch's cudaMallocAsync backend), so that counter steps at
 * each answer and has no value for a program that never asks; the graphs'
 * also when the preload asks, after each call that may change it once
 * graphs with allocation nodes exist (CT_GRAPH_MEMORY). These counters are the one place
 * the answers are summed: the report reads peak and final from them
 * (viewer-export/model/pools.c, and the graphs as a memory source).
 */
#include "collector/tracks/pool_reserve.h"

#include "cudatrace/functions.h"
#include "cudatrace/runtime_attributes.h"

void ct_pool_reserve_start(struct ct_pool_reserve *p, struct ct_process *process)
{
    *p = (struct ct_pool_reserve){.process = process};
}

static void answer(struct ct_process *process, struct ct_reserve *r, enum ct_process_track track,
                   uint64_t key, uint64_t bytes, uint64_t end_ns)
{
    const uint64_t *before = ct_u64_map_find(&r->latest, key);
    r->sum = r->sum - (before ? *before - 1 : 0) + bytes;
    ct_u64_map_put(&r->latest, key, bytes + 1);
    ct_process_counter(process, track, end_ns, (int64_t)r->sum);
}

void ct_pool_reserve_graphs_read(struct ct_pool_reserve *p, uint32_t device, uint64_t reserved,
                                 uint64_t ns)
{
    answer(p->process, &p->graphs, CT_TRACK_GRAPH_RESERVED, (uint64_t)device + 1, reserved, ns);
}

void ct_pool_reserve_note(struct ct_pool_reserve *p, const struct ct_record *r, uint64_t end_ns)
{
    if (r->result != 0)
        return;
    /* The hooks' arguments: the pool, 0, the attribute, the value read;
     * the device, the attribute, the value read. */
    if (r->func == CT_FN_cudaMemPoolGetAttribute && r->arg[2] == CT_POOL_ATTR_RESERVED_MEM_CURRENT)
        answer(p->process, &p->pools, CT_TRACK_POOL_RESERVED, r->arg[0], r->arg[3], end_ns);
    else if (r->func == CT_FN_cudaDeviceGetGraphMemAttribute &&
             r->arg[1] == CT_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)
        answer(p->process, &p->graphs, CT_TRACK_GRAPH_RESERVED, r->arg[0] + 1, r->arg[2], end_ns);
}
