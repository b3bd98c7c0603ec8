/*
 * libcudatrace.so as a CUDA injection library: the driver loads the file
 * CUDA_INJECTION64_PATH names during cuInit and calls its
 * InitializeInjection, which is the moment CUPTI is meant to start. It serves
 * launchers that scrub LD_PRELOAD, and programs that only use the driver
 * API (the preload's own start waits for a runtime call). Loaded this way
 * and not preloaded, the hooks interpose nothing, so every call in the trace
 * comes from CUPTI's callbacks; preloaded as well (`cudatrace run` sets
 * both), CUPTI simply starts at cuInit instead of after the first call.
 */
#include "preload/cupti/gpu_trace.h"
#include "preload/core/export.h"
#include "preload/core/init.h"

CT_EXPORT int InitializeInjection(void)
{
    ct_init_once();
    if (ct_tracing_allowed)
        ct_cupti_start(CT_CUPTI_AT_CUINIT);
    return 1;
}
