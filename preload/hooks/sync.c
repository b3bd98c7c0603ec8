/*
 * Synchronisation and query hooks: the calls where the host waits for (or
 * asks about) the GPU, which is where sync stalls show.
 */
#include "preload/hooks/hook.h"

CT_HOOK(cudaDeviceSynchronize, (void), (), 0, 0, 0, 0, 0)
CT_HOOK(cudaEventSynchronize, (cudaEvent_t event), (event), CT_PTR(event), 0, 0, 0, 0)
CT_HOOK(cudaEventQuery, (cudaEvent_t event), (event), CT_PTR(event), 0, 0, 0, 0)

#define HOOK_STREAM_ONLY(name)                                                                     \
    CT_HOOK(name, (cudaStream_t stream), (stream), CT_PTR(stream), 0, 0, 0, 0)
HOOK_STREAM_ONLY(cudaStreamSynchronize)
HOOK_STREAM_ONLY(cudaStreamSynchronize_ptsz)
HOOK_STREAM_ONLY(cudaStreamQuery)
HOOK_STREAM_ONLY(cudaStreamQuery_ptsz)

#define HOOK_WAIT_EVENT(name)                                                                      \
    CT_HOOK(name, (cudaStream_t stream, cudaEvent_t event, unsigned int flags),                    \
            (stream, event, flags), CT_PTR(stream), CT_PTR(event), flags, 0, 0)
HOOK_WAIT_EVENT(cudaStreamWaitEvent)
HOOK_WAIT_EVENT(cudaStreamWaitEvent_ptsz)
