/*
 * Probes how a program behaves when the runtime cannot reach a GPU driver: it makes six basic
 * calls regardless of earlier failures and prints each return code as "name -> code". Usage:
 * driverless [bytes=1048576]. Nothing machine-specific (pointers, timings) is printed, so two
 * runs give byte-identical output. Exits 3 if any call returned an error, else 0.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define EXIT_SOME_CALL_FAILED 3
#define CALLS 6

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void probe_kernel(void) {}

static int failed_calls;

static void report(const char *name, cudaError_t rc)
{
    printf("%s -> %d\n", name, (int)rc);
    failed_calls += rc != cudaSuccess;
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)arg_or(argc, argv, 1, 1 << 20);
    char *host = calloc(bytes ? bytes : 1, 1);
    if (!host) {
        perror("driverless");
        return 1;
    }
    dim3 one = {1, 1, 1};
    int devices = 0;
    void *device = NULL;

    report("cudaGetDeviceCount", cudaGetDeviceCount(&devices));
    report("cudaMalloc", cudaMalloc(&device, bytes));
    report("cudaMemcpy", cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    report("cudaLaunchKernel",
           cudaLaunchKernel((const void *)probe_kernel, one, one, NULL, 0, NULL));
    report("cudaDeviceSynchronize", cudaDeviceSynchronize());
    report("cudaGetLastError", cudaGetLastError());
    free(host);

    if (failed_calls != 0) {
        printf("driverless: %d of %d calls failed\n", failed_calls, CALLS);
        return EXIT_SOME_CALL_FAILED;
    }
    printf("driverless: all %d calls succeeded\n", CALLS);
    return 0;
}
