/*
 * What torch.cuda.is_available() boils down to: asks the runtime its version and how many
 * devices there are, nothing else, and prints both calls as "name -> result value". Exits 1
 * when no device could be counted, else 0. Nothing machine-specific beyond those answers is
 * printed, so a traced and an untraced run must print the same bytes. With --version-only it
 * asks the version alone (which does not initialise CUDA).
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

int main(int argc, char **argv)
{
    int version = -1, count = -1;
    cudaError_t rc = cudaRuntimeGetVersion(&version);
    printf("cudaRuntimeGetVersion -> %d %d\n", (int)rc, version);
    if (argc > 1 && strcmp(argv[1], "--version-only") == 0)
        return rc == cudaSuccess ? 0 : 1;
    rc = cudaGetDeviceCount(&count);
    printf("cudaGetDeviceCount -> %d %d\n", (int)rc, count);
    return rc == cudaSuccess ? 0 : 1;
}
