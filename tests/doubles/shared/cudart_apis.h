/*
 * The runtime entry points the CPU double of libcudart.so.13 exports, each with the CUPTI
 * runtime-domain callback id it reports under (the enum name minus CUPTI_RUNTIME_TRACE_CBID_:
 * the newest version of the name, as the current runtime reports). The runtime double builds its
 * exports, statistics and callbacks from this list and the CUPTI double its callback names, so
 * the two cannot disagree.
 */
#ifndef CT_CUDART_APIS_H
#define CT_CUDART_APIS_H

/* X(exported name, callback id name), in the order the statistics file lists them. */
#define CT_DOUBLE_APIS(X)                                                                          \
    X(cudaMalloc, cudaMalloc_v3020)                                                                \
    X(cudaFree, cudaFree_v3020)                                                                    \
    X(cudaMallocHost, cudaMallocHost_v3020)                                                        \
    X(cudaHostAlloc, cudaHostAlloc_v3020)                                                          \
    X(cudaFreeHost, cudaFreeHost_v3020)                                                            \
    X(cudaMallocManaged, cudaMallocManaged_v6000)                                                  \
    X(cudaMallocPitch, cudaMallocPitch_v3020)                                                      \
    X(cudaMallocAsync, cudaMallocAsync_v11020)                                                     \
    X(cudaMallocAsync_ptsz, cudaMallocAsync_ptsz_v11020)                                           \
    X(cudaFreeAsync, cudaFreeAsync_v11020)                                                         \
    X(cudaFreeAsync_ptsz, cudaFreeAsync_ptsz_v11020)                                               \
    X(cudaMemcpy, cudaMemcpy_v3020)                                                                \
    X(cudaMemcpy_ptds, cudaMemcpy_ptds_v7000)                                                      \
    X(cudaMemcpyAsync, cudaMemcpyAsync_v3020)                                                      \
    X(cudaMemcpyAsync_ptsz, cudaMemcpyAsync_ptsz_v7000)                                            \
    X(cudaMemcpyBatchAsync, cudaMemcpyBatchAsync_v13000)                                           \
    X(cudaMemcpyBatchAsync_ptsz, cudaMemcpyBatchAsync_ptsz_v13000)                                 \
    X(cudaMemcpy2D, cudaMemcpy2D_v3020)                                                            \
    X(cudaMemcpy2D_ptds, cudaMemcpy2D_ptds_v7000)                                                  \
    X(cudaMemcpy2DAsync, cudaMemcpy2DAsync_v3020)                                                  \
    X(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync_ptsz_v7000)                                        \
    X(cudaMemcpyPeer, cudaMemcpyPeer_v4000)                                                        \
    X(cudaMemcpyPeerAsync, cudaMemcpyPeerAsync_v4000)                                              \
    X(cudaMemset, cudaMemset_v3020)                                                                \
    X(cudaMemset_ptds, cudaMemset_ptds_v7000)                                                      \
    X(cudaMemsetAsync, cudaMemsetAsync_v3020)                                                      \
    X(cudaMemsetAsync_ptsz, cudaMemsetAsync_ptsz_v7000)                                            \
    X(cudaLaunchKernel, cudaLaunchKernel_v7000)                                                    \
    X(cudaLaunchKernel_ptsz, cudaLaunchKernel_ptsz_v7000)                                          \
    X(cudaLaunchKernelExC, cudaLaunchKernelExC_v11060)                                             \
    X(cudaLaunchKernelExC_ptsz, cudaLaunchKernelExC_ptsz_v11060)                                   \
    X(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel_v9000)                              \
    X(cudaLaunchCooperativeKernel_ptsz, cudaLaunchCooperativeKernel_ptsz_v9000)                    \
    X(__cudaGetKernel, __cudaGetKernel_v13000)                                                     \
    X(__cudaLaunchKernel, __cudaLaunchKernel_v13000)                                               \
    X(__cudaLaunchKernel_ptsz, __cudaLaunchKernel_ptsz_v13000)                                     \
    X(cudaGraphCreate, cudaGraphCreate_v10000)                                                     \
    X(cudaGraphInstantiate, cudaGraphInstantiate_v12000)                                           \
    X(cudaGraphLaunch, cudaGraphLaunch_v10000)                                                     \
    X(cudaGraphLaunch_ptsz, cudaGraphLaunch_ptsz_v10000)                                           \
    X(cudaGraphExecDestroy, cudaGraphExecDestroy_v10000)                                           \
    X(cudaGraphDestroy, cudaGraphDestroy_v10000)                                                   \
    X(cudaDeviceSynchronize, cudaDeviceSynchronize_v3020)                                          \
    X(cudaStreamSynchronize, cudaStreamSynchronize_v3020)                                          \
    X(cudaStreamSynchronize_ptsz, cudaStreamSynchronize_ptsz_v7000)                                \
    X(cudaEventSynchronize, cudaEventSynchronize_v3020)                                            \
    X(cudaStreamWaitEvent, cudaStreamWaitEvent_v3020)                                              \
    X(cudaStreamWaitEvent_ptsz, cudaStreamWaitEvent_ptsz_v7000)                                    \
    X(cudaStreamQuery, cudaStreamQuery_v3020)                                                      \
    X(cudaStreamQuery_ptsz, cudaStreamQuery_ptsz_v7000)                                            \
    X(cudaEventQuery, cudaEventQuery_v3020)                                                        \
    X(cudaRuntimeGetVersion, cudaRuntimeGetVersion_v3020)                                          \
    X(cudaDriverGetVersion, cudaDriverGetVersion_v3020)                                            \
    X(cudaGetDeviceCount, cudaGetDeviceCount_v3020)                                                \
    X(cudaGetDeviceProperties, cudaGetDeviceProperties_v12000)                                     \
    X(cudaFuncGetName, cudaFuncGetName_v12030)                                                     \
    X(cudaGetLastError, cudaGetLastError_v3020)                                                    \
    X(cudaPeekAtLastError, cudaPeekAtLastError_v3020)                                              \
    X(cudaGetErrorName, cudaGetErrorName_v6050)                                                    \
    X(cudaGetErrorString, cudaGetErrorString_v3020)                                                \
    X(cudaSetDevice, cudaSetDevice_v3020)                                                          \
    X(cudaGetDevice, cudaGetDevice_v3020)                                                          \
    X(cudaStreamCreate, cudaStreamCreate_v3020)                                                    \
    X(cudaStreamDestroy, cudaStreamDestroy_v5050)                                                  \
    X(cudaEventCreate, cudaEventCreate_v3020)                                                      \
    X(cudaEventRecord, cudaEventRecord_v3020)                                                      \
    X(cudaEventRecord_ptsz, cudaEventRecord_ptsz_v7000)                                            \
    X(cudaEventDestroy, cudaEventDestroy_v3020)                                                    \
    X(cudaDeviceGetAttribute, cudaDeviceGetAttribute_v5000)                                        \
    X(cudaSetDeviceFlags, cudaSetDeviceFlags_v3020)                                                \
    X(cudaGetDeviceFlags, cudaGetDeviceFlags_v7000)                                                \
    X(cudaDeviceReset, cudaDeviceReset_v3020)                                                      \
    X(cudaProfilerStart, cudaProfilerStart_v4000)                                                  \
    X(cudaProfilerStop, cudaProfilerStop_v4000)                                                    \
    X(cudaInitDevice, cudaInitDevice_v12000)                                                       \
    X(cudaMemGetInfo, cudaMemGetInfo_v3020)                                                        \
    X(cudaStreamCreateWithFlags, cudaStreamCreateWithFlags_v5000)                                  \
    X(cudaStreamCreateWithPriority, cudaStreamCreateWithPriority_v5050)                            \
    X(cudaEventCreateWithFlags, cudaEventCreateWithFlags_v3020)                                    \
    X(cudaEventRecordWithFlags, cudaEventRecordWithFlags_v11010)                                   \
    X(cudaEventRecordWithFlags_ptsz, cudaEventRecordWithFlags_ptsz_v11010)                         \
    X(cudaEventElapsedTime, cudaEventElapsedTime_v12080)                                           \
    X(cudaHostRegister, cudaHostRegister_v4000)                                                    \
    X(cudaHostUnregister, cudaHostUnregister_v4000)                                                \
    X(cudaDeviceGetDefaultMemPool, cudaDeviceGetDefaultMemPool_v11020)                             \
    X(cudaDeviceGetMemPool, cudaDeviceGetMemPool_v11020)                                           \
    X(cudaDeviceSetMemPool, cudaDeviceSetMemPool_v11020)                                           \
    X(cudaMemPoolCreate, cudaMemPoolCreate_v11020)                                                 \
    X(cudaMemPoolDestroy, cudaMemPoolDestroy_v11020)                                               \
    X(cudaMemPoolTrimTo, cudaMemPoolTrimTo_v11020)                                                 \
    X(cudaMemPoolSetAttribute, cudaMemPoolSetAttribute_v11020)                                     \
    X(cudaMemPoolGetAttribute, cudaMemPoolGetAttribute_v11020)                                     \
    X(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_v11020)                                     \
    X(cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync_ptsz_v11020)                           \
    X(cudaGraphInstantiateWithFlags, cudaGraphInstantiateWithFlags_v11040)                         \
    X(cudaGraphInstantiateWithParams, cudaGraphInstantiateWithParams_v12000)                       \
    X(cudaGraphInstantiateWithParams_ptsz, cudaGraphInstantiateWithParams_ptsz_v12000)             \
    X(cudaGraphAddMemAllocNode, cudaGraphAddMemAllocNode_v11040)                                   \
    X(cudaDeviceGetGraphMemAttribute, cudaDeviceGetGraphMemAttribute_v11040)                       \
    X(cudaDeviceGraphMemTrim, cudaDeviceGraphMemTrim_v11040)                                       \
    X(cudaGraphAddMemFreeNode, cudaGraphAddMemFreeNode_v11040)                                     \
    X(cudaGraphAddKernelNode, cudaGraphAddKernelNode_v10000)                                       \
    X(cudaGraphAddMemcpyNode1D, cudaGraphAddMemcpyNode1D_v11010)                                   \
    X(cudaGraphAddMemsetNode, cudaGraphAddMemsetNode_v10000)                                       \
    X(cudaGraphAddEmptyNode, cudaGraphAddEmptyNode_v10000)                                         \
    X(cudaGraphGetNodes, cudaGraphGetNodes_v10000)                                                 \
    X(cudaGraphUpload, cudaGraphUpload_v10000)                                                     \
    X(cudaGraphUpload_ptsz, cudaGraphUpload_ptsz_v10000)                                           \
    X(cudaGraphExecUpdate, cudaGraphExecUpdate_v10020)                                             \
    X(cudaThreadExchangeStreamCaptureMode, cudaThreadExchangeStreamCaptureMode_v10010)             \
    X(cudaStreamBeginCapture, cudaStreamBeginCapture_v10000)                                       \
    X(cudaStreamBeginCapture_ptsz, cudaStreamBeginCapture_ptsz_v10000)                             \
    X(cudaStreamBeginCaptureToGraph, cudaStreamBeginCaptureToGraph_v12030)                         \
    X(cudaStreamBeginCaptureToGraph_ptsz, cudaStreamBeginCaptureToGraph_ptsz_v12030)               \
    X(cudaStreamEndCapture, cudaStreamEndCapture_v10000)                                           \
    X(cudaStreamEndCapture_ptsz, cudaStreamEndCapture_ptsz_v10000)                                 \
    X(cudaStreamIsCapturing, cudaStreamIsCapturing_v10000)                                         \
    X(cudaStreamIsCapturing_ptsz, cudaStreamIsCapturing_ptsz_v10000)                               \
    X(cudaStreamGetCaptureInfo, cudaStreamGetCaptureInfo_v12030)                                   \
    X(cudaStreamGetCaptureInfo_ptsz, cudaStreamGetCaptureInfo_ptsz_v12030)

#endif
