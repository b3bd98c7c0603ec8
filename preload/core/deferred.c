/*
 * Runs deferred work from a hook, after the program's call returned. The
 * version and device queries wait for a call that initialises CUDA: after a
 * cudaRuntimeGetVersion, cudaDriverGetVersion or error query alone, our own
 * cudaGetDeviceCount would load and start the driver where the program had
 * not (and fix the visible devices before the program chose them). CUPTI
 * starts at the same moment, for the same reason. The libraries' own version
 * getters load nothing, so they are asked at the first call of any kind: a
 * framework that finds no driver may make no other (and again at that
 * moment, for the libraries loaded since); a process that made no CUDA
 * call at all (a framework that loaded cuBLAS through ctypes and found no
 * driver) is asked at exit. Once graphs with memory-allocation nodes
 * exist, the calls that may change their memory are followed by a reading
 * of it (hooks/graph_memory.c).
 */
#include "preload/core/deferred.h"

#include "preload/hooks/cuda_info.h"
#include "preload/hooks/graph_memory.h"
#include "preload/cupti/gpu_trace.h"
#include "cudatrace/functions.h"
#include "preload/loader/loader_view.h"
#include "preload/core/ring.h"

_Atomic unsigned ct_deferred;

static int initialises_cuda(unsigned func)
{
    return func != CT_FN_cudaRuntimeGetVersion && func != CT_FN_cudaDriverGetVersion &&
           func != CT_FN_cudaGetLastError && func != CT_FN_cudaPeekAtLastError;
}

/* By whichever thread clears the flag first. */
static void ask_library_versions(void)
{
    if (atomic_fetch_and(&ct_deferred, ~(unsigned)CT_DEFER_LIBRARY_VERSIONS) &
        CT_DEFER_LIBRARY_VERSIONS) {
        struct ct_ring *ring = ct_ring_current();
        if (ring)
            ct_cuda_library_versions_record(ring);
    }
}

void ct_deferred_at_exit(void)
{
    if (atomic_load(&ct_deferred) & CT_DEFER_LIBRARY_VERSIONS)
        ask_library_versions();
}

void ct_deferred_run(unsigned func)
{
    unsigned due = atomic_load(&ct_deferred);
    if (due & CT_DEFER_LIBRARY_VERSIONS)
        ask_library_versions();
    if ((due & CT_DEFER_CUDA_INFO) && initialises_cuda(func) &&
        (atomic_fetch_and(&ct_deferred, ~(unsigned)CT_DEFER_CUDA_INFO) & CT_DEFER_CUDA_INFO)) {
        struct ct_ring *ring = ct_ring_current();
        ct_cupti_start(ring ? ct_cuda_info_record(ring) : -1);
    }
    if (due & CT_DEFER_LOOK)
        ct_loader_observe();
    if (due & CT_DEFER_GRAPH_MEMORY)
        ct_graph_memory_after(func);
}
