/*
 * A CUPTI client that checks the CPU doubles (runtime, driver, CUPTI) without the tracer, for
 * tests/test_doubles_driver_cupti.py: it subscribes, enables the runtime and driver domains and every
 * activity kind the doubles produce, runs a known workload through the runtime and then through
 * the driver, flushes, and prints what it received. Usage: cupti_harness [buffer bytes=65536,
 * 0 for none] [max records per buffer=0]. Output, in this order: "subscribe RESULT" and
 * "second_subscribe RESULT" (then it stops if the first failed); one "cb ..." line per callback
 * in arrival order; one "rec ..." line per activity record in buffer order, each buffer followed
 * by "buf RECORDS"; "dropped N",
 * "buffers N ON_OTHER_THREADS" and "correlation_data_mismatches N". Exits 1 if a call failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "tests/programs/program_args.h"

#define BYTES 1024

static size_t buffer_bytes;
static size_t max_records;
static pthread_t main_thread;

/* Records arrive on CUPTI's thread as well as this one; they are printed at the end. */
static struct {
    pthread_mutex_t lock;
    char *text;
    size_t size;
    FILE *out;
    unsigned buffers, on_other_threads;
} received = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned data_mismatches;

/* Exported (the build links with -rdynamic) so the runtime can name them. */
void kernel_a(void) {}
void kernel_b(void) {}

static const char *result_name(CUptiResult rc)
{
    const char *name = "?";
    cuptiGetResultString(rc, &name);
    return name;
}

/* A summary of the parameters of the calls whose params the test checks; "-" for others. */
static void describe_params(char *out, size_t size, CUpti_CallbackDomain domain,
                            CUpti_CallbackId cbid, const void *params)
{
    snprintf(out, size, "-");
    if (!params)
        return;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020)
        snprintf(out, size, "size=%zu", ((const cudaMalloc_v3020_params *)params)->size);
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
        snprintf(out, size, "grid=%u", ((const cudaLaunchKernel_v7000_params *)params)->gridDim.x);
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020)
        snprintf(out, size, "count=%zu", ((const cudaMemcpy_v3020_params *)params)->count);
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
        snprintf(out, size, "grid=%u", ((const cuLaunchKernel_params *)params)->gridDimX);
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2)
        snprintf(out, size, "size=%zu", ((const cuMemAlloc_v2_params *)params)->bytesize);
}

