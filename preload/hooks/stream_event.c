/*
 * Stream and event lifetime hooks: creation (the handle is recorded so later
 * slices that name it can be matched), destruction, event records and the
 * elapsed time between two events.
 */
#include "preload/hooks/hook.h"

CT_HOOK(cudaStreamCreate, (cudaStream_t * stream), (stream), CT_OUT(stream), 0, 0, 0, 0)
CT_HOOK(cudaStreamCreateWithFlags, (cudaStream_t * stream, unsigned int flags), (stream, flags),
        CT_OUT(stream), flags, 0, 0, 0)
CT_HOOK(cudaStreamCreateWithPriority, (cudaStream_t * stream, unsigned int flags, int priority),
        (stream, flags, priority), CT_OUT(stream), flags, 0, 0, 0)
CT_HOOK(cudaStreamDestroy, (cudaStream_t stream), (stream), CT_PTR(stream), 0, 0, 0, 0)

CT_HOOK(cudaEventCreate, (cudaEvent_t * event), (event), CT_OUT(event), 0, 0, 0, 0)
CT_HOOK(cudaEventCreateWithFlags, (cudaEvent_t * event, unsigned int flags), (event, flags),
        CT_OUT(event), flags, 0, 0, 0)
CT_HOOK(cudaEventDestroy, (cudaEvent_t event), (event), CT_PTR(event), 0, 0, 0, 0)

#define HOOK_EVENT_RECORD(name)                                                                    \
    CT_HOOK(name, (cudaEvent_t event, cudaStream_t stream), (event, stream), CT_PTR(event),        \
            CT_PTR(stream), 0, 0, 0)
HOOK_EVENT_RECORD(cudaEventRecord)
HOOK_EVENT_RECORD(cudaEventRecord_ptsz)

#define HOOK_EVENT_RECORD_WITH_FLAGS(name)                                                         \
    CT_HOOK(name, (cudaEvent_t event, cudaStream_t stream, unsigned int flags),                    \
            (event, stream, flags), CT_PTR(event), CT_PTR(stream), flags, 0, 0)
HOOK_EVENT_RECORD_WITH_FLAGS(cudaEventRecordWithFlags)
HOOK_EVENT_RECORD_WITH_FLAGS(cudaEventRecordWithFlags_ptsz)

/* In whole nanoseconds, so the record stays integers; the runtime's own
 * resolution is about half a microsecond. */
static int64_t elapsed_ns(cudaError_t result, const float *ms)
{
    return result == cudaSuccess && ms ? (int64_t)((double)*ms * 1e6) : 0;
}

CT_HOOK(cudaEventElapsedTime, (float *ms, cudaEvent_t first, cudaEvent_t last), (ms, first, last),
        CT_PTR(first), CT_PTR(last), elapsed_ns(result, ms), 0, 0)
