/*
 * What the CUDA graphs' allocator holds, asked of the runtime by the
 * preload itself at the moments it can change, once an executable graph
 * with memory-allocation nodes has been made. The physical memory behind
 * such nodes is made when the graph is uploaded or first runs
 * (cudaGraphUpload: "Uses memory cached by stream to back the allocations
 * owned by graphExec"), goes back to the graphs' pool when freed, and to
 * the device only at cudaDeviceGraphMemTrim ("Blocks which are not in use
 * by a graph that is either currently executing or scheduled to execute
 * are freed"): no call the program makes says how much. So each graph
 * launch, upload, instantiation, executable graph's destruction and trim
 * is followed by a reading of cudaGraphMemAttrReservedMemCurrent and
 * UsedMemCurrent on the calling thread's device, sent as a CT_GRAPH_MEMORY
 * record when it changed. A process that never instantiates an allocation
 * node pays nothing; one that does, a query after each of those calls.
 */
#include "preload/hooks/graph_memory.h"

#include "preload/core/clock.h"
#include "preload/core/deferred.h"
#include "preload/hooks/cuda_call.h"
#include "preload/core/ring.h"

#define DEVICES 64

/* The latest reading sent per device, reserved and used: none is as good as
 * 0, what the graphs held before any was made. */
static _Atomic uint64_t sent[DEVICES][2];

void ct_graph_memory_follow(void)
{
    atomic_fetch_or(&ct_deferred, CT_DEFER_GRAPH_MEMORY);
}

static int may_change_graph_memory(unsigned func)
{
    switch (func) {
    case CT_FN_cudaGraphLaunch:
    case CT_FN_cudaGraphLaunch_ptsz:
    case CT_FN_cudaGraphUpload:
    case CT_FN_cudaGraphUpload_ptsz:
    case CT_FN_cudaGraphInstantiate:
    case CT_FN_cudaGraphInstantiateWithFlags:
    case CT_FN_cudaGraphInstantiateWithParams:
    case CT_FN_cudaGraphInstantiateWithParams_ptsz:
    case CT_FN_cudaGraphExecDestroy:
    case CT_FN_cudaDeviceGraphMemTrim:
        return 1;
    default:
        return 0;
    }
}

/* Reads one attribute; 0 when the runtime would not say. `pending`: an
 * error was pending before our queries, so none of theirs is cleared. */
static uint64_t read_attribute(int device, enum cudaGraphMemAttributeType attr, int pending)
{
    CT_REAL(get, cudaDeviceGetGraphMemAttribute, (int, enum cudaGraphMemAttributeType, void *));
    uint64_t value = 0;
    if (!get)
        return 0;
    cudaError_t r = get(device, attr, &value);
    ct_cuda_forget_own_error(pending, r);
    return r == cudaSuccess ? value : 0;
}

/* The calling thread's device, and what the graphs' allocator reserves and
 * uses on it; 0 when the device could not be read. */
static int read_graph_memory(int *device, uint64_t *reserved, uint64_t *used)
{
    CT_REAL(get_device, cudaGetDevice, (int *));
    if (!get_device)
        return 0;
    int pending = ct_cuda_error_pending();
    cudaError_t r = get_device(device);
    ct_cuda_forget_own_error(pending, r);
    if (r != cudaSuccess || *device < 0 || *device >= DEVICES)
        return 0;
    *reserved = read_attribute(*device, cudaGraphMemAttrReservedMemCurrent, pending);
    *used = read_attribute(*device, cudaGraphMemAttrUsedMemCurrent, pending);
    return 1;
}

void ct_graph_memory_after(unsigned func)
{
    if (!may_change_graph_memory(func))
        return;
    int device = 0, read;
    uint64_t reserved = 0, used = 0;
    CT_OWN_CALL(read = read_graph_memory(&device, &reserved, &used));
    if (!read)
        return;
    int same = atomic_exchange(&sent[device][0], reserved) == reserved;
    same &= atomic_exchange(&sent[device][1], used) == used;
    if (same)
        return;
    struct ct_ring *ring = ct_ring_current();
    if (!ring)
        return;
    uint64_t now = ct_clock_now();
    struct ct_record rec = {.type = CT_REC_GRAPH,
                            .func = CT_GRAPH_MEMORY,
                            .begin = now,
                            .end = now,
                            .arg = {(uint64_t)device, reserved, used}};
    ct_emit_record(ring, &rec, 1);
}