/* Also exercises calling back into CUPTI from a callback: a flush at cuCtxSynchronize's exit. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *cbdata)
{
    (void)userdata;
    const CUpti_CallbackData *data = cbdata;
    const char *name = "?";
    cuptiGetCallbackName(domain, cbid, &name);
    bool enter = data->callbackSite == CUPTI_API_ENTER;
    if (enter)
        *data->correlationData = data->correlationId * 10ULL;
    else if (*data->correlationData != data->correlationId * 10ULL)
        data_mismatches++;
    char params[64];
    describe_params(params, sizeof params, domain, cbid, data->functionParams);
    printf("cb %s %s %s %s %u %s %s %d\n",
           domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", name, data->functionName,
           enter ? "enter" : "exit", data->correlationId, data->symbolName ? data->symbolName : "-",
           params, enter ? 0 : *(const int *)data->functionReturnValue);
    uint64_t now;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize &&
        !enter && (cuptiGetTimestamp(&now) != CUPTI_SUCCESS || cuptiActivityFlushAll(0)))
        printf("flush from a callback failed\n");
}

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max)
{
    *buffer = buffer_bytes ? aligned_alloc(8, buffer_bytes) : NULL;
    *size = buffer_bytes;
    *max = max_records;
}

static void print_record(FILE *out, const CUpti_Activity *r)
{
    const CUpti_ActivityKernel10 *k = (const void *)r;
    const CUpti_ActivityMemcpy6 *c = (const void *)r;
    const CUpti_ActivityMemset4 *s = (const void *)r;
    const CUpti_ActivityMemory4 *m = (const void *)r;
    const CUpti_ActivitySynchronization2 *y = (const void *)r;
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        fprintf(out, "rec kernel %s %d %d %d %d %d %d %d %u %u %llu %llu\n", k->name, k->gridX,
                k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->dynamicSharedMemory,
                k->streamId, k->correlationId, (unsigned long long)k->start,
                (unsigned long long)k->end);
    else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
        fprintf(out, "rec memcpy %u %u %u %llu %u %u %llu %llu %u\n", c->copyKind, c->srcKind,
                c->dstKind, (unsigned long long)c->bytes, c->streamId, c->correlationId,
                (unsigned long long)c->start, (unsigned long long)c->end, c->flags);
    else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET)
        fprintf(out, "rec memset %u %llu %u %u\n", s->value, (unsigned long long)s->bytes,
                s->streamId, s->correlationId);
    else if (r->kind == CUPTI_ACTIVITY_KIND_MEMORY2)
        fprintf(out, "rec memory %d %d %llu %u\n", (int)m->memoryOperationType, (int)m->memoryKind,
                (unsigned long long)m->bytes, m->correlationId);
    else if (r->kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
        fprintf(out, "rec sync %d %u %u %llu %llu\n", (int)y->type, y->streamId, y->correlationId,
                (unsigned long long)y->start, (unsigned long long)y->end);
    else if (r->kind == CUPTI_ACTIVITY_KIND_OVERHEAD)
        fprintf(out, "rec overhead\n");
    else
        fprintf(out, "rec kind%d\n", (int)r->kind);
}

static void CUPTIAPI on_complete(CUcontext context, uint32_t stream, uint8_t *buffer, size_t size,
                                 size_t valid)
{
    (void)context, (void)stream, (void)size;
    pthread_mutex_lock(&received.lock);
    received.buffers++;
    received.on_other_threads += !pthread_equal(pthread_self(), main_thread);
    CUpti_Activity *record = NULL;
    int count = 0;
    for (; cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS; count++)
        print_record(received.out, record);
    fprintf(received.out, "buf %d\n", count);
    pthread_mutex_unlock(&received.lock);
    free(buffer);
}

static int enable_everything(CUpti_SubscriberHandle subscriber)
{
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_MEMORY2,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        CUPTI_ACTIVITY_KIND_OVERHEAD,
    };
    int failures = cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS;
    failures += cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS;
    failures += cuptiActivityRegisterCallbacks(on_request, on_complete) != CUPTI_SUCCESS;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        failures += cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS;
    return failures;
}

/* Through the runtime: allocations, two copies, a set, 3+2 launches and one Ex launch on two
 * streams, a stream and a device synchronisation, frees. */
static int runtime_workload(void)
{
    void *device = NULL, *host = NULL;
    cudaStream_t stream = NULL;
    dim3 grid = {8, 1, 1}, block = {32, 1, 1};
    cudaLaunchConfig_t config = {
        .gridDim = {4, 1, 1}, .blockDim = {32, 1, 1}, .dynamicSmemBytes = 128};
    int failures = cudaMalloc(&device, BYTES) != cudaSuccess;
    failures += cudaMallocHost(&host, BYTES) != cudaSuccess;
    failures += cudaMemcpy(device, host, BYTES, cudaMemcpyHostToDevice) != cudaSuccess;
    failures += cudaMemset(device, 7, BYTES) != cudaSuccess;
    failures += cudaStreamCreate(&stream) != cudaSuccess;
    for (int i = 0; i < 3; i++)
        failures += cudaLaunchKernel((const void *)kernel_a, grid, block, NULL, 0, NULL) != 0;
    for (int i = 0; i < 2; i++)
        failures += cudaLaunchKernel((const void *)kernel_b, block, grid, NULL, 0, stream) != 0;
    failures += cudaLaunchKernelExC(&config, (const void *)kernel_a, NULL) != cudaSuccess;
    failures += cudaStreamSynchronize(stream) != cudaSuccess;
    failures += cudaMemcpy(host, device, BYTES, cudaMemcpyDeviceToHost) != cudaSuccess;
    failures += cudaDeviceSynchronize() != cudaSuccess;
    failures += cudaFree(device) != cudaSuccess;
    failures += cudaFreeHost(host) != cudaSuccess;
    failures += cudaStreamDestroy(stream) != cudaSuccess;
    return failures;
}

