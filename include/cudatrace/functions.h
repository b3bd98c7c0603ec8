/*
 * The list of CUDA runtime entry points cudatrace interposes, each with the
 * family that says how its record's arguments are laid out. It is an X-macro
 * so that the preload's function ids, the collector's slice names and the
 * argument decoding can never disagree: add a function here and every side
 * learns of it. The third column says whether the function takes a stream
 * (whose handle is then worth showing even when it is 0, the legacy default
 * stream). Ids are positions in this list, so the list only grows at the
 * end within one CT_RECORD_VERSION. The driver functions at the end are
 * not hooked: CUPTI's callbacks record them (preload/cupti/callbacks.c),
 * with the arguments laid out as their runtime twins'.
 */
#ifndef CUDATRACE_FUNCTIONS_H
#define CUDATRACE_FUNCTIONS_H

#include <stdint.h>

/* How a call record's arg[] is to be read, family by family. */
enum ct_family {
    CT_FAMILY_ALLOC_DEVICE,  /* arg: ptr, bytes, stream, pool                   */
    CT_FAMILY_ALLOC_HOST,    /* arg: ptr, bytes, flags                          */
    CT_FAMILY_FREE_DEVICE,   /* arg: ptr, -, stream                             */
    CT_FAMILY_FREE_HOST,     /* arg: ptr                                        */
    CT_FAMILY_COPY,          /* arg: dst, bytes, stream, kind, src              */
    CT_FAMILY_SET,           /* arg: ptr, bytes, stream, value                  */
    CT_FAMILY_LAUNCH,        /* arg: func, stream, grid, block, smem            */
    CT_FAMILY_GRAPH,         /* arg: graph exec, stream                         */
    CT_FAMILY_SYNC_DEVICE,   /* no args                                         */
    CT_FAMILY_SYNC_STREAM,   /* arg: stream                                     */
    CT_FAMILY_SYNC_EVENT,    /* arg: event                                      */
    CT_FAMILY_WAIT_EVENT,    /* arg: stream, event, flags                       */
    CT_FAMILY_QUERY_STREAM,  /* arg: stream                                     */
    CT_FAMILY_QUERY_EVENT,   /* arg: event                                      */
    CT_FAMILY_GET_INT,       /* arg: int written*, what it is (enum ct_wrote)   */
    CT_FAMILY_DEVICE,        /* arg: device, attribute, value*, flags, pool     */
    CT_FAMILY_MEM_INFO,      /* arg: free*, total*                              */
    CT_FAMILY_HANDLE,        /* arg: handle, flags, attribute, value*, bytes    */
    CT_FAMILY_EVENT_RECORD,  /* arg: event, stream, flags                       */
    CT_FAMILY_ELAPSED,       /* arg: start event, end event, nanoseconds*       */
    CT_FAMILY_HOST_REGISTER, /* arg: ptr, bytes, flags                          */
    CT_FAMILY_PLAIN,         /* no args                                         */
    CT_FAMILY_VMM,           /* arg: ptr, bytes, handle, offset or device, count */
    CT_FAMILY_GRAPH_BUILD,   /* arg: graph, stream, node or exec, mode/flags/device, bytes */
    CT_FAMILY_COUNT
};
/* (*: written by the call, so meaningful only when it succeeded. A handle the
 * call creates is one of those; attribute 0 stands for none, since CUDA's
 * device and pool attributes start at 1; a DEVICE call that acts on the
 * current device records CT_NO_DEVICE, a value no int argument can have.) */
#define CT_NO_DEVICE ((uint64_t)INT64_MIN)

/* What the int of a CT_FAMILY_GET_INT call is; it names the annotation. */
enum ct_wrote { CT_WROTE_COUNT, CT_WROTE_DEVICE, CT_WROTE_VERSION, CT_WROTE_FLAGS, CT_WROTE_KINDS };

