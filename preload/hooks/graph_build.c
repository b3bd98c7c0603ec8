/*
 * The calls that build CUDA graphs and their executable forms: stream
 * capture's begin and end, the explicit graph API's nodes, instantiation,
 * upload, update, destruction and the graphs' allocator's trim. None of
 * them puts work on the GPU; a captured launch, copy or allocation is
 * recorded by its own hook and told apart by the graph node CUPTI says it
 * made (preload/cupti/graph_nodes.c). Arguments as functions.h lays out
 * CT_FAMILY_GRAPH_BUILD: the graph, the stream, the node or executable
 * graph made or acted on, the mode, flags or device, and an allocation
 * node's bytes.
 */
#include "preload/hooks/hook.h"

#define HOOK_BEGIN_CAPTURE(name)                                                                   \
    CT_HOOK(name, (cudaStream_t stream, enum cudaStreamCaptureMode mode), (stream, mode), 0,       \
            CT_PTR(stream), 0, mode, 0)
HOOK_BEGIN_CAPTURE(cudaStreamBeginCapture)
HOOK_BEGIN_CAPTURE(cudaStreamBeginCapture_ptsz)

#define HOOK_BEGIN_CAPTURE_TO_GRAPH(name)                                                          \
    CT_HOOK(name,                                                                                  \
            (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *dependencies,          \
             const cudaGraphEdgeData *edges, size_t count, enum cudaStreamCaptureMode mode),       \
            (stream, graph, dependencies, edges, count, mode), CT_PTR(graph), CT_PTR(stream), 0,   \
            mode, 0)
HOOK_BEGIN_CAPTURE_TO_GRAPH(cudaStreamBeginCaptureToGraph)
HOOK_BEGIN_CAPTURE_TO_GRAPH(cudaStreamBeginCaptureToGraph_ptsz)

#define HOOK_END_CAPTURE(name)                                                                     \
    CT_HOOK(name, (cudaStream_t stream, cudaGraph_t * graph), (stream, graph), CT_OUT(graph),      \
            CT_PTR(stream), 0, 0, 0)
HOOK_END_CAPTURE(cudaStreamEndCapture)
HOOK_END_CAPTURE(cudaStreamEndCapture_ptsz)

#define HOOK_INSTANTIATE(name)                                                                     \
    CT_HOOK(name, (cudaGraphExec_t * exec, cudaGraph_t graph, unsigned long long flags),           \
            (exec, graph, flags), CT_PTR(graph), 0, CT_OUT(exec), flags, 0)
HOOK_INSTANTIATE(cudaGraphInstantiate)
HOOK_INSTANTIATE(cudaGraphInstantiateWithFlags)

#define HOOK_INSTANTIATE_WITH_PARAMS(name)                                                         \
    CT_HOOK(name,                                                                                  \
            (cudaGraphExec_t * exec, cudaGraph_t graph, cudaGraphInstantiateParams * params),      \
            (exec, graph, params), CT_PTR(graph), 0, CT_OUT(exec), params ? params->flags : 0, 0)
HOOK_INSTANTIATE_WITH_PARAMS(cudaGraphInstantiateWithParams)
HOOK_INSTANTIATE_WITH_PARAMS(cudaGraphInstantiateWithParams_ptsz)

/* The explicit API's nodes: the graph, and the node made. */
#define NODE_PARAMS(...)                                                                           \
    (cudaGraphNode_t * node, cudaGraph_t graph, const cudaGraphNode_t *dependencies, size_t count, \
     __VA_ARGS__)
CT_HOOK(cudaGraphAddKernelNode, NODE_PARAMS(const struct cudaKernelNodeParams *params),
        (node, graph, dependencies, count, params), CT_PTR(graph), 0, CT_OUT(node), 0, 0)
CT_HOOK(cudaGraphAddMemcpyNode, NODE_PARAMS(const struct cudaMemcpy3DParms *params),
        (node, graph, dependencies, count, params), CT_PTR(graph), 0, CT_OUT(node), 0, 0)
CT_HOOK(cudaGraphAddMemcpyNode1D,
        NODE_PARAMS(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind),
        (node, graph, dependencies, count, dst, src, bytes, kind), CT_PTR(graph), 0, CT_OUT(node),
        0, bytes)
CT_HOOK(cudaGraphAddMemsetNode, NODE_PARAMS(const struct cudaMemsetParams *params),
        (node, graph, dependencies, count, params), CT_PTR(graph), 0, CT_OUT(node), 0, 0)
CT_HOOK(cudaGraphAddMemFreeNode, NODE_PARAMS(void *ptr), (node, graph, dependencies, count, ptr),
        CT_PTR(graph), 0, CT_OUT(node), 0, 0)
/* An allocation node's bytes: what the graph's memory will hold. */
CT_HOOK(cudaGraphAddMemAllocNode, NODE_PARAMS(struct cudaMemAllocNodeParams *params),
        (node, graph, dependencies, count, params), CT_PTR(graph), 0, CT_OUT(node), 0,
        params ? params->bytesize : 0)

#define HOOK_UPLOAD(name)                                                                          \
    CT_HOOK(name, (cudaGraphExec_t exec, cudaStream_t stream), (exec, stream), 0, CT_PTR(stream),  \
            CT_PTR(exec), 0, 0)
HOOK_UPLOAD(cudaGraphUpload)
HOOK_UPLOAD(cudaGraphUpload_ptsz)

CT_HOOK(cudaGraphExecUpdate,
        (cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo *info),
        (exec, graph, info), CT_PTR(graph), 0, CT_PTR(exec), 0, 0)
CT_HOOK(cudaGraphExecDestroy, (cudaGraphExec_t exec), (exec), 0, 0, CT_PTR(exec), 0, 0)
CT_HOOK(cudaGraphDestroy, (cudaGraph_t graph), (graph), CT_PTR(graph), 0, 0, 0, 0)
CT_HOOK(cudaDeviceGraphMemTrim, (int device), (device), 0, 0, 0, device, 0)