/* Through the driver, as a Triton launcher: a module, an allocation, a pageable copy, two
 * launches of drv_kernel, a context synchronisation, a free. */
static int driver_workload(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*get)(CUfunction *, CUmodule, const char *);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*sync)(void);
    CUresult (*release)(CUdeviceptr);
    if (!lib || !(*(void **)&load = dlsym(lib, "cuModuleLoadData")) ||
        !(*(void **)&get = dlsym(lib, "cuModuleGetFunction")) ||
        !(*(void **)&alloc = dlsym(lib, "cuMemAlloc_v2")) ||
        !(*(void **)&htod = dlsym(lib, "cuMemcpyHtoD_v2")) ||
        !(*(void **)&launch = dlsym(lib, "cuLaunchKernel")) ||
        !(*(void **)&sync = dlsym(lib, "cuCtxSynchronize")) ||
        !(*(void **)&release = dlsym(lib, "cuMemFree_v2")))
        return 1;
    static char pageable[BYTES];
    CUmodule module;
    CUfunction f;
    CUdeviceptr device;
    int failures = load(&module, "image") != CUDA_SUCCESS;
    failures += get(&f, module, "drv_kernel") != CUDA_SUCCESS;
    failures += alloc(&device, BYTES) != CUDA_SUCCESS;
    failures += htod(device, pageable, BYTES) != CUDA_SUCCESS;
    for (int i = 0; i < 2; i++)
        failures += launch(f, 16, 2, 1, 64, 1, 1, 256, NULL, NULL, NULL) != CUDA_SUCCESS;
    failures += sync() != CUDA_SUCCESS;
    failures += release(device) != CUDA_SUCCESS;
    return failures;
}

/* With buffers too small for the workload, some filled: gives CUPTI's own thread up to 2 s to
 * hand them back before the driver workload's flushes take whatever is left on this thread,
 * so that a test can count on both ways of delivery however the threads are scheduled. */
static void wait_for_worker(void)
{
    for (int waited_ms = 0; buffer_bytes && buffer_bytes < 1024 && waited_ms < 2000; waited_ms++) {
        pthread_mutex_lock(&received.lock);
        unsigned on_worker = received.on_other_threads;
        pthread_mutex_unlock(&received.lock);
        if (on_worker)
            return;
        usleep(1000);
    }
}

int main(int argc, char **argv)
{
    buffer_bytes = arg_or(argc, argv, 1, 65536);
    max_records = arg_or(argc, argv, 2, 0);
    main_thread = pthread_self();
    received.out = open_memstream(&received.text, &received.size);
    CUpti_SubscriberHandle subscriber, second;
    CUptiResult rc = cuptiSubscribe(&subscriber, on_callback, NULL);
    printf("subscribe %s\n", result_name(rc));
    printf("second_subscribe %s\n", result_name(cuptiSubscribe(&second, on_callback, NULL)));
    if (rc != CUPTI_SUCCESS)
        return 0;
    int failures = enable_everything(subscriber);
    failures += runtime_workload();
    wait_for_worker();
    failures += driver_workload();
    failures += cuptiActivityFlushAll(0) != CUPTI_SUCCESS;
    size_t dropped = 0;
    failures += cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) != CUPTI_SUCCESS;
    pthread_mutex_lock(&received.lock);
    fclose(received.out);
    fputs(received.text, stdout);
    printf("dropped %zu\nbuffers %u %u\n", dropped, received.buffers, received.on_other_threads);
    pthread_mutex_unlock(&received.lock);
    printf("correlation_data_mismatches %u\n", data_mismatches);
    if (failures != 0)
        fprintf(stderr, "cupti_harness: %d calls failed\n", failures);
    return failures != 0;
}
