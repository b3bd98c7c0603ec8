/*
 * A library that calls CUDA from its constructor and destructor, the way
 * some frameworks initialise or release device state. Linked into
 * early_user, it is initialised before libcudatrace.so (the dynamic linker
 * initialises an executable's dependencies before a preloaded object that
 * does not depend on them) and finalised after it, so its calls come before
 * the tracer's constructor and after the tracer has shut its session down.
 */
#include <cuda_runtime_api.h>

__attribute__((constructor)) static void early_init(void)
{
    void *p = 0;
    cudaMalloc(&p, 1 << 20);
    cudaFree(p);
}

__attribute__((destructor)) static void late_fini(void)
{
    void *p = 0;
    cudaMalloc(&p, 1 << 20);
    cudaFree(p);
}
