// A library with GPU code for sm_80 only (the test builds it with
// -gencode arch=compute_80,code=sm_80), for the no-kernel-image finding:
// launched where the GPU is not an sm_80, it fails with
// cudaErrorNoKernelImageForDevice. launch_scale() is its exported entry.
#include <cuda_runtime.h>

extern "C" __global__ void scale_sm80(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

extern "C" int launch_scale(void)
{
    scale_sm80<<<1, 32>>>(nullptr, 2.0f, 0);
    return (int)cudaGetLastError();
}
