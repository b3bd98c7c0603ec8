// A small CUDA C workload for the GPU check (tests/gpu/run.sh) and for the
// driverless test: allocations, copies both ways, many small <<<>>> launches
// (which nvcc turns into __cudaLaunchKernel since CUDA 13), a sync every step,
// and one pinned buffer. It prints each failing call's code and exits 3 at
// the first one, or, with keep_going=1, goes on through every call and exits
// 3 at the end (a driverless machine then sees every entry point fail), so
// its output is the same with and without the tracer.
// Usage: vector_loop [steps=50] [launches_per_step=100] [keep_going=0].
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

__global__ void scale_kernel(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__global__ void add_kernel(float *x, const float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += y[i];
}

static bool keep_going;
static int failures;

static int check(cudaError_t result, const char *what)
{
    if (result == cudaSuccess)
        return 0;
    std::printf("%s failed: %d (%s)\n", what, (int)result, cudaGetErrorName(result));
    failures++;
    return keep_going ? 0 : 1;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? std::atoi(argv[1]) : 50;
    int launches = argc > 2 ? std::atoi(argv[2]) : 100;
    keep_going = argc > 3 && std::atoi(argv[3]) != 0;
    const int n = 1 << 16;
    float *x = nullptr, *y = nullptr, *host = nullptr;
    if (check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc") ||
        check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc") ||
        check(cudaMallocHost(&host, n * sizeof(float)), "cudaMallocHost"))
        return 3;
    static float unpinned[1 << 16];
    bool pinned = host != nullptr;
    if (!pinned)
        host = unpinned; /* keep_going without a driver */
    for (int i = 0; i < n; i++)
        host[i] = 1.0f;
    for (int step = 0; step < steps; step++) {
        if (check(cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy") ||
            check(cudaMemcpy(y, host, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy"))
            return 3;
        for (int k = 0; k < launches; k++) {
            if (k % 2)
                add_kernel<<<n / 256, 256>>>(x, y, n);
            else
                scale_kernel<<<n / 256, 256>>>(x, 0.5f, n);
        }
        if (check(cudaGetLastError(), "launch") || check(cudaDeviceSynchronize(), "sync"))
            return 3;
    }
    if (check(cudaMemcpy(host, x, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy"))
        return 3;
    std::printf("vector_loop: %d steps x %d launches, x[0] = %g\n", steps, launches, host[0]);
    if (pinned)
        cudaFreeHost(host);
    cudaFree(x);
    cudaFree(y);
    return failures ? 3 : 0;
}
