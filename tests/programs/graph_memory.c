/*
 * A CUDA graph with two memory-allocation nodes (3 MiB and 5 MiB), two
 * executable graphs made from it, and the runtime asked what the graphs'
 * allocator holds (cudaGraphMemAttrReservedMemCurrent) after each step:
 * the first launched (its allocations made), launched again (reused), the
 * second launched, the first destroyed (its memory stays reserved), a
 * trim, the second destroyed and a trim. Prints each answer in bytes, one
 * a line, for the tests to hold the report to; also reads UsedMemCurrent
 * once, which is not the reserve. With "quiet" it does the same work and
 * never asks.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define MIB (1u << 20)

static int asks = 1;

static void read_reserve(void)
{
    unsigned long long reserved = 0;
    if (asks && cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved) ==
                    cudaSuccess)
        printf("%llu\n", reserved);
}

static int add_allocation(cudaGraph_t graph, size_t bytes)
{
    struct cudaMemAllocNodeParams params;
    memset(&params, 0, sizeof params);
    params.poolProps.allocType = cudaMemAllocationTypePinned;
    params.poolProps.location.type = cudaMemLocationTypeDevice;
    params.poolProps.location.id = 0;
    params.bytesize = bytes;
    cudaGraphNode_t node;
    return cudaGraphAddMemAllocNode(&node, graph, NULL, 0, &params) == cudaSuccess;
}

int main(int argc, char **argv)
{
    asks = !(argc > 1 && strcmp(argv[1], "quiet") == 0);
    cudaGraph_t graph;
    cudaGraphExec_t first, second;
    if (cudaGraphCreate(&graph, 0) != cudaSuccess || !add_allocation(graph, 3 * MIB) ||
        !add_allocation(graph, 5 * MIB) || cudaGraphInstantiate(&first, graph, 0) != cudaSuccess ||
        cudaGraphInstantiate(&second, graph, 0) != cudaSuccess)
        return 1;
    cudaGraphLaunch(first, NULL);
    read_reserve();
    cudaGraphLaunch(first, NULL);
    read_reserve();
    cudaGraphLaunch(second, NULL);
    read_reserve();
    unsigned long long used = 0;
    if (asks)
        cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used);
    cudaGraphExecDestroy(first);
    read_reserve();
    cudaDeviceGraphMemTrim(0);
    read_reserve();
    cudaGraphExecDestroy(second);
    cudaDeviceGraphMemTrim(0);
    read_reserve();
    cudaGraphDestroy(graph);
    return 0;
}
