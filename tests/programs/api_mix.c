/*
 * Calls every runtime entry point the tracer must intercept, including each per-thread-stream
 * (_ptsz/_ptds) twin, a fixed number of times so a trace can be checked against exact counts.
 * Usage: api_mix [reps=3] [bytes=4096]. Return values are deliberately ignored: the double's
 * CT_DOUBLE_STATS file is the ground truth. Per run, with R reps, every entry point below is
 * called R times except: cudaMalloc R+1 (the extra one asks for 2^62 bytes and fails, so the run
 * has exactly one error), cudaFree 3R, cudaFreeHost 2R, and __cudaGetKernel, cudaGraphCreate,
 * cudaGraphInstantiate, cudaGraphExecDestroy, cudaGraphDestroy once. Kernel launches: 8R.
 * Device bytes allocated: R * (4 * bytes + pitch * 4), pitch = bytes/4 rounded up to 512.
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "tests/doubles/runtime/cudart_extra.h"
#include "program_args.h"

#define PITCHED_ROWS 4

/* Exported (the build links with -rdynamic) so cudaFuncGetName can resolve its name. */
void vector_add_kernel(void) {}

struct buffers {
    void *device, *managed, *pitched, *async, *async_ptsz;
    void *pinned, *host_alloc;
    size_t pitch;
};

static void query_runtime(const void *kernel)
{
    int value;
    struct cudaDeviceProp prop;
    const char *name;
    cudaRuntimeGetVersion(&value);
    cudaDriverGetVersion(&value);
    cudaGetDeviceCount(&value);
    cudaSetDevice(0);
    cudaGetDevice(&value);
    cudaGetDeviceProperties(&prop, 0);
    cudaFuncGetName(&name, kernel);
    cudaPeekAtLastError();
    cudaGetLastError();
    cudaGetErrorName(cudaErrorMemoryAllocation);
    cudaGetErrorString(cudaErrorMemoryAllocation);
}

static void allocate_all(struct buffers *b, size_t bytes, cudaStream_t stream)
{
    cudaMalloc(&b->device, bytes);
    cudaMallocHost(&b->pinned, bytes);
    cudaHostAlloc(&b->host_alloc, bytes, cudaHostAllocDefault);
    cudaMallocManaged(&b->managed, bytes, cudaMemAttachGlobal);
    cudaMallocPitch(&b->pitched, &b->pitch, bytes / PITCHED_ROWS, PITCHED_ROWS);
    cudaMallocAsync(&b->async, bytes, stream);
    cudaMallocAsync_ptsz(&b->async_ptsz, bytes, stream);
}

