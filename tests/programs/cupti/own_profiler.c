/*
 * A program with a profiler of its own, as torch.profiler is one: it launches a few kernels,
 * then subscribes to CUPTI itself, registers its activity buffers, launches some more and counts
 * the kernel records it received. Usage: own_profiler [before=20] [profiled=30]. Prints one
 * line with its subscription's result and its record count: under a tracer that holds CUPTI,
 * the line must read as it does untraced. Exits 1 if a call failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "tests/programs/program_args.h"

#define BUFFER_BYTES (1 << 16)

/* Exported (the build links with -rdynamic) so the runtime can name them. */
void kernel_before(void) {}
void kernel_profiled(void) {}

static unsigned long long kernel_records;

static void CUPTIAPI no_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void CUPTIAPI lend_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = BUFFER_BYTES;
    *max_records = 0;
}

static void CUPTIAPI take_buffer(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                                 size_t valid)
{
    (void)context, (void)stream, (void)size;
    CUpti_Activity *record = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        kernel_records += record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    free(buffer);
}

static int launches(const void *kernel, int n)
{
    dim3 grid = {16, 1, 1}, block = {32, 1, 1};
    int failures = 0;
    for (int i = 0; i < n; i++)
        failures += cudaLaunchKernel(kernel, grid, block, NULL, 0, NULL) != cudaSuccess;
    return failures + (cudaDeviceSynchronize() != cudaSuccess);
}

int main(int argc, char **argv)
{
    int before = (int)arg_or(argc, argv, 1, 20), profiled = (int)arg_or(argc, argv, 2, 30);
    int devices = 0, failures = cudaGetDeviceCount(&devices) != cudaSuccess;
    failures += launches((const void *)kernel_before, before);
    CUpti_SubscriberHandle subscriber;
    CUptiResult subscribed = cuptiSubscribe(&subscriber, no_callback, NULL);
    failures += cuptiActivityRegisterCallbacks(lend_buffer, take_buffer) != CUPTI_SUCCESS;
    failures += cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS;
    failures += launches((const void *)kernel_profiled, profiled);
    failures += cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS;
    const char *result = "?";
    cuptiGetResultString(subscribed, &result);
    printf("own_profiler: subscribe %s, %llu kernel records\n", result, kernel_records);
    return failures || subscribed != CUPTI_SUCCESS;
}