#define CT_FOR_EACH_FUNCTION(X)                                                                    \
    X(cudaMalloc, CT_FAMILY_ALLOC_DEVICE, 0)                                                       \
    X(cudaFree, CT_FAMILY_FREE_DEVICE, 0)                                                          \
    X(cudaMallocHost, CT_FAMILY_ALLOC_HOST, 0)                                                     \
    X(cudaHostAlloc, CT_FAMILY_ALLOC_HOST, 0)                                                      \
    X(cudaFreeHost, CT_FAMILY_FREE_HOST, 0)                                                        \
    X(cudaMallocManaged, CT_FAMILY_ALLOC_DEVICE, 0)                                                \
    X(cudaMallocPitch, CT_FAMILY_ALLOC_DEVICE, 0)                                                  \
    X(cudaMallocAsync, CT_FAMILY_ALLOC_DEVICE, 1)                                                  \
    X(cudaMallocAsync_ptsz, CT_FAMILY_ALLOC_DEVICE, 1)                                             \
    X(cudaFreeAsync, CT_FAMILY_FREE_DEVICE, 1)                                                     \
    X(cudaFreeAsync_ptsz, CT_FAMILY_FREE_DEVICE, 1)                                                \
    X(cudaMemcpy, CT_FAMILY_COPY, 0)                                                               \
    X(cudaMemcpy_ptds, CT_FAMILY_COPY, 0)                                                          \
    X(cudaMemcpyAsync, CT_FAMILY_COPY, 1)                                                          \
    X(cudaMemcpyAsync_ptsz, CT_FAMILY_COPY, 1)                                                     \
    X(cudaMemcpyBatchAsync, CT_FAMILY_COPY, 1)                                                     \
    X(cudaMemcpyBatchAsync_ptsz, CT_FAMILY_COPY, 1)                                                \
    X(cudaMemcpy2D, CT_FAMILY_COPY, 0)                                                             \
    X(cudaMemcpy2D_ptds, CT_FAMILY_COPY, 0)                                                        \
    X(cudaMemcpy2DAsync, CT_FAMILY_COPY, 1)                                                        \
    X(cudaMemcpy2DAsync_ptsz, CT_FAMILY_COPY, 1)                                                   \
    X(cudaMemcpyPeer, CT_FAMILY_COPY, 0)                                                           \
    X(cudaMemcpyPeerAsync, CT_FAMILY_COPY, 1)                                                      \
    X(cudaMemset, CT_FAMILY_SET, 0)                                                                \
    X(cudaMemset_ptds, CT_FAMILY_SET, 0)                                                           \
    X(cudaMemsetAsync, CT_FAMILY_SET, 1)                                                           \
    X(cudaMemsetAsync_ptsz, CT_FAMILY_SET, 1)                                                      \
    X(cudaLaunchKernel, CT_FAMILY_LAUNCH, 1)                                                       \
    X(cudaLaunchKernel_ptsz, CT_FAMILY_LAUNCH, 1)                                                  \
    X(__cudaLaunchKernel, CT_FAMILY_LAUNCH, 1)                                                     \
    X(__cudaLaunchKernel_ptsz, CT_FAMILY_LAUNCH, 1)                                                \
    X(cudaLaunchKernelExC, CT_FAMILY_LAUNCH, 1)                                                    \
    X(cudaLaunchKernelExC_ptsz, CT_FAMILY_LAUNCH, 1)                                               \
    X(cudaLaunchCooperativeKernel, CT_FAMILY_LAUNCH, 1)                                            \
    X(cudaLaunchCooperativeKernel_ptsz, CT_FAMILY_LAUNCH, 1)                                       \
    X(cudaGraphLaunch, CT_FAMILY_GRAPH, 1)                                                         \
    X(cudaGraphLaunch_ptsz, CT_FAMILY_GRAPH, 1)                                                    \
    X(cudaDeviceSynchronize, CT_FAMILY_SYNC_DEVICE, 0)                                             \
    X(cudaStreamSynchronize, CT_FAMILY_SYNC_STREAM, 1)                                             \
    X(cudaStreamSynchronize_ptsz, CT_FAMILY_SYNC_STREAM, 1)                                        \
    X(cudaEventSynchronize, CT_FAMILY_SYNC_EVENT, 0)                                               \
    X(cudaStreamWaitEvent, CT_FAMILY_WAIT_EVENT, 1)                                                \
    X(cudaStreamWaitEvent_ptsz, CT_FAMILY_WAIT_EVENT, 1)                                           \
    X(cudaStreamQuery, CT_FAMILY_QUERY_STREAM, 1)                                                  \
    X(cudaStreamQuery_ptsz, CT_FAMILY_QUERY_STREAM, 1)                                             \
    X(cudaEventQuery, CT_FAMILY_QUERY_EVENT, 0)                                                    \
    X(cudaGetDeviceCount, CT_FAMILY_GET_INT, 0)                                                    \
    X(cudaGetDevice, CT_FAMILY_GET_INT, 0)                                                         \
    X(cudaSetDevice, CT_FAMILY_DEVICE, 0)                                                          \
    X(cudaGetDeviceProperties, CT_FAMILY_DEVICE, 0)                                                \
    X(cudaDeviceGetAttribute, CT_FAMILY_DEVICE, 0)                                                 \
    X(cudaSetDeviceFlags, CT_FAMILY_DEVICE, 0)                                                     \
    X(cudaGetDeviceFlags, CT_FAMILY_GET_INT, 0)                                                    \
    X(cudaDeviceReset, CT_FAMILY_PLAIN, 0)                                                         \
    X(cudaInitDevice, CT_FAMILY_DEVICE, 0)                                                         \
    X(cudaRuntimeGetVersion, CT_FAMILY_GET_INT, 0)                                                 \
    X(cudaDriverGetVersion, CT_FAMILY_GET_INT, 0)                                                  \
    X(cudaMemGetInfo, CT_FAMILY_MEM_INFO, 0)                                                       \
    X(cudaStreamCreate, CT_FAMILY_HANDLE, 0)                                                       \
    X(cudaStreamCreateWithFlags, CT_FAMILY_HANDLE, 0)                                              \
    X(cudaStreamCreateWithPriority, CT_FAMILY_HANDLE, 0)                                           \
    X(cudaStreamDestroy, CT_FAMILY_HANDLE, 0)                                                      \
    X(cudaEventCreate, CT_FAMILY_HANDLE, 0)                                                        \
    X(cudaEventCreateWithFlags, CT_FAMILY_HANDLE, 0)                                               \
    X(cudaEventRecord, CT_FAMILY_EVENT_RECORD, 1)                                                  \
    X(cudaEventRecord_ptsz, CT_FAMILY_EVENT_RECORD, 1)                                             \
    X(cudaEventRecordWithFlags, CT_FAMILY_EVENT_RECORD, 1)                                         \
    X(cudaEventRecordWithFlags_ptsz, CT_FAMILY_EVENT_RECORD, 1)                                    \
    X(cudaEventDestroy, CT_FAMILY_HANDLE, 0)                                                       \
    X(cudaEventElapsedTime, CT_FAMILY_ELAPSED, 0)                                                  \
    X(cudaHostRegister, CT_FAMILY_HOST_REGISTER, 0)                                                \
    X(cudaHostUnregister, CT_FAMILY_HOST_REGISTER, 0)                                              \
    X(cudaDeviceGetDefaultMemPool, CT_FAMILY_DEVICE, 0)                                            \
    X(cudaDeviceGetMemPool, CT_FAMILY_DEVICE, 0)                                                   \
    X(cudaDeviceSetMemPool, CT_FAMILY_DEVICE, 0)                                                   \
    X(cudaMemPoolCreate, CT_FAMILY_HANDLE, 0)                                                      \
    X(cudaMemPoolDestroy, CT_FAMILY_HANDLE, 0)                                                     \
    X(cudaMemPoolTrimTo, CT_FAMILY_HANDLE, 0)                                                      \
    X(cudaMemPoolSetAttribute, CT_FAMILY_HANDLE, 0)                                                \
    X(cudaMemPoolGetAttribute, CT_FAMILY_HANDLE, 0)                                                \
    X(cudaMallocFromPoolAsync, CT_FAMILY_ALLOC_DEVICE, 1)                                          \
    X(cudaMallocFromPoolAsync_ptsz, CT_FAMILY_ALLOC_DEVICE, 1)                                     \
    X(cudaGraphInstantiate, CT_FAMILY_GRAPH_BUILD, 0)                                              \
    X(cudaGraphInstantiateWithFlags, CT_FAMILY_GRAPH_BUILD, 0)                                     \
    X(cudaGraphInstantiateWithParams, CT_FAMILY_GRAPH_BUILD, 0)                                    \
    X(cudaGraphInstantiateWithParams_ptsz, CT_FAMILY_GRAPH_BUILD, 0)                               \
    X(cudaGetLastError, CT_FAMILY_PLAIN, 0)                                                        \
    X(cudaPeekAtLastError, CT_FAMILY_PLAIN, 0)                                                     \
    X(cudaProfilerStart, CT_FAMILY_PLAIN, 0)                                                       \
    X(cudaProfilerStop, CT_FAMILY_PLAIN, 0)                                                        \
    X(cudaDeviceGetGraphMemAttribute, CT_FAMILY_DEVICE, 0)                                         \
    X(cudaStreamBeginCapture, CT_FAMILY_GRAPH_BUILD, 1)                                            \
    X(cudaStreamBeginCapture_ptsz, CT_FAMILY_GRAPH_BUILD, 1)                                       \
    X(cudaStreamBeginCaptureToGraph, CT_FAMILY_GRAPH_BUILD, 1)                                     \
    X(cudaStreamBeginCaptureToGraph_ptsz, CT_FAMILY_GRAPH_BUILD, 1)                                \
    X(cudaStreamEndCapture, CT_FAMILY_GRAPH_BUILD, 1)                                              \
    X(cudaStreamEndCapture_ptsz, CT_FAMILY_GRAPH_BUILD, 1)                                         \
    X(cudaGraphAddKernelNode, CT_FAMILY_GRAPH_BUILD, 0)                                            \
    X(cudaGraphAddMemcpyNode, CT_FAMILY_GRAPH_BUILD, 0)                                            \
    X(cudaGraphAddMemcpyNode1D, CT_FAMILY_GRAPH_BUILD, 0)                                          \
    X(cudaGraphAddMemsetNode, CT_FAMILY_GRAPH_BUILD, 0)                                            \
    X(cudaGraphAddMemAllocNode, CT_FAMILY_GRAPH_BUILD, 0)                                          \
    X(cudaGraphAddMemFreeNode, CT_FAMILY_GRAPH_BUILD, 0)                                           \
    X(cudaGraphUpload, CT_FAMILY_GRAPH_BUILD, 1)                                                   \
    X(cudaGraphUpload_ptsz, CT_FAMILY_GRAPH_BUILD, 1)                                              \
    X(cudaGraphExecUpdate, CT_FAMILY_GRAPH_BUILD, 0)                                               \
    X(cudaGraphExecDestroy, CT_FAMILY_GRAPH_BUILD, 0)                                              \
    X(cudaGraphDestroy, CT_FAMILY_GRAPH_BUILD, 0)                                                  \
    X(cudaDeviceGraphMemTrim, CT_FAMILY_GRAPH_BUILD, 0)                                            \
    X(cuLaunchKernel, CT_FAMILY_LAUNCH, 1)                                                         \
    X(cuLaunchKernelEx, CT_FAMILY_LAUNCH, 1)                                                       \
    X(cuLaunchCooperativeKernel, CT_FAMILY_LAUNCH, 1)                                              \
    X(cuGraphLaunch, CT_FAMILY_GRAPH, 1)                                                           \
    X(cuMemAlloc_v2, CT_FAMILY_ALLOC_DEVICE, 0)                                                    \
    X(cuMemAllocAsync, CT_FAMILY_ALLOC_DEVICE, 1)                                                  \
    X(cuMemAllocManaged, CT_FAMILY_ALLOC_DEVICE, 0)                                                \
    X(cuMemAllocPitch_v2, CT_FAMILY_ALLOC_DEVICE, 0)                                               \
    X(cuMemFree_v2, CT_FAMILY_FREE_DEVICE, 0)                                                      \
    X(cuMemFreeAsync, CT_FAMILY_FREE_DEVICE, 1)                                                    \
    X(cuMemAllocHost_v2, CT_FAMILY_ALLOC_HOST, 0)                                                  \
    X(cuMemHostAlloc, CT_FAMILY_ALLOC_HOST, 0)                                                     \
    X(cuMemFreeHost, CT_FAMILY_FREE_HOST, 0)                                                       \
    X(cuMemcpy, CT_FAMILY_COPY, 0)                                                                 \
    X(cuMemcpyAsync, CT_FAMILY_COPY, 1)                                                            \
    X(cuMemcpyHtoD_v2, CT_FAMILY_COPY, 0)                                                          \
    X(cuMemcpyDtoH_v2, CT_FAMILY_COPY, 0)                                                          \
    X(cuMemcpyDtoD_v2, CT_FAMILY_COPY, 0)                                                          \
    X(cuMemcpyHtoDAsync_v2, CT_FAMILY_COPY, 1)                                                     \
    X(cuMemcpyDtoHAsync_v2, CT_FAMILY_COPY, 1)                                                     \
    X(cuMemcpyDtoDAsync_v2, CT_FAMILY_COPY, 1)                                                     \
    X(cuMemsetD8_v2, CT_FAMILY_SET, 0)                                                             \
    X(cuMemsetD32_v2, CT_FAMILY_SET, 0)                                                            \
    X(cuMemsetD8Async, CT_FAMILY_SET, 1)                                                           \
    X(cuMemsetD32Async, CT_FAMILY_SET, 1)                                                          \
    X(cuCtxSynchronize, CT_FAMILY_SYNC_DEVICE, 0)                                                  \
    X(cuStreamSynchronize, CT_FAMILY_SYNC_STREAM, 1)                                               \
    X(cuEventSynchronize, CT_FAMILY_SYNC_EVENT, 0)                                                 \
    X(cuMemCreate, CT_FAMILY_VMM, 0)                                                               \
    X(cuMemRelease, CT_FAMILY_VMM, 0)                                                              \
    X(cuMemAddressReserve, CT_FAMILY_VMM, 0)                                                       \
    X(cuMemAddressFree, CT_FAMILY_VMM, 0)                                                          \
    X(cuMemMap, CT_FAMILY_VMM, 0)                                                                  \
    X(cuMemUnmap, CT_FAMILY_VMM, 0)                                                                \
    X(cuMemSetAccess, CT_FAMILY_VMM, 0)                                                            \
    X(cuStreamBeginCapture_v2, CT_FAMILY_GRAPH_BUILD, 1)                                           \
    X(cuStreamEndCapture, CT_FAMILY_GRAPH_BUILD, 1)                                                \
    X(cuGraphInstantiateWithFlags, CT_FAMILY_GRAPH_BUILD, 0)                                       \
    X(cuGraphUpload, CT_FAMILY_GRAPH_BUILD, 1)                                                     \
    X(cuGraphExecDestroy, CT_FAMILY_GRAPH_BUILD, 0)                                                \
    X(cuGraphDestroy, CT_FAMILY_GRAPH_BUILD, 0)

