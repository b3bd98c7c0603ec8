/*
 * A program with a profiler of its own, as torch.profiler is one: it launches a few kernels,
 * then subscribes to CUPTI itself, enables the runtime's launch callback, registers its activity
 * buffers, launches some more and counts the launch callbacks and kernel records it received.
 * Usage: own_profiler [before=20] [profiled=30] [how=0] [activity=1]. how says how it finds
 * CUPTI's subscription: 0 cuptiSubscribe as linked, 1 cuptiSubscribe_v2 as linked (what new
 * tools call), 2 cuptiSubscribe through dlsym on a handle of libcupti (as frameworks that load
 * CUPTI at run time do). With activity = 0 it uses callbacks only and registers no buffers.
 * Prints one line with its subscription's result and its counts: under a tracer that holds
 * CUPTI, the line must read as it does untraced. Exits 1 if a call failed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "tests/programs/program_args.h"

#define BUFFER_BYTES (1 << 16)

/* Exported (the build links with -rdynamic) so the runtime can name them. */
void kernel_before(void) {}
void kernel_profiled(void) {}

static unsigned long long kernel_records, launch_callbacks;

static void CUPTIAPI count_launches(void *userdata, CUpti_CallbackDomain domain,
                                    CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    const CUpti_CallbackData *call = data;
    launch_callbacks += domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 &&
                        call->callbackSite == CUPTI_API_ENTER;
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

static CUptiResult subscribe(int how, CUpti_SubscriberHandle *subscriber)
{
    if (how == 1) {
        CUpti_SubscriberParams params = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                         .subscriberName = "own_profiler"};
        return cuptiSubscribe_v2(subscriber, count_launches, NULL, &params);
    }
    if (how == 2) {
        void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
        CUptiResult (*found)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) = NULL;
        if (cupti)
            *(void **)&found = dlsym(cupti, "cuptiSubscribe");
        return found ? found(subscriber, count_launches, NULL) : CUPTI_ERROR_NOT_INITIALIZED;
    }
    return cuptiSubscribe(subscriber, count_launches, NULL);
}

int main(int argc, char **argv)
{
    int before = (int)arg_or(argc, argv, 1, 20), profiled = (int)arg_or(argc, argv, 2, 30);
    int how = (int)arg_or(argc, argv, 3, 0), activity = arg_or(argc, argv, 4, 1) == 1;
    int devices = 0, failures = cudaGetDeviceCount(&devices) != cudaSuccess;
    failures += launches((const void *)kernel_before, before);
    CUpti_SubscriberHandle subscriber;
    CUptiResult subscribed = subscribe(how, &subscriber);
    if (subscribed == CUPTI_SUCCESS)
        failures +=
            cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) != CUPTI_SUCCESS;
    if (activity) {
        failures += cuptiActivityRegisterCallbacks(lend_buffer, take_buffer) != CUPTI_SUCCESS;
        failures += cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS;
    }
    failures += launches((const void *)kernel_profiled, profiled);
    if (activity)
        failures += cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS;
    const char *result = "?";
    cuptiGetResultString(subscribed, &result);
    printf("own_profiler: subscribe %s, %llu launch callbacks, %llu kernel records\n", result,
           launch_callbacks, kernel_records);
    return failures || subscribed != CUPTI_SUCCESS;
}
