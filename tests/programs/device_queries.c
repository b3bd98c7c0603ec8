/*
 * Calls each runtime function that decides whether CUDA works at all (device discovery and
 * selection, versions, free memory, streams and events, host registration, memory pools, graph
 * instantiation, the last error) a fixed number of times. It prints every call as
 * "name -> result", what the device queries wrote as one "values name N ..." line (a failed
 * call must leave the initial value) and, at the end, "calls name N" per function. Usage:
 * device_queries [reps=1]. Per rep each function is called once, except: cudaSetDevice 2 (the
 * second asks for a device that does not exist), cudaHostUnregister 2 (the second of an address
 * no longer registered), cudaGetLastError 3 (after each of those failures and at the end),
 * cudaPeekAtLastError 2 (after each failure), cudaDeviceSetMemPool 2, cudaEventDestroy 2,
 * cudaStreamDestroy 3 and cudaGraphExecDestroy 4. The helpers it needs (cudaGraphCreate,
 * which is not hooked, and cudaFreeAsync) are printed and counted too. Handles start out NULL, so
 * calls that were refused pass NULL on, not garbage. No pointer or time is printed, so two
 * runs give identical output. Exits 0.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "tests/doubles/runtime/cudart_extra.h"
#include "program_args.h"

#define MAX_FUNCTIONS 64
#define BUFFER_BYTES 4096
#define TRIM_KEEP_BYTES 1024
#define RELEASE_THRESHOLD (1ull << 20)

/* Prints the call and counts it; `args` is the parenthesised argument list. */
#define CALL(fn, args) note(#fn, fn args)

static struct {
    const char *name;
    int calls;
} tally[MAX_FUNCTIONS];

static cudaError_t note(const char *name, cudaError_t rc)
{
    int i = 0;
    while (tally[i].name && strcmp(tally[i].name, name) != 0)
        i++;
    tally[i].name = name;
    tally[i].calls++;
    printf("%s -> %d\n", name, (int)rc);
    return rc;
}

static void query_device(void)
{
    int version = -1, driver = -1, count = -1, device = -1, major = -1;
    unsigned int flags = 0;
    size_t free_bytes = 0, total_bytes = 0;
    struct cudaDeviceProp prop;
    CALL(cudaRuntimeGetVersion, (&version));
    CALL(cudaDriverGetVersion, (&driver));
    CALL(cudaGetDeviceCount, (&count));
    CALL(cudaSetDevice, (0));
    CALL(cudaSetDevice, (count)); /* one past the last device */
    CALL(cudaGetLastError, ());
    CALL(cudaPeekAtLastError, ());
    CALL(cudaGetDevice, (&device));
    CALL(cudaGetDeviceProperties, (&prop, 0));
    CALL(cudaDeviceGetAttribute, (&major, cudaDevAttrComputeCapabilityMajor, 0));
    CALL(cudaSetDeviceFlags, (cudaDeviceScheduleBlockingSync));
    CALL(cudaGetDeviceFlags, (&flags));
    CALL(cudaInitDevice, (0, cudaDeviceScheduleBlockingSync, cudaInitDeviceFlagsAreValid));
    CALL(cudaMemGetInfo, (&free_bytes, &total_bytes));
    printf("values version %d driver %d count %d device %d major %d flags %u free %zu total %zu\n",
           version, driver, count, device, major, flags, free_bytes, total_bytes);
}

static void register_host(void)
{
    static char buffer[BUFFER_BYTES];
    CALL(cudaHostRegister, (buffer, sizeof buffer, cudaHostRegisterDefault));
    CALL(cudaHostUnregister, (buffer));
    CALL(cudaHostUnregister, (buffer)); /* no longer registered */
    CALL(cudaGetLastError, ());
    CALL(cudaPeekAtLastError, ());
}

static void use_pool(cudaStream_t first, cudaStream_t second)
{
    cudaMemPool_t fallback = NULL, pool = NULL, current = NULL;
    struct cudaMemPoolProps props = {.allocType = cudaMemAllocationTypePinned,
                                     .location = {cudaMemLocationTypeDevice, 0}};
    unsigned long long threshold = RELEASE_THRESHOLD, read_back = 0;
    void *a = NULL, *b = NULL;
    CALL(cudaDeviceGetDefaultMemPool, (&fallback, 0));
    CALL(cudaMemPoolCreate, (&pool, &props));
    CALL(cudaDeviceSetMemPool, (0, pool));
    CALL(cudaDeviceGetMemPool, (&current, 0));
    CALL(cudaMemPoolSetAttribute, (pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    CALL(cudaMemPoolGetAttribute, (pool, cudaMemPoolAttrReleaseThreshold, &read_back));
    CALL(cudaMallocFromPoolAsync, (&a, BUFFER_BYTES, pool, first));
    CALL(cudaMallocFromPoolAsync_ptsz, (&b, BUFFER_BYTES, pool, second));
    CALL(cudaFreeAsync, (a, first));
    CALL(cudaFreeAsync, (b, second));
    CALL(cudaMemPoolTrimTo, (pool, TRIM_KEEP_BYTES));
    CALL(cudaDeviceSetMemPool, (0, fallback));
    CALL(cudaMemPoolDestroy, (pool));
}

static void instantiate_graphs(void)
{
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec[4] = {NULL};
    cudaGraphInstantiateParams params = {.flags = 0};
    CALL(cudaGraphCreate, (&graph, 0));
    CALL(cudaGraphInstantiate, (&exec[0], graph, 0));
    CALL(cudaGraphInstantiateWithFlags,
         (&exec[1], graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    CALL(cudaGraphInstantiateWithParams, (&exec[2], graph, &params));
    CALL(cudaGraphInstantiateWithParams_ptsz, (&exec[3], graph, &params));
    for (int i = 0; i < 4; i++)
        CALL(cudaGraphExecDestroy, (exec[i]));
    CALL(cudaGraphDestroy, (graph));
}

static void use_streams_and_events(void)
{
    cudaStream_t plain = NULL, non_blocking = NULL, urgent = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    float ms = 0;
    CALL(cudaStreamCreate, (&plain));
    CALL(cudaStreamCreateWithFlags, (&non_blocking, cudaStreamNonBlocking));
    CALL(cudaStreamCreateWithPriority, (&urgent, cudaStreamNonBlocking, -1));
    CALL(cudaEventCreate, (&start));
    CALL(cudaEventCreateWithFlags, (&stop, cudaEventBlockingSync));
    CALL(cudaEventRecord, (start, plain));
    CALL(cudaEventRecord_ptsz, (start, non_blocking));
    CALL(cudaEventRecordWithFlags, (stop, non_blocking, cudaEventRecordExternal));
    CALL(cudaEventRecordWithFlags_ptsz, (stop, urgent, cudaEventRecordDefault));
    CALL(cudaEventElapsedTime, (&ms, start, stop));
    use_pool(plain, non_blocking);
    CALL(cudaEventDestroy, (start));
    CALL(cudaEventDestroy, (stop));
    CALL(cudaStreamDestroy, (plain));
    CALL(cudaStreamDestroy, (non_blocking));
    CALL(cudaStreamDestroy, (urgent));
}

int main(int argc, char **argv)
{
    unsigned long long reps = arg_or(argc, argv, 1, 1);
    for (unsigned long long rep = 0; rep < reps; rep++) {
        query_device();
        use_streams_and_events();
        register_host();
        instantiate_graphs();
        CALL(cudaDeviceReset, ());
        CALL(cudaGetLastError, ());
    }
    for (int i = 0; tally[i].name; i++)
        printf("calls %s %d\n", tally[i].name, tally[i].calls);
    return 0;
}
