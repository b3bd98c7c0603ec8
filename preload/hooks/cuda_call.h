/*
 * Calls the preload makes into the real runtime on its own account (versions,
 * device names, kernel names). They must leave the program's view of CUDA
 * exactly as it was: the runtime's sticky "last error" is per thread, so a
 * query of ours that fails while no error was pending is cleared again.
 */
#ifndef CT_PRELOAD_CUDA_CALL_H
#define CT_PRELOAD_CUDA_CALL_H

#include <cuda_runtime_api.h>

#include "preload/cupti/gpu_trace.h"
#include "preload/hooks/resolve.h"

/* Declares `fn`, the real `name` with prototype `params`, or NULL. */
#define CT_REAL(fn, name, params)                                                                  \
    static _Atomic(void *) fn##_slot;                                                              \
    cudaError_t(*fn) params = (cudaError_t(*) params)ct_real_function(&fn##_slot, #name)

/* Runs `statement` as a call of our own, which CUPTI's callbacks skip. */
#define CT_OWN_CALL(statement)                                                                     \
    do {                                                                                           \
        ct_cupti_own_calls++;                                                                      \
        statement;                                                                                 \
        ct_cupti_own_calls--;                                                                      \
    } while (0)

/* Whether an error is pending on this thread (without clearing it). */
int ct_cuda_error_pending(void);
/* Clears the error our own failed query left, if none was pending before. */
void ct_cuda_forget_own_error(int was_pending, cudaError_t result);

#endif
