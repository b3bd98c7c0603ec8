/*
 * Runs deferred work from a hook, after the program's call returned. The
 * version and device queries wait for a call that initialises CUDA: after a
 * cudaRuntimeGetVersion, cudaDriverGetVersion or error query alone, our own
 * cudaGetDeviceCount would load and start the driver where the program had
 * not (and fix the visible devices before the program chose them). CUPTI
 * starts at the same moment, for the same reason.
 */
#include "preload/core/deferred.h"

#include "preload/hooks/cuda_info.h"
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

void ct_deferred_run(unsigned func)
{
    unsigned due = atomic_load(&ct_deferred);
    if ((due & CT_DEFER_CUDA_INFO) && initialises_cuda(func) &&
        (atomic_fetch_and(&ct_deferred, ~(unsigned)CT_DEFER_CUDA_INFO) & CT_DEFER_CUDA_INFO)) {
        struct ct_ring *ring = ct_ring_current();
        ct_cupti_start(ring ? ct_cuda_info_record(ring) : -1);
    }
    if (due & CT_DEFER_LOOK)
        ct_loader_observe();
}