#define CT_FUNCTION_ENUM(name, family, takes_stream) CT_FN_##name,
enum ct_function { CT_FOR_EACH_FUNCTION(CT_FUNCTION_ENUM) CT_FN_COUNT };
#undef CT_FUNCTION_ENUM

/* The first driver function: the ones before it are hooked. */
#define CT_FN_FIRST_DRIVER CT_FN_cuLaunchKernel

/* The family of `fn`, CT_FAMILY_COUNT for none. Constant for a constant `fn`. */
static inline enum ct_family ct_function_family(unsigned fn)
{
#define CT_FUNCTION_FAMILY(name, family, takes_stream) [CT_FN_##name] = family,
    static const unsigned char families[CT_FN_COUNT] = {CT_FOR_EACH_FUNCTION(CT_FUNCTION_FAMILY)};
#undef CT_FUNCTION_FAMILY
    return fn < CT_FN_COUNT ? (enum ct_family)families[fn] : CT_FAMILY_COUNT;
}

/* Whether a call allocates or frees device or pinned memory (the
 * virtual-memory API's calls too): the few calls every memory figure
 * stands on, recorded whole-run, capture window or not. Constant for a
 * constant `fn`. */
static inline int ct_function_moves_memory(enum ct_function fn)
{
    enum ct_family family = ct_function_family(fn);
    return family <= CT_FAMILY_FREE_HOST || family == CT_FAMILY_VMM;
}

