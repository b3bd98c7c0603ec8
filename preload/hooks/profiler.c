/*
 * The profiler API: cudaProfilerStart and cudaProfilerStop, which
 * torch.cuda.profiler.start()/stop() call and nsys's
 * --capture-range=cudaProfilerApi waits for. Under
 * CUDATRACE_CAPTURE=profiler they open and close the capture window
 * (preload/core/capture.c), flipped after the real call returns and before
 * its record, so a window holds its start call and not its stop call.
 */
#include <cuda_profiler_api.h>

#include "preload/core/capture.h"
#include "preload/hooks/hook.h"

CT_HOOK(cudaProfilerStart, (void), (), ct_capture_profiler(1), 0, 0, 0, 0)
CT_HOOK(cudaProfilerStop, (void), (), ct_capture_profiler(0), 0, 0, 0, 0)
