/*
 * The last-error bookkeeping shared by every query the preload makes itself.
 */
#include "preload/hooks/cuda_call.h"

int ct_cuda_error_pending(void)
{
    CT_REAL(peek, cudaPeekAtLastError, (void));
    int pending = 1;
    if (peek)
        CT_OWN_CALL(pending = peek() != cudaSuccess);
    return pending;
}

void ct_cuda_forget_own_error(int was_pending, cudaError_t result)
{
    CT_REAL(get_last, cudaGetLastError, (void));
    if (result != cudaSuccess && !was_pending && get_last)
        CT_OWN_CALL(get_last());
}