/* Whether a call's record is never dropped: the memory calls and
 * synchronisations, which the allocator view and the time in sync stand on
 * and which cost microseconds anyway. Constant for a constant `fn`. */
static inline int ct_function_is_kept(enum ct_function fn)
{
    enum ct_family family = ct_function_family(fn);
    return ct_function_moves_memory(fn) ||
           (family >= CT_FAMILY_SYNC_DEVICE && family <= CT_FAMILY_SYNC_EVENT);
}

/* Whether a hook notes its caller's return address as the call begins,
 * for the line of a call that never returns (the hang finding): every call
 * but the launches. Those are the hot path, a launch rarely blocks, and the
 * hang finding names the launch site of the kernel that never completed
 * anyway. The collector trusts the noted address only for these. Constant
 * for a constant `fn`. */
static inline int ct_function_notes_caller(enum ct_function fn)
{
    return ct_function_family(fn) != CT_FAMILY_LAUNCH;
}

/* Whether a call gives device or pinned memory back (a free; the
 * virtual-memory API's release and unmap): such a call counts when it
 * begins and the others when they return, the one order of the live bytes
 * that holds whatever the threads did. Constant for a constant `fn`. */
static inline int ct_function_gives_memory_back(enum ct_function fn)
{
    enum ct_family family = ct_function_family(fn);
    return family == CT_FAMILY_FREE_DEVICE || family == CT_FAMILY_FREE_HOST ||
           fn == CT_FN_cuMemRelease || fn == CT_FN_cuMemUnmap;
}

static inline const char *ct_function_name(enum ct_function fn)
{
#define CT_FUNCTION_NAME(name, family, takes_stream) [CT_FN_##name] = #name,
    static const char *const names[CT_FN_COUNT] = {CT_FOR_EACH_FUNCTION(CT_FUNCTION_NAME)};
#undef CT_FUNCTION_NAME
    return (unsigned)fn < CT_FN_COUNT ? names[fn] : "unknown";
}

#endif
