/*
 * What a refused call leaves behind. Calls each runtime entry point that would allocate, free,
 * copy, set, launch, synchronise or hand out a handle once, with every output preset to a
 * marker and every destination buffer to a fill byte, and prints one line per call:
 * "name -> result" followed by what became of its output ("untouched", "written", or for
 * __cudaGetKernel "host function" when the handle it wrote is the function itself). On a
 * runtime without a usable driver every such call must fail before it has any effect, so the
 * CPU double playing a driver too old and the real toolkit runtime on a driverless machine
 * print the same lines. No pointer or time is printed. Exits 0.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "tests/doubles/runtime/cudart_extra.h"

#define BYTES 64
#define ROWS 2
#define FILL 0x11
#define SOURCE_BYTE 0x22
#define PITCH_MARKER 7 /* no real pitch: pitches are multiples of the alignment */

/* An address no runtime hands out; a call that leaves it in place wrote nothing. */
static char marker_object;
#define MARKER ((void *)&marker_object)

static unsigned char destination[ROWS * BYTES];
static unsigned char source[ROWS * BYTES];

/* Exported (the build links with -rdynamic), as a kernel's host stub would be. */
void effects_kernel(void) {}

static const char *pointer_state(const void *out)
{
    return out == MARKER ? "untouched" : "written";
}

static const char *destination_state(void)
{
    for (size_t i = 0; i < sizeof destination; i++)
        if (destination[i] != FILL)
            return "written";
    return "untouched";
}

static void report(const char *name, cudaError_t rc, const char *state)
{
    printf("%s -> %d%s%s\n", name, (int)rc, state ? " " : "", state ? state : "");
}

/* `state` is evaluated only after the call has returned. */
#define CALL(fn, args, state)                                                                      \
    do {                                                                                           \
        cudaError_t rc = fn args;                                                                  \
        report(#fn, rc, state);                                                                    \
    } while (0)

/* A fresh marker in `out` and a fresh fill in the destination before each call. */
#define ALLOCATE(fn, ...) CALL(fn, ((out = MARKER, &out), __VA_ARGS__), pointer_state(out))
#define WRITE(fn, ...)                                                                             \
    CALL(fn, ((memset(destination, FILL, sizeof destination), destination), __VA_ARGS__),          \
         destination_state())

static void allocate(void)
{
    void *out;
    size_t pitch = PITCH_MARKER;
    ALLOCATE(cudaMalloc, BYTES);
    ALLOCATE(cudaMallocHost, BYTES);
    ALLOCATE(cudaHostAlloc, BYTES, cudaHostAllocDefault);
    ALLOCATE(cudaMallocManaged, BYTES, cudaMemAttachGlobal);
    ALLOCATE(cudaMallocAsync, BYTES, NULL);
    ALLOCATE(cudaMallocAsync_ptsz, BYTES, NULL);
    ALLOCATE(cudaMallocPitch, &pitch, BYTES, ROWS);
    printf("cudaMallocPitch pitch %s\n", pitch == PITCH_MARKER ? "untouched" : "written");
    CALL(cudaFree, (NULL), NULL);
    CALL(cudaFreeHost, (NULL), NULL);
    CALL(cudaFreeAsync, (NULL, NULL), NULL);
    CALL(cudaFreeAsync_ptsz, (NULL, NULL), NULL);
}

static void copy_and_set(void)
{
    const enum cudaMemcpyKind kind = cudaMemcpyHostToHost;
    memset(source, SOURCE_BYTE, sizeof source);
    WRITE(cudaMemcpy, source, BYTES, kind);
    WRITE(cudaMemcpy_ptds, source, BYTES, kind);
    WRITE(cudaMemcpyAsync, source, BYTES, kind, NULL);
    WRITE(cudaMemcpyAsync_ptsz, source, BYTES, kind, NULL);
    WRITE(cudaMemcpy2D, BYTES, source, BYTES, BYTES, ROWS, kind);
    WRITE(cudaMemcpy2D_ptds, BYTES, source, BYTES, BYTES, ROWS, kind);
    WRITE(cudaMemcpy2DAsync, BYTES, source, BYTES, BYTES, ROWS, kind, NULL);
    WRITE(cudaMemcpy2DAsync_ptsz, BYTES, source, BYTES, BYTES, ROWS, kind, NULL);
    WRITE(cudaMemcpyPeer, 0, source, 0, BYTES);
    WRITE(cudaMemcpyPeerAsync, 0, source, 0, BYTES, NULL);
    WRITE(cudaMemset, SOURCE_BYTE, BYTES);
    WRITE(cudaMemset_ptds, SOURCE_BYTE, BYTES);
    WRITE(cudaMemsetAsync, SOURCE_BYTE, BYTES, NULL);
    WRITE(cudaMemsetAsync_ptsz, SOURCE_BYTE, BYTES, NULL);
}

static const char *handle_state(cudaKernel_t handle, const void *kernel)
{
    return (const void *)handle == kernel ? "host function" : pointer_state(handle);
}

static void launch(void)
{
    const void *kernel = (const void *)effects_kernel;
    dim3 one = {1, 1, 1};
    cudaLaunchConfig_t config = {.gridDim = one, .blockDim = one};
    cudaKernel_t handle = MARKER;
    const char *name = MARKER;
    cudaGraph_t graph = MARKER;
    CALL(cudaLaunchKernel, (kernel, one, one, NULL, 0, NULL), NULL);
    CALL(cudaLaunchKernel_ptsz, (kernel, one, one, NULL, 0, NULL), NULL);
    CALL(cudaLaunchKernelExC, (&config, kernel, NULL), NULL);
    CALL(cudaLaunchKernelExC_ptsz, (&config, kernel, NULL), NULL);
    CALL(cudaLaunchCooperativeKernel, (kernel, one, one, NULL, 0, NULL), NULL);
    CALL(cudaLaunchCooperativeKernel_ptsz, (kernel, one, one, NULL, 0, NULL), NULL);
    CALL(__cudaGetKernel, (&handle, kernel), handle_state(handle, kernel));
    CALL(__cudaLaunchKernel, (handle, one, one, NULL, 0, NULL), NULL);
    CALL(__cudaLaunchKernel_ptsz, (handle, one, one, NULL, 0, NULL), NULL);
    CALL(cudaFuncGetName, (&name, kernel), pointer_state(name));
    CALL(cudaGraphCreate, (&graph, 0), pointer_state(graph));
    CALL(cudaGraphLaunch, (NULL, NULL), NULL);
    CALL(cudaGraphLaunch_ptsz, (NULL, NULL), NULL);
}

static void synchronize(void)
{
    CALL(cudaSetDevice, (0), NULL);
    CALL(cudaDeviceSynchronize, (), NULL);
    CALL(cudaStreamSynchronize, (NULL), NULL);
    CALL(cudaStreamSynchronize_ptsz, (NULL), NULL);
    CALL(cudaStreamQuery, (NULL), NULL);
    CALL(cudaStreamQuery_ptsz, (NULL), NULL);
    CALL(cudaStreamWaitEvent, (NULL, NULL, 0), NULL);
    CALL(cudaStreamWaitEvent_ptsz, (NULL, NULL, 0), NULL);
    CALL(cudaEventQuery, (NULL), NULL);
    CALL(cudaEventSynchronize, (NULL), NULL);
}

int main(void)
{
    allocate();
    copy_and_set();
    launch();
    synchronize();
    return 0;
}
