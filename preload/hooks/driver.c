/*
 * The one driver function the preload hooks: cuInit, the moment the program
 * (or a runtime inside one of its libraries) has started the driver itself.
 * CUPTI starts right after it returns, so that a program whose CUDA calls
 * never pass through a shared libcudart (XLA's static runtime, code that
 * only uses the driver API) gets CUPTI under a bare LD_PRELOAD too; the
 * runtime's own first call starts it otherwise (deferred.c), whichever comes
 * first. Programs linked against libcuda reach this through the PLT, those
 * that look it up with dlsym through dlsym_handle.c. Nothing else of the
 * driver is hooked: CUPTI's callbacks see every driver call however it was
 * found (docs/gpu.md).
 */
#include <cuda.h>

#include "preload/cupti/gpu_trace.h"
#include "preload/core/export.h"
#include "preload/core/init.h"
#include "preload/hooks/resolve.h"

CT_EXPORT CUresult cuInit(unsigned int flags)
{
    static _Atomic(void *) real_slot;
    void *found = ct_real_function_in(&real_slot, "cuda", "cuInit");
    if (!found)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult result = ((CUresult(*)(unsigned int))found)(flags);
    ct_init_once();
    if (result == CUDA_SUCCESS && ct_tracing_allowed)
        ct_cupti_start(CT_CUPTI_AT_CUINIT);
    return result;
}