static void copy_and_set(const struct buffers *b, size_t bytes, cudaStream_t stream)
{
    size_t width = bytes / PITCHED_ROWS;
    cudaMemcpy(b->device, b->pinned, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy_ptds(b->pinned, b->device, bytes, cudaMemcpyDeviceToHost);
    cudaMemcpyAsync(b->managed, b->device, bytes, cudaMemcpyDeviceToDevice, stream);
    cudaMemcpyAsync_ptsz(b->host_alloc, b->managed, bytes, cudaMemcpyDeviceToHost, stream);
    cudaMemcpy2D(b->pitched, b->pitch, b->pinned, width, width, PITCHED_ROWS,
                 cudaMemcpyHostToDevice);
    cudaMemcpy2D_ptds(b->pinned, width, b->pitched, b->pitch, width, PITCHED_ROWS,
                      cudaMemcpyDeviceToHost);
    cudaMemcpy2DAsync(b->device, width, b->pitched, b->pitch, width, PITCHED_ROWS,
                      cudaMemcpyDeviceToDevice, stream);
    cudaMemcpy2DAsync_ptsz(b->pitched, b->pitch, b->device, width, width, PITCHED_ROWS,
                           cudaMemcpyDeviceToDevice, stream);
    cudaMemcpyPeer(b->async, 0, b->device, 0, bytes);
    cudaMemcpyPeerAsync(b->async_ptsz, 0, b->async, 0, bytes, stream);
    cudaMemset(b->device, 0, bytes);
    cudaMemset_ptds(b->managed, 1, bytes);
    cudaMemsetAsync(b->async, 2, bytes, stream);
    cudaMemsetAsync_ptsz(b->async_ptsz, 3, bytes, stream);
}

static void launch_all(const void *kernel, cudaKernel_t handle, void *data,
                       cudaGraphExec_t graph_exec, cudaStream_t stream)
{
    dim3 grid = {4, 2, 1};
    dim3 block = {128, 1, 1};
    void *args[] = {&data};
    cudaLaunchConfig_t config = {.gridDim = grid, .blockDim = block, .stream = stream};
    cudaLaunchKernel(kernel, grid, block, args, 0, stream);
    cudaLaunchKernel_ptsz(kernel, grid, block, args, 0, stream);
    cudaLaunchKernelExC(&config, kernel, args);
    cudaLaunchKernelExC_ptsz(&config, kernel, args);
    cudaLaunchCooperativeKernel(kernel, grid, block, args, 0, stream);
    cudaLaunchCooperativeKernel_ptsz(kernel, grid, block, args, 0, stream);
    __cudaLaunchKernel(handle, grid, block, args, 0, stream);
    __cudaLaunchKernel_ptsz(handle, grid, block, args, 0, stream);
    cudaGraphLaunch(graph_exec, stream);
    cudaGraphLaunch_ptsz(graph_exec, stream);
}

static void synchronize_all(cudaStream_t stream, cudaEvent_t event)
{
    cudaEventRecord(event, stream);
    cudaEventRecord_ptsz(event, stream);
    cudaStreamWaitEvent(stream, event, 0);
    cudaStreamWaitEvent_ptsz(stream, event, 0);
    cudaStreamQuery(stream);
    cudaStreamQuery_ptsz(stream);
    cudaEventQuery(event);
    cudaEventSynchronize(event);
    cudaStreamSynchronize(stream);
    cudaStreamSynchronize_ptsz(stream);
    cudaDeviceSynchronize();
}

static void free_all(const struct buffers *b, cudaStream_t stream)
{
    cudaFree(b->device);
    cudaFree(b->managed);
    cudaFree(b->pitched);
    cudaFreeHost(b->pinned);
    cudaFreeHost(b->host_alloc);
    cudaFreeAsync(b->async, stream);
    cudaFreeAsync_ptsz(b->async_ptsz, stream);
}

int main(int argc, char **argv)
{
    unsigned long long reps = arg_or(argc, argv, 1, 3);
    size_t bytes = (size_t)arg_or(argc, argv, 2, 4096);
    const void *kernel = (const void *)vector_add_kernel;

    cudaKernel_t handle = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t graph_exec = NULL;
    __cudaGetKernel(&handle, kernel);
    cudaGraphCreate(&graph, 0);
    cudaGraphInstantiate(&graph_exec, graph, 0);

    for (unsigned long long rep = 0; rep < reps; rep++) {
        cudaStream_t stream = NULL;
        cudaEvent_t event = NULL;
        struct buffers b = {0};
        query_runtime(kernel);
        cudaStreamCreate(&stream);
        cudaEventCreate(&event);
        allocate_all(&b, bytes, stream);
        copy_and_set(&b, bytes, stream);
        launch_all(kernel, handle, b.device, graph_exec, stream);
        synchronize_all(stream, event);
        free_all(&b, stream);
        cudaEventDestroy(event);
        cudaStreamDestroy(stream);
    }

    cudaGraphExecDestroy(graph_exec);
    cudaGraphDestroy(graph);
    void *too_big = NULL;
    cudaMalloc(&too_big, (size_t)1 << 62);

    printf("api_mix: %llu reps\n", reps);
    return 0;
}
