/*
 * A deterministic CPU stand-in for libcudart.so.13, used to test the tracer on machines without a
 * GPU and to measure the tracer's own overhead. It owns the exported runtime entry points listed
 * in CT_DOUBLE_APIS (versioned like the real library by libcudart.map, and none that the real
 * one lacks: tests/test_double_fidelity.py), the bookkeeping behind them (device memory is
 * ordinary host memory, so copies and sets really move bytes; kernels are validated but never
 * run) and the ground-truth statistics written at exit. Behaviour is tuned by CT_DOUBLE_*
 * environment variables read once (CT_DOUBLE_DRIVER_VERSION below 13000 plays a driver too old
 * for this runtime); with none set, an API call costs no syscall, lock or atomic, so benchmarks
 * see the tracer's cost rather than the double's.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudart_extra.h"

/* Every exported entry point, in the order the statistics file lists them. */
#define CT_DOUBLE_APIS(X)                                                                          \
    X(cudaMalloc)                                                                                  \
    X(cudaFree)                                                                                    \
    X(cudaMallocHost)                                                                              \
    X(cudaHostAlloc)                                                                               \
    X(cudaFreeHost)                                                                                \
    X(cudaMallocManaged)                                                                           \
    X(cudaMallocPitch)                                                                             \
    X(cudaMallocAsync)                                                                             \
    X(cudaMallocAsync_ptsz)                                                                        \
    X(cudaFreeAsync)                                                                               \
    X(cudaFreeAsync_ptsz)                                                                          \
    X(cudaMemcpy)                                                                                  \
    X(cudaMemcpy_ptds)                                                                             \
    X(cudaMemcpyAsync)                                                                             \
    X(cudaMemcpyAsync_ptsz)                                                                        \
    X(cudaMemcpy2D)                                                                                \
    X(cudaMemcpy2D_ptds)                                                                           \
    X(cudaMemcpy2DAsync)                                                                           \
    X(cudaMemcpy2DAsync_ptsz)                                                                      \
    X(cudaMemcpyPeer)                                                                              \
    X(cudaMemcpyPeerAsync)                                                                         \
    X(cudaMemset)                                                                                  \
    X(cudaMemset_ptds)                                                                             \
    X(cudaMemsetAsync)                                                                             \
    X(cudaMemsetAsync_ptsz)                                                                        \
    X(cudaLaunchKernel)                                                                            \
    X(cudaLaunchKernel_ptsz)                                                                       \
    X(cudaLaunchKernelExC)                                                                         \
    X(cudaLaunchKernelExC_ptsz)                                                                    \
    X(cudaLaunchCooperativeKernel)                                                                 \
    X(cudaLaunchCooperativeKernel_ptsz)                                                            \
    X(__cudaGetKernel)                                                                             \
    X(__cudaLaunchKernel)                                                                          \
    X(__cudaLaunchKernel_ptsz)                                                                     \
    X(cudaGraphCreate)                                                                             \
    X(cudaGraphInstantiate)                                                                        \
    X(cudaGraphLaunch)                                                                             \
    X(cudaGraphLaunch_ptsz)                                                                        \
    X(cudaGraphExecDestroy)                                                                        \
    X(cudaGraphDestroy)                                                                            \
    X(cudaDeviceSynchronize)                                                                       \
    X(cudaStreamSynchronize)                                                                       \
    X(cudaStreamSynchronize_ptsz)                                                                  \
    X(cudaEventSynchronize)                                                                        \
    X(cudaStreamWaitEvent)                                                                         \
    X(cudaStreamWaitEvent_ptsz)                                                                    \
    X(cudaStreamQuery)                                                                             \
    X(cudaStreamQuery_ptsz)                                                                        \
    X(cudaEventQuery)                                                                              \
    X(cudaRuntimeGetVersion)                                                                       \
    X(cudaDriverGetVersion)                                                                        \
    X(cudaGetDeviceCount)                                                                          \
    X(cudaGetDeviceProperties)                                                                     \
    X(cudaFuncGetName)                                                                             \
    X(cudaGetLastError)                                                                            \
    X(cudaPeekAtLastError)                                                                         \
    X(cudaGetErrorName)                                                                            \
    X(cudaGetErrorString)                                                                          \
    X(cudaSetDevice)                                                                               \
    X(cudaGetDevice)                                                                               \
    X(cudaStreamCreate)                                                                            \
    X(cudaStreamDestroy)                                                                           \
    X(cudaEventCreate)                                                                             \
    X(cudaEventRecord)                                                                             \
    X(cudaEventRecord_ptsz)                                                                        \
    X(cudaEventDestroy)                                                                            \
    X(cudaDeviceGetAttribute)                                                                      \
    X(cudaSetDeviceFlags)                                                                          \
    X(cudaGetDeviceFlags)                                                                          \
    X(cudaDeviceReset)                                                                             \
    X(cudaInitDevice)                                                                              \
    X(cudaMemGetInfo)                                                                              \
    X(cudaStreamCreateWithFlags)                                                                   \
    X(cudaStreamCreateWithPriority)                                                                \
    X(cudaEventCreateWithFlags)                                                                    \
    X(cudaEventRecordWithFlags)                                                                    \
    X(cudaEventRecordWithFlags_ptsz)                                                               \
    X(cudaEventElapsedTime)                                                                        \
    X(cudaHostRegister)                                                                            \
    X(cudaHostUnregister)                                                                          \
    X(cudaDeviceGetDefaultMemPool)                                                                 \
    X(cudaDeviceGetMemPool)                                                                        \
    X(cudaDeviceSetMemPool)                                                                        \
    X(cudaMemPoolCreate)                                                                           \
    X(cudaMemPoolDestroy)                                                                          \
    X(cudaMemPoolTrimTo)                                                                           \
    X(cudaMemPoolSetAttribute)                                                                     \
    X(cudaMemPoolGetAttribute)                                                                     \
    X(cudaMallocFromPoolAsync)                                                                     \
    X(cudaMallocFromPoolAsync_ptsz)                                                                \
    X(cudaGraphInstantiateWithFlags)                                                               \
    X(cudaGraphInstantiateWithParams)                                                              \
    X(cudaGraphInstantiateWithParams_ptsz)

// clang-format off
enum api_id {
#define AS_ENUM(name) API_##name,
    CT_DOUBLE_APIS(AS_ENUM)
#undef AS_ENUM
    API_COUNT
};
// clang-format on

static const char *const api_names[API_COUNT] = {
#define AS_NAME(name) #name,
    CT_DOUBLE_APIS(AS_NAME)
#undef AS_NAME
};

/* The error codes the double returns, and those the real runtime gives where the GPU or its
 * driver is unusable (which programs print), named and described exactly as the real runtime
 * does. */
#define CT_DOUBLE_ERRORS(X)                                                                        \
    X(cudaSuccess, "no error")                                                                     \
    X(cudaErrorInvalidValue, "invalid argument")                                                   \
    X(cudaErrorMemoryAllocation, "out of memory")                                                  \
    X(cudaErrorInitializationError, "initialization error")                                        \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")                             \
    X(cudaErrorInvalidPitchValue, "invalid pitch argument")                                        \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                        \
    X(cudaErrorStubLibrary, "CUDA driver is a stub library")                                       \
    X(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version") \
    X(cudaErrorInvalidDeviceFunction, "invalid device function")                                   \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                     \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                            \
    X(cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device") \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                   \
    X(cudaErrorNotReady, "device not ready")                                                       \
    X(cudaErrorHostMemoryAlreadyRegistered,                                                        \
      "part or all of the requested memory range is already mapped")                               \
    X(cudaErrorHostMemoryNotRegistered,                                                            \
      "pointer does not correspond to a registered memory region")                                 \
    X(cudaErrorUnknown, "unknown error")

#define UNRECOGNIZED_ERROR "unrecognized error code"

#define RUNTIME_VERSION 13000
#define DEVICE_NAME "cudatrace CPU double"
/* Real cudaMalloc results are 256-byte aligned; code under test may rely on it. */
#define DEVICE_ALIGNMENT 256
#define PITCH_ALIGNMENT 512
/* Advertised when CT_DOUBLE_MEM_LIMIT is unset: a plausible data-centre card. */
#define UNLIMITED_ADVERTISED_BYTES (80ULL << 30)
#define BLOCK_TABLE_BUCKETS 4096

static const dim3 max_grid = {2147483647u, 65535u, 65535u};
static const dim3 max_block = {1024u, 1024u, 64u};
#define MAX_THREADS_PER_BLOCK 1024u

/* Most handles carry nothing: the runtime only reads their address. An event keeps what
 * cudaEventElapsedTime needs, a pool what cudaMemPoolSetAttribute set. */
struct CUstream_st {
    char unused;
};
struct CUevent_st {
    unsigned int flags;
    bool recorded;
    unsigned long long recorded_ns;
};
struct CUmemPoolHandle_st {
    uint64_t attributes[cudaMemPoolAttrUsedMemHigh + 1]; /* by enum cudaMemPoolAttr */
};
struct CUgraph_st {
    char unused;
};
struct CUgraphExec_st {
    char unused;
};

static struct {
    unsigned long long call_ns;
    unsigned long long sync_ns;
    unsigned long long launch_ns;     /* CT_DOUBLE_LAUNCH_NS: each launch spins this long */
    unsigned long long slow_alloc_ns; /* CT_DOUBLE_SLOW_ALLOC_NS: device allocations of ... */
    size_t slow_alloc_bytes;          /* ... CT_DOUBLE_SLOW_ALLOC_BYTES or more sleep so long */
    size_t mem_limit;
    int driver_version;
    int runtime_version;    /* CT_DOUBLE_RUNTIME_VERSION: the runtime it plays */
    int compute_capability; /* CT_DOUBLE_SM: 90 means 9.0 */
    bool no_kernel_image;   /* CT_DOUBLE_NO_KERNEL_IMAGE=1: launches fail with 209 */
    char *stats_path;
} knobs = {0, 0, 0, 0, SIZE_MAX, SIZE_MAX, RUNTIME_VERSION, RUNTIME_VERSION, 90, false, NULL};

static atomic_bool knobs_loaded;
static pthread_once_t knobs_once = PTHREAD_ONCE_INIT;

static atomic_ullong call_counts[API_COUNT];
static atomic_ullong error_counts[API_COUNT];
static atomic_ullong kernel_launches;

/* The real runtime keeps the last error per host thread. */
static _Thread_local cudaError_t last_error = cudaSuccess;

/* MEM_REGISTERED: the program's own memory, pinned by cudaHostRegister and never freed here. */
enum mem_kind { MEM_DEVICE, MEM_PINNED, MEM_REGISTERED, MEM_KIND_COUNT };

struct block {
    void *ptr;
    size_t size;
    enum mem_kind kind;
    struct block *next;
};

/* Frees need each pointer's size and kind; allocation is never on a benchmark's hot path. */
static struct {
    pthread_mutex_t lock;
    struct block *buckets[BLOCK_TABLE_BUCKETS];
    size_t live_bytes[MEM_KIND_COUNT];
    size_t peak_bytes[MEM_KIND_COUNT];
    unsigned long long device_bytes_allocated;
} blocks = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Digits only: a sign, blank or suffix means the user meant something we would misread. */
static bool parse_decimal(const char *text, unsigned long long max, unsigned long long *out)
{
    if (!text || !isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || value > max)
        return false;
    *out = value;
    return true;
}

static void load_knobs(void)
{
    unsigned long long value;
    if (parse_decimal(getenv("CT_DOUBLE_CALL_NS"), ULLONG_MAX, &value))
        knobs.call_ns = value;
    if (parse_decimal(getenv("CT_DOUBLE_SYNC_NS"), ULLONG_MAX, &value))
        knobs.sync_ns = value;
    if (parse_decimal(getenv("CT_DOUBLE_LAUNCH_NS"), ULLONG_MAX, &value))
        knobs.launch_ns = value;
    if (parse_decimal(getenv("CT_DOUBLE_SLOW_ALLOC_NS"), ULLONG_MAX, &value))
        knobs.slow_alloc_ns = value;
    if (parse_decimal(getenv("CT_DOUBLE_SLOW_ALLOC_BYTES"), SIZE_MAX, &value))
        knobs.slow_alloc_bytes = (size_t)value;
    if (parse_decimal(getenv("CT_DOUBLE_MEM_LIMIT"), SIZE_MAX, &value))
        knobs.mem_limit = (size_t)value;
    if (parse_decimal(getenv("CT_DOUBLE_DRIVER_VERSION"), INT_MAX, &value))
        knobs.driver_version = (int)value;
    if (parse_decimal(getenv("CT_DOUBLE_RUNTIME_VERSION"), INT_MAX, &value))
        knobs.runtime_version = (int)value;
    if (parse_decimal(getenv("CT_DOUBLE_SM"), 1000, &value))
        knobs.compute_capability = (int)value;
    if (parse_decimal(getenv("CT_DOUBLE_NO_KERNEL_IMAGE"), 1, &value))
        knobs.no_kernel_image = value == 1;
    const char *stats_path = getenv("CT_DOUBLE_STATS");
    if (stats_path && stats_path[0] != '\0')
        knobs.stats_path = strdup(stats_path);
    atomic_store_explicit(&knobs_loaded, true, memory_order_release);
}

/* Loading here rather than lazily keeps the first traced call free of pthread_once. */
__attribute__((constructor)) static void load_knobs_at_startup(void)
{
    pthread_once(&knobs_once, load_knobs);
}

static unsigned long long monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
}

/* Spinning, not sleeping, so a simulated call cost stays on the calling thread's CPU time. */
static void spin_for_ns(unsigned long long ns)
{
    unsigned long long start = monotonic_ns();
    while (monotonic_ns() - start < ns)
        ;
}

static void sleep_for_ns(unsigned long long ns)
{
    struct timespec left = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

static inline bool stats_enabled(void)
{
    return knobs.stats_path != NULL;
}

static inline void enter(enum api_id id)
{
    /* Another library's constructor may call us before ours has run. */
    if (__builtin_expect(!atomic_load_explicit(&knobs_loaded, memory_order_acquire), 0))
        pthread_once(&knobs_once, load_knobs);
    if (stats_enabled())
        atomic_fetch_add_explicit(&call_counts[id], 1, memory_order_relaxed);
    if (knobs.call_ns != 0)
        spin_for_ns(knobs.call_ns);
}

static inline void count_error(enum api_id id)
{
    if (stats_enabled())
        atomic_fetch_add_explicit(&error_counts[id], 1, memory_order_relaxed);
}

/* With CT_DOUBLE_DRIVER_VERSION below the runtime's, behave as the real runtime does on a driver
 * that is too old: everything but the version and error queries fails with
 * cudaErrorInsufficientDriver (the error queries never ask). */
static inline bool driver_too_old_for(enum api_id id)
{
    return knobs.driver_version < knobs.runtime_version && id != API_cudaRuntimeGetVersion &&
           id != API_cudaDriverGetVersion;
}

static inline cudaError_t leave(enum api_id id, cudaError_t rc)
{
    if (__builtin_expect(rc != cudaSuccess, 0)) {
        /* "Not ready" is a status, not a failure: the real runtime does not latch it. */
        if (rc != cudaErrorNotReady)
            last_error = rc;
        count_error(id);
    }
    return rc;
}

/* Starts every export that returns a cudaError_t. A driver too old refuses the call here, before
 * it has any effect (no output written, nothing allocated, copied or launched), as the real
 * runtime without a usable driver does. */
#define ENTER_OR_REFUSE(id)                                                                        \
    do {                                                                                           \
        enter(id);                                                                                 \
        if (__builtin_expect(driver_too_old_for(id), 0))                                           \
            return leave(id, cudaErrorInsufficientDriver);                                         \
    } while (0)

/* Exports that share an implementation; the implementation receives the exported name's id. */
#define DEFINE_EXPORT(name, params, impl, ...)                                                     \
    cudaError_t CUDARTAPI name params                                                              \
    {                                                                                              \
        return impl(API_##name, __VA_ARGS__);                                                      \
    }

/* A legacy-stream entry point and its per-thread-stream twin behave identically on one CPU. */
#define DEFINE_EXPORT_PAIR(name, twin, params, impl, ...)                                          \
    DEFINE_EXPORT(name, params, impl, __VA_ARGS__)                                                 \
    DEFINE_EXPORT(twin, params, impl, __VA_ARGS__)

/* Exports whose whole implementation is `call`, an expression that computes the result. */
#define DEFINE_GUARDED(name, params, call)                                                         \
    cudaError_t CUDARTAPI name params                                                              \
    {                                                                                              \
        ENTER_OR_REFUSE(API_##name);                                                               \
        return leave(API_##name, call);                                                            \
    }

#define DEFINE_GUARDED_PAIR(name, twin, params, call)                                              \
    DEFINE_GUARDED(name, params, call)                                                             \
    DEFINE_GUARDED(twin, params, call)

/* ---- memory ---------------------------------------------------------------------------- */

static struct block **bucket_for(const void *ptr)
{
    uintptr_t key = (uintptr_t)ptr / DEVICE_ALIGNMENT;
    return &blocks.buckets[key % BLOCK_TABLE_BUCKETS];
}

/* Adds a block of `size` bytes at ptr to the table and the live counts; the lock is held. */
static void link_block(struct block *entry, void *ptr, size_t size, enum mem_kind kind)
{
    *entry = (struct block){ptr, size, kind, *bucket_for(ptr)};
    *bucket_for(ptr) = entry;
    blocks.live_bytes[kind] += size;
    if (blocks.live_bytes[kind] > blocks.peak_bytes[kind])
        blocks.peak_bytes[kind] = blocks.live_bytes[kind];
    if (kind == MEM_DEVICE)
        blocks.device_bytes_allocated += size;
}

/* The link that points at ptr's block of that kind, or NULL; the lock is held. */
static struct block **find_block(const void *ptr, enum mem_kind kind)
{
    for (struct block **link = bucket_for(ptr); *link; link = &(*link)->next)
        if ((*link)->ptr == ptr && (*link)->kind == kind)
            return link;
    return NULL;
}

/* Takes ptr's block of that kind out of the table and the live counts; NULL if there is none. */
static struct block *unlink_block(const void *ptr, enum mem_kind kind)
{
    pthread_mutex_lock(&blocks.lock);
    struct block **link = find_block(ptr, kind);
    struct block *found = link ? *link : NULL;
    if (found) {
        *link = found->next;
        blocks.live_bytes[kind] -= found->size;
    }
    pthread_mutex_unlock(&blocks.lock);
    return found;
}

static cudaError_t allocate(void **out, size_t size, enum mem_kind kind)
{
    if (!out)
        return cudaErrorInvalidValue;
    *out = NULL;
    if (size == 0)
        return cudaSuccess;
    if (size > SIZE_MAX - (DEVICE_ALIGNMENT - 1))
        return cudaErrorMemoryAllocation;
    size_t rounded = (size + DEVICE_ALIGNMENT - 1) & ~(size_t)(DEVICE_ALIGNMENT - 1);
    if (kind == MEM_DEVICE && size >= knobs.slow_alloc_bytes)
        sleep_for_ns(knobs.slow_alloc_ns);

    struct block *entry = malloc(sizeof *entry);
    if (!entry)
        return cudaErrorMemoryAllocation;
    cudaError_t rc = cudaSuccess;
    pthread_mutex_lock(&blocks.lock);
    size_t live = blocks.live_bytes[kind];
    void *ptr = NULL;
    if (kind == MEM_DEVICE && size > knobs.mem_limit - live)
        rc = cudaErrorMemoryAllocation;
    else if (!(ptr = aligned_alloc(DEVICE_ALIGNMENT, rounded)))
        rc = cudaErrorMemoryAllocation;
    if (rc == cudaSuccess)
        link_block(entry, ptr, size, kind);
    pthread_mutex_unlock(&blocks.lock);
    if (rc != cudaSuccess)
        free(entry);
    *out = ptr;
    return rc;
}

/* Freeing through the wrong family (cudaFree on pinned memory) is an error, as on a GPU. */
static cudaError_t release(void *ptr, enum mem_kind kind)
{
    if (!ptr)
        return cudaSuccess;
    struct block *found = unlink_block(ptr, kind);
    if (!found)
        return cudaErrorInvalidValue;
    free(found->ptr);
    free(found);
    return cudaSuccess;
}

static cudaError_t allocate_as(enum api_id id, void **out, size_t size, enum mem_kind kind)
{
    ENTER_OR_REFUSE(id);
    return leave(id, allocate(out, size, kind));
}

static cudaError_t allocate_on_stream(enum api_id id, void **out, size_t size, cudaStream_t stream)
{
    (void)stream;
    return allocate_as(id, out, size, MEM_DEVICE);
}

static cudaError_t release_as(enum api_id id, void *ptr, enum mem_kind kind)
{
    ENTER_OR_REFUSE(id);
    return leave(id, release(ptr, kind));
}

static cudaError_t release_on_stream(enum api_id id, void *ptr, cudaStream_t stream)
{
    (void)stream;
    return release_as(id, ptr, MEM_DEVICE);
}

DEFINE_EXPORT(cudaMalloc, (void **devPtr, size_t size), allocate_as, devPtr, size, MEM_DEVICE)
DEFINE_EXPORT(cudaMallocHost, (void **ptr, size_t size), allocate_as, ptr, size, MEM_PINNED)
DEFINE_EXPORT(cudaFree, (void *devPtr), release_as, devPtr, MEM_DEVICE)
DEFINE_EXPORT(cudaFreeHost, (void *ptr), release_as, ptr, MEM_PINNED)
DEFINE_EXPORT_PAIR(cudaMallocAsync, cudaMallocAsync_ptsz,
                   (void **devPtr, size_t size, cudaStream_t hStream), allocate_on_stream, devPtr,
                   size, hStream)
DEFINE_EXPORT_PAIR(cudaFreeAsync, cudaFreeAsync_ptsz, (void *devPtr, cudaStream_t hStream),
                   release_on_stream, devPtr, hStream)

cudaError_t CUDARTAPI cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    (void)flags;
    return allocate_as(API_cudaHostAlloc, pHost, size, MEM_PINNED);
}

cudaError_t CUDARTAPI cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    (void)flags;
    return allocate_as(API_cudaMallocManaged, devPtr, size, MEM_DEVICE);
}

cudaError_t CUDARTAPI cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    ENTER_OR_REFUSE(API_cudaMallocPitch);
    if (!pitch)
        return leave(API_cudaMallocPitch, cudaErrorInvalidValue);
    if (width > SIZE_MAX - (PITCH_ALIGNMENT - 1))
        return leave(API_cudaMallocPitch, cudaErrorMemoryAllocation);
    size_t row = (width + PITCH_ALIGNMENT - 1) & ~(size_t)(PITCH_ALIGNMENT - 1);
    if (height != 0 && row > SIZE_MAX / height)
        return leave(API_cudaMallocPitch, cudaErrorMemoryAllocation);
    cudaError_t rc = allocate(devPtr, row * height, MEM_DEVICE);
    *pitch = rc == cudaSuccess ? row : 0;
    return leave(API_cudaMallocPitch, rc);
}

/* Pools hand out ordinary device memory, freed by cudaFreeAsync like any other. */
static cudaError_t allocate_from_pool(void **out, size_t size, cudaMemPool_t pool,
                                      cudaStream_t stream)
{
    (void)stream;
    return pool ? allocate(out, size, MEM_DEVICE) : cudaErrorInvalidValue;
}

DEFINE_GUARDED_PAIR(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_ptsz,
                    (void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream),
                    allocate_from_pool(ptr, size, memPool, stream))

/* Only the start of a range is checked: registering it twice, or unregistering an address that
 * was never registered, fails as on a GPU; overlapping ranges are not looked for. */
static cudaError_t register_host(void *ptr, size_t size, unsigned int flags)
{
    (void)flags;
    if (!ptr || size == 0)
        return cudaErrorInvalidValue;
    struct block *entry = malloc(sizeof *entry);
    if (!entry)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&blocks.lock);
    bool taken = find_block(ptr, MEM_REGISTERED) != NULL;
    if (!taken)
        link_block(entry, ptr, size, MEM_REGISTERED);
    pthread_mutex_unlock(&blocks.lock);
    if (taken)
        free(entry);
    return taken ? cudaErrorHostMemoryAlreadyRegistered : cudaSuccess;
}

static cudaError_t unregister_host(void *ptr)
{
    struct block *found = unlink_block(ptr, MEM_REGISTERED);
    free(found);
    return found ? cudaSuccess : cudaErrorHostMemoryNotRegistered;
}

DEFINE_GUARDED(cudaHostRegister, (void *ptr, size_t size, unsigned int flags),
               register_host(ptr, size, flags))
DEFINE_GUARDED(cudaHostUnregister, (void *ptr), unregister_host(ptr))

/* What cudaMemGetInfo and cudaGetDeviceProperties call the device's memory. */
static size_t advertised_bytes(void)
{
    return knobs.mem_limit == SIZE_MAX ? (size_t)UNLIMITED_ADVERTISED_BYTES : knobs.mem_limit;
}

static cudaError_t memory_info(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes)
        return cudaErrorInvalidValue;
    size_t total = advertised_bytes();
    pthread_mutex_lock(&blocks.lock);
    size_t live = blocks.live_bytes[MEM_DEVICE];
    pthread_mutex_unlock(&blocks.lock);
    *total_bytes = total;
    *free_bytes = live < total ? total - live : 0;
    return cudaSuccess;
}

DEFINE_GUARDED(cudaMemGetInfo, (size_t * freeBytes, size_t *totalBytes),
               memory_info(freeBytes, totalBytes))

/* ---- copies and sets ------------------------------------------------------------------- */

/* Every copy is a (possibly one-row) 2D copy; "device" bytes are host bytes, so kind is moot. */
static cudaError_t copy_rows(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                             size_t height, enum cudaMemcpyKind kind)
{
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    for (size_t row = 0; row < height; row++)
        memmove((char *)dst + row * dpitch, (const char *)src + row * spitch, width);
    return cudaSuccess;
}

static cudaError_t copy_2d(enum api_id id, void *dst, size_t dpitch, const void *src, size_t spitch,
                           size_t width, size_t height, enum cudaMemcpyKind kind,
                           cudaStream_t stream)
{
    (void)stream;
    ENTER_OR_REFUSE(id);
    return leave(id, copy_rows(dst, dpitch, src, spitch, width, height, kind));
}

static cudaError_t copy_peer(enum api_id id, void *dst, int dst_device, const void *src,
                             int src_device, size_t count, cudaStream_t stream)
{
    (void)stream;
    ENTER_OR_REFUSE(id);
    if (dst_device != 0 || src_device != 0)
        return leave(id, cudaErrorInvalidDevice);
    return leave(id, copy_rows(dst, count, src, count, count, 1, cudaMemcpyDeviceToDevice));
}

static cudaError_t fill(enum api_id id, void *ptr, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    ENTER_OR_REFUSE(id);
    if (count != 0 && !ptr)
        return leave(id, cudaErrorInvalidValue);
    if (count != 0)
        memset(ptr, value, count);
    return leave(id, cudaSuccess);
}

DEFINE_EXPORT_PAIR(cudaMemcpy, cudaMemcpy_ptds,
                   (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind), copy_2d,
                   dst, count, src, count, count, 1, kind, NULL)
DEFINE_EXPORT_PAIR(cudaMemcpyAsync, cudaMemcpyAsync_ptsz,
                   (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                    cudaStream_t stream),
                   copy_2d, dst, count, src, count, count, 1, kind, stream)
DEFINE_EXPORT_PAIR(cudaMemcpy2D, cudaMemcpy2D_ptds,
                   (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                    size_t height, enum cudaMemcpyKind kind),
                   copy_2d, dst, dpitch, src, spitch, width, height, kind, NULL)
DEFINE_EXPORT_PAIR(cudaMemcpy2DAsync, cudaMemcpy2DAsync_ptsz,
                   (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                    size_t height, enum cudaMemcpyKind kind, cudaStream_t stream),
                   copy_2d, dst, dpitch, src, spitch, width, height, kind, stream)
DEFINE_EXPORT(cudaMemcpyPeer,
              (void *dst, int dstDevice, const void *src, int srcDevice, size_t count), copy_peer,
              dst, dstDevice, src, srcDevice, count, NULL)
DEFINE_EXPORT(cudaMemcpyPeerAsync,
              (void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
               cudaStream_t stream),
              copy_peer, dst, dstDevice, src, srcDevice, count, stream)
DEFINE_EXPORT_PAIR(cudaMemset, cudaMemset_ptds, (void *devPtr, int value, size_t count), fill,
                   devPtr, value, count, NULL)
DEFINE_EXPORT_PAIR(cudaMemsetAsync, cudaMemsetAsync_ptsz,
                   (void *devPtr, int value, size_t count, cudaStream_t stream), fill, devPtr,
                   value, count, stream)

/* ---- launches -------------------------------------------------------------------------- */

static bool dims_fit(dim3 dims, dim3 max)
{
    return dims.x != 0 && dims.y != 0 && dims.z != 0 && dims.x <= max.x && dims.y <= max.y &&
           dims.z <= max.z;
}

static cudaError_t check_launch(const void *func, dim3 grid, dim3 block)
{
    if (!func)
        return cudaErrorInvalidDeviceFunction;
    if (knobs.no_kernel_image)
        return cudaErrorNoKernelImageForDevice;
    if (!dims_fit(grid, max_grid) || !dims_fit(block, max_block) ||
        (unsigned long long)block.x * block.y * block.z > MAX_THREADS_PER_BLOCK)
        return cudaErrorInvalidConfiguration;
    return cudaSuccess;
}

/* The kernel is never run: a launch is exactly as cheap as validating it. */
static cudaError_t launch(enum api_id id, const void *func, dim3 grid, dim3 block, void **args,
                          size_t shared_mem, cudaStream_t stream)
{
    (void)args;
    (void)shared_mem;
    (void)stream;
    ENTER_OR_REFUSE(id);
    cudaError_t rc = check_launch(func, grid, block);
    if (knobs.launch_ns != 0)
        spin_for_ns(knobs.launch_ns);
    if (rc == cudaSuccess && stats_enabled())
        atomic_fetch_add_explicit(&kernel_launches, 1, memory_order_relaxed);
    return leave(id, rc);
}

static cudaError_t launch_with_config(enum api_id id, const cudaLaunchConfig_t *config,
                                      const void *func, void **args)
{
    if (config)
        return launch(id, func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                      config->stream);
    ENTER_OR_REFUSE(id);
    return leave(id, cudaErrorInvalidValue);
}

/* What __cudaGetKernel hands out: the address of an entry of the double's own, never the host
 * function, as the real runtime's handles are its own objects. A tracer can then only name a
 * launch made through a handle by remembering what __cudaGetKernel answered. */
struct CUkern_st {
    const void *host_function; /* written once, under the lock, before its handle exists */
};

#define KERNEL_SLOTS 1024

static struct {
    pthread_mutex_t lock;
    struct CUkern_st slots[KERNEL_SLOTS];
    size_t used;
} kernels = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* One handle per host function, as nvcc asks once per launch site; NULL once the table is full. */
static cudaKernel_t handle_for(const void *func)
{
    pthread_mutex_lock(&kernels.lock);
    size_t i = 0;
    while (i < kernels.used && kernels.slots[i].host_function != func)
        i++;
    if (i == kernels.used && i < KERNEL_SLOTS)
        kernels.slots[kernels.used++].host_function = func;
    pthread_mutex_unlock(&kernels.lock);
    return i < KERNEL_SLOTS ? &kernels.slots[i] : NULL;
}

/* The host function behind a handle __cudaGetKernel gave out; NULL for any other value, which a
 * launch then refuses as an invalid device function. */
static const void *host_function_of(cudaKernel_t kernel)
{
    uintptr_t at = (uintptr_t)kernel, first = (uintptr_t)kernels.slots;
    if (at < first || at >= first + sizeof kernels.slots ||
        (at - first) % sizeof kernels.slots[0] != 0)
        return NULL;
    return kernel->host_function;
}

static cudaError_t launch_by_handle(enum api_id id, cudaKernel_t kernel, dim3 grid, dim3 block,
                                    void **args, size_t shared_mem, cudaStream_t stream)
{
    return launch(id, host_function_of(kernel), grid, block, args, shared_mem, stream);
}

DEFINE_EXPORT_PAIR(cudaLaunchKernel, cudaLaunchKernel_ptsz,
                   (const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   launch, func, gridDim, blockDim, args, sharedMem, stream)
DEFINE_EXPORT_PAIR(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel_ptsz,
                   (const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   launch, func, gridDim, blockDim, args, sharedMem, stream)
DEFINE_EXPORT_PAIR(__cudaLaunchKernel, __cudaLaunchKernel_ptsz,
                   (cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   launch_by_handle, kernel, gridDim, blockDim, args, sharedMem, stream)
DEFINE_EXPORT_PAIR(cudaLaunchKernelExC, cudaLaunchKernelExC_ptsz,
                   (const cudaLaunchConfig_t *config, const void *func, void **args),
                   launch_with_config, config, func, args)

/* The one call a driver too old does not leave untouched: the real runtime then still hands
 * back the host function as the handle (seen with the CUDA 13.0 runtime and no driver), which
 * its launches go on to refuse. */
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    enter(API___cudaGetKernel);
    if (!kernel || !func) /* checked first, before the driver, as the real runtime does */
        return leave(API___cudaGetKernel,
                     kernel ? cudaErrorInvalidDeviceFunction : cudaErrorInvalidValue);
    if (driver_too_old_for(API___cudaGetKernel)) {
        *kernel = (cudaKernel_t)func;
        return leave(API___cudaGetKernel, cudaErrorInsufficientDriver);
    }
    cudaKernel_t handle = handle_for(func);
    if (!handle)
        return leave(API___cudaGetKernel, cudaErrorMemoryAllocation);
    *kernel = handle;
    return leave(API___cudaGetKernel, cudaSuccess);
}

/* ---- nvcc's module registration ------------------------------------------------------- */

/* Enough of what nvcc-compiled code calls when its library is loaded and at
 * each <<<>>>, so such a library loads on the double: registration is
 * accepted and forgotten (kernels never run here), and the launch
 * configuration is kept per thread between push and pop. Not counted in the
 * statistics: they are the compiler's calls, not the program's. */
static _Thread_local struct {
    dim3 grid, block;
    size_t shared_mem;
    cudaStream_t stream;
} pushed_config;

void **CUDARTAPI __cudaRegisterFatBinary(void *fat_cubin)
{
    static void *handle;
    handle = fat_cubin;
    return &handle;
}

void CUDARTAPI __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;
}

void CUDARTAPI __cudaUnregisterFatBinary(void **handle)
{
    (void)handle;
}

char CUDARTAPI __cudaInitModule(void **handle)
{
    (void)handle;
    return 0;
}

void CUDARTAPI __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                      const char *device_name, int thread_limit, uint3 *tid,
                                      uint3 *bid, dim3 *block, dim3 *grid, int *warp_size)
{
    (void)handle, (void)host_fun, (void)device_fun, (void)device_name, (void)thread_limit;
    (void)tid, (void)bid, (void)block, (void)grid, (void)warp_size;
}

unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared_mem,
                                               struct CUstream_st *stream)
{
    pushed_config.grid = grid;
    pushed_config.block = block;
    pushed_config.shared_mem = shared_mem;
    pushed_config.stream = stream;
    return 0;
}

cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared_mem,
                                                 void *stream)
{
    *grid = pushed_config.grid;
    *block = pushed_config.block;
    *shared_mem = pushed_config.shared_mem;
    *(cudaStream_t *)stream = pushed_config.stream;
    return cudaSuccess;
}

/* ---- handles: streams, events, graphs -------------------------------------------------- */

#define NEW_HANDLE(out)                                                                            \
    ((*(out) = calloc(1, sizeof **(out))) ? cudaSuccess : cudaErrorMemoryAllocation)

static cudaError_t destroy_handle(void *handle, cudaError_t if_null)
{
    if (!handle)
        return if_null;
    free(handle);
    return cudaSuccess;
}

/* One CPU has one stream priority and nothing to synchronise with, so flags and priority are
 * only checked. */
static cudaError_t create_stream(cudaStream_t *out, unsigned int flags, int priority)
{
    (void)priority;
    if (!out || (flags & ~(unsigned int)cudaStreamNonBlocking))
        return cudaErrorInvalidValue;
    return NEW_HANDLE(out);
}

DEFINE_GUARDED(cudaStreamCreate, (cudaStream_t * pStream),
               create_stream(pStream, cudaStreamDefault, 0))
DEFINE_GUARDED(cudaStreamCreateWithFlags, (cudaStream_t * pStream, unsigned int flags),
               create_stream(pStream, flags, 0))
DEFINE_GUARDED(cudaStreamCreateWithPriority,
               (cudaStream_t * pStream, unsigned int flags, int priority),
               create_stream(pStream, flags, priority))

#define EVENT_FLAGS (cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)

/* An interprocess event must also disable timing, as the real runtime insists. */
static cudaError_t create_event(cudaEvent_t *out, unsigned int flags)
{
    if (!out || (flags & ~(unsigned int)EVENT_FLAGS) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return cudaErrorInvalidValue;
    cudaError_t rc = NEW_HANDLE(out);
    if (rc == cudaSuccess)
        (*out)->flags = flags;
    return rc;
}

DEFINE_GUARDED(cudaEventCreate, (cudaEvent_t * event), create_event(event, cudaEventDefault))
DEFINE_GUARDED(cudaEventCreateWithFlags, (cudaEvent_t * event, unsigned int flags),
               create_event(event, flags))

static cudaError_t create_graph(cudaGraph_t *out, unsigned int flags)
{
    return out && flags == 0 ? NEW_HANDLE(out) : cudaErrorInvalidValue;
}

DEFINE_GUARDED(cudaGraphCreate, (cudaGraph_t * pGraph, unsigned int flags),
               create_graph(pGraph, flags))

/* Every instantiation is cudaGraphInstantiateWithParams underneath; the flags change nothing
 * for a graph that never runs. */
static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t graph,
                               cudaGraphInstantiateParams *params)
{
    if (!out || !graph || !params)
        return cudaErrorInvalidValue;
    cudaError_t rc = NEW_HANDLE(out);
    params->result_out =
        rc == cudaSuccess ? cudaGraphInstantiateSuccess : cudaGraphInstantiateError;
    return rc;
}

DEFINE_GUARDED(cudaGraphInstantiate,
               (cudaGraphExec_t * pGraphExec, cudaGraph_t graph, unsigned long long flags),
               instantiate(pGraphExec, graph, &(cudaGraphInstantiateParams){.flags = flags}))
DEFINE_GUARDED(cudaGraphInstantiateWithFlags,
               (cudaGraphExec_t * pGraphExec, cudaGraph_t graph, unsigned long long flags),
               instantiate(pGraphExec, graph, &(cudaGraphInstantiateParams){.flags = flags}))
DEFINE_GUARDED_PAIR(cudaGraphInstantiateWithParams, cudaGraphInstantiateWithParams_ptsz,
                    (cudaGraphExec_t * pGraphExec, cudaGraph_t graph,
                     cudaGraphInstantiateParams *instantiateParams),
                    instantiate(pGraphExec, graph, instantiateParams))

DEFINE_GUARDED(cudaStreamDestroy, (cudaStream_t stream),
               destroy_handle(stream, cudaErrorInvalidResourceHandle))
DEFINE_GUARDED(cudaEventDestroy, (cudaEvent_t event),
               destroy_handle(event, cudaErrorInvalidResourceHandle))
DEFINE_GUARDED(cudaGraphExecDestroy, (cudaGraphExec_t graphExec),
               destroy_handle(graphExec, cudaErrorInvalidValue))
DEFINE_GUARDED(cudaGraphDestroy, (cudaGraph_t graph), destroy_handle(graph, cudaErrorInvalidValue))

/* Work completes inside the call that issues it, so anything that has a handle is done. */
static cudaError_t require_handle(enum api_id id, const void *handle, cudaError_t if_null)
{
    ENTER_OR_REFUSE(id);
    return leave(id, handle ? cudaSuccess : if_null);
}

static cudaError_t launch_graph(enum api_id id, cudaGraphExec_t exec, cudaStream_t stream)
{
    (void)stream;
    return require_handle(id, exec, cudaErrorInvalidValue);
}

/* An event remembers when it was recorded, for cudaEventElapsedTime. */
static cudaError_t record_event(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    (void)stream;
    if (!event)
        return cudaErrorInvalidResourceHandle;
    if (flags & ~(unsigned int)cudaEventRecordExternal)
        return cudaErrorInvalidValue;
    event->recorded = true;
    event->recorded_ns = monotonic_ns();
    return cudaSuccess;
}

static cudaError_t elapsed_time(float *ms, cudaEvent_t first, cudaEvent_t last)
{
    if (!ms)
        return cudaErrorInvalidValue;
    if (!first || !last || !first->recorded || !last->recorded ||
        ((first->flags | last->flags) & cudaEventDisableTiming))
        return cudaErrorInvalidResourceHandle;
    *ms = (float)(((double)last->recorded_ns - (double)first->recorded_ns) / 1e6);
    return cudaSuccess;
}

static cudaError_t wait_event(enum api_id id, cudaStream_t stream, cudaEvent_t event,
                              unsigned int flags)
{
    (void)stream;
    (void)flags;
    return require_handle(id, event, cudaErrorInvalidResourceHandle);
}

/* Streams (including the NULL/legacy/per-thread ones) are always idle. */
static cudaError_t query_stream(enum api_id id, cudaStream_t stream)
{
    (void)stream;
    ENTER_OR_REFUSE(id);
    return leave(id, cudaSuccess);
}

DEFINE_EXPORT_PAIR(cudaGraphLaunch, cudaGraphLaunch_ptsz,
                   (cudaGraphExec_t graphExec, cudaStream_t stream), launch_graph, graphExec,
                   stream)
DEFINE_GUARDED_PAIR(cudaEventRecord, cudaEventRecord_ptsz, (cudaEvent_t event, cudaStream_t stream),
                    record_event(event, stream, cudaEventRecordDefault))
DEFINE_GUARDED_PAIR(cudaEventRecordWithFlags, cudaEventRecordWithFlags_ptsz,
                    (cudaEvent_t event, cudaStream_t stream, unsigned int flags),
                    record_event(event, stream, flags))
DEFINE_GUARDED(cudaEventElapsedTime, (float *ms, cudaEvent_t start, cudaEvent_t end),
               elapsed_time(ms, start, end))
DEFINE_EXPORT_PAIR(cudaStreamWaitEvent, cudaStreamWaitEvent_ptsz,
                   (cudaStream_t stream, cudaEvent_t event, unsigned int flags), wait_event, stream,
                   event, flags)
DEFINE_EXPORT_PAIR(cudaStreamQuery, cudaStreamQuery_ptsz, (cudaStream_t stream), query_stream,
                   stream)
DEFINE_EXPORT(cudaEventQuery, (cudaEvent_t event), require_handle, event,
              cudaErrorInvalidResourceHandle)

/* ---- synchronisation ------------------------------------------------------------------- */

/* The simulated wait is what makes synchronising calls visible on a trace's timeline. */
static cudaError_t synchronize(enum api_id id, bool handle_valid)
{
    ENTER_OR_REFUSE(id);
    if (!handle_valid)
        return leave(id, cudaErrorInvalidResourceHandle);
    if (knobs.sync_ns != 0)
        sleep_for_ns(knobs.sync_ns);
    return leave(id, cudaSuccess);
}

/* Any stream value is acceptable: NULL, legacy and per-thread streams are all valid handles. */
static cudaError_t synchronize_stream(enum api_id id, cudaStream_t stream)
{
    (void)stream;
    return synchronize(id, true);
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    return synchronize(API_cudaDeviceSynchronize, true);
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
    return synchronize(API_cudaEventSynchronize, event != NULL);
}

DEFINE_EXPORT_PAIR(cudaStreamSynchronize, cudaStreamSynchronize_ptsz, (cudaStream_t stream),
                   synchronize_stream, stream)

/* ---- versions, devices, errors --------------------------------------------------------- */

static const int device_count = 1;
static const int only_device = 0;

static cudaError_t report_int(int *out, int value)
{
    if (!out)
        return cudaErrorInvalidValue;
    *out = value;
    return cudaSuccess;
}

/* DEFINE_GUARDED evaluates the knobs only after enter() has made sure they are loaded. */
DEFINE_GUARDED(cudaRuntimeGetVersion, (int *runtimeVersion),
               report_int(runtimeVersion, knobs.runtime_version))
DEFINE_GUARDED(cudaDriverGetVersion, (int *driverVersion),
               report_int(driverVersion, knobs.driver_version))
DEFINE_GUARDED(cudaGetDeviceCount, (int *count), report_int(count, device_count))
DEFINE_GUARDED(cudaGetDevice, (int *device), report_int(device, only_device))

DEFINE_GUARDED(cudaSetDevice, (int device),
               device == only_device ? cudaSuccess : cudaErrorInvalidDevice)

static void copy_dims(int out[3], dim3 dims)
{
    out[0] = (int)dims.x;
    out[1] = (int)dims.y;
    out[2] = (int)dims.z;
}

static cudaError_t describe_device(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return cudaErrorInvalidValue;
    if (device != only_device)
        return cudaErrorInvalidDevice;
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "%s", DEVICE_NAME);
    prop->totalGlobalMem = advertised_bytes();
    prop->sharedMemPerBlock = 48 << 10;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->memPitch = INT_MAX;
    prop->maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
    copy_dims(prop->maxThreadsDim, max_block);
    copy_dims(prop->maxGridSize, max_grid);
    prop->totalConstMem = 64 << 10;
    prop->major = 9;
    prop->minor = 0;
    prop->textureAlignment = PITCH_ALIGNMENT;
    prop->texturePitchAlignment = 32;
    prop->multiProcessorCount = 1;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 1;
    prop->asyncEngineCount = 1;
    prop->unifiedAddressing = 1;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->managedMemory = 1;
    prop->cooperativeLaunch = 1;
    prop->memoryPoolsSupported = 1;
    prop->hostNumaId = -1;
    return cudaSuccess;
}

DEFINE_GUARDED(cudaGetDeviceProperties, (struct cudaDeviceProp * prop, int device),
               describe_device(prop, device))

/* The attributes the double knows; the rest are refused as unsupported. */
static bool device_attribute(enum cudaDeviceAttr attr, int *value)
{
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
        *value = knobs.compute_capability / 10;
        return true;
    case cudaDevAttrComputeCapabilityMinor:
        *value = knobs.compute_capability % 10;
        return true;
    case cudaDevAttrMaxThreadsPerBlock:
        *value = MAX_THREADS_PER_BLOCK;
        return true;
    case cudaDevAttrMultiProcessorCount:
        *value = 1;
        return true;
    default:
        return false;
    }
}

static cudaError_t get_attribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        return cudaErrorInvalidValue;
    if (device != only_device)
        return cudaErrorInvalidDevice;
    int found;
    if (!device_attribute(attr, &found))
        return cudaErrorInvalidValue;
    *value = found;
    return cudaSuccess;
}

DEFINE_GUARDED(cudaDeviceGetAttribute, (int *value, enum cudaDeviceAttr attr, int device),
               get_attribute(value, attr, device))

/* ---- device settings and memory pools -------------------------------------------------- */

/* A new pool allows every kind of reuse and keeps no memory back, as the real default does. */
#define POOL_DEFAULTS                                                                              \
    {                                                                                              \
        .attributes = {                                                                            \
            [cudaMemPoolReuseFollowEventDependencies] = 1,                                         \
            [cudaMemPoolReuseAllowOpportunistic] = 1,                                              \
            [cudaMemPoolReuseAllowInternalDependencies] = 1,                                       \
        }                                                                                          \
    }

/* What the program set on its one device; cudaDeviceReset forgets it. */
static struct CUmemPoolHandle_st default_pool = POOL_DEFAULTS;
static _Atomic(cudaMemPool_t) current_pool = &default_pool;
static atomic_uint device_flags;

static cudaError_t set_device_flags(unsigned int flags)
{
    if (flags & ~(unsigned int)cudaDeviceMask)
        return cudaErrorInvalidValue;
    atomic_store(&device_flags, flags);
    return cudaSuccess;
}

static cudaError_t get_device_flags(unsigned int *flags)
{
    if (!flags)
        return cudaErrorInvalidValue;
    *flags = atomic_load(&device_flags);
    return cudaSuccess;
}

static cudaError_t init_device(int device, unsigned int new_flags, unsigned int flags)
{
    if (device != only_device)
        return cudaErrorInvalidDevice;
    if (flags & ~(unsigned int)cudaInitDeviceFlagsAreValid)
        return cudaErrorInvalidValue;
    return flags ? set_device_flags(new_flags) : cudaSuccess;
}

static cudaError_t reset_device(void)
{
    atomic_store(&device_flags, 0);
    atomic_store(&current_pool, &default_pool);
    default_pool = (struct CUmemPoolHandle_st)POOL_DEFAULTS;
    return cudaSuccess;
}

DEFINE_GUARDED(cudaSetDeviceFlags, (unsigned int flags), set_device_flags(flags))
DEFINE_GUARDED(cudaGetDeviceFlags, (unsigned int *flags), get_device_flags(flags))
DEFINE_GUARDED(cudaInitDevice, (int device, unsigned int deviceFlags, unsigned int flags),
               init_device(device, deviceFlags, flags))
DEFINE_GUARDED(cudaDeviceReset, (void), reset_device())

static cudaError_t device_pool(cudaMemPool_t *out, int device, bool current)
{
    if (!out)
        return cudaErrorInvalidValue;
    if (device != only_device)
        return cudaErrorInvalidDevice;
    *out = current ? atomic_load(&current_pool) : &default_pool;
    return cudaSuccess;
}

static cudaError_t set_device_pool(int device, cudaMemPool_t pool)
{
    if (device != only_device)
        return cudaErrorInvalidDevice;
    if (!pool)
        return cudaErrorInvalidValue;
    atomic_store(&current_pool, pool);
    return cudaSuccess;
}

DEFINE_GUARDED(cudaDeviceGetDefaultMemPool, (cudaMemPool_t * memPool, int device),
               device_pool(memPool, device, false))
DEFINE_GUARDED(cudaDeviceGetMemPool, (cudaMemPool_t * memPool, int device),
               device_pool(memPool, device, true))
DEFINE_GUARDED(cudaDeviceSetMemPool, (int device, cudaMemPool_t memPool),
               set_device_pool(device, memPool))

/* Pinned device memory on the one device is the only kind of pool there is. */
static cudaError_t create_pool(cudaMemPool_t *out, const struct cudaMemPoolProps *props)
{
    if (!out || !props || props->allocType != cudaMemAllocationTypePinned ||
        props->location.type != cudaMemLocationTypeDevice || props->location.id != only_device)
        return cudaErrorInvalidValue;
    cudaError_t rc = NEW_HANDLE(out);
    if (rc == cudaSuccess)
        **out = (struct CUmemPoolHandle_st)POOL_DEFAULTS;
    return rc;
}

/* A destroyed pool that was the device's current one gives way to the default pool. */
static cudaError_t destroy_pool(cudaMemPool_t pool)
{
    if (!pool || pool == &default_pool)
        return cudaErrorInvalidValue;
    cudaMemPool_t expected = pool;
    atomic_compare_exchange_strong(&current_pool, &expected, &default_pool);
    free(pool);
    return cudaSuccess;
}

/* The memory is the process's own, so there is never anything to give back. */
static cudaError_t trim_pool(cudaMemPool_t pool, size_t keep)
{
    (void)keep;
    return pool ? cudaSuccess : cudaErrorInvalidValue;
}

DEFINE_GUARDED(cudaMemPoolCreate,
               (cudaMemPool_t * memPool, const struct cudaMemPoolProps *poolProps),
               create_pool(memPool, poolProps))
DEFINE_GUARDED(cudaMemPoolDestroy, (cudaMemPool_t memPool), destroy_pool(memPool))
DEFINE_GUARDED(cudaMemPoolTrimTo, (cudaMemPool_t memPool, size_t minBytesToKeep),
               trim_pool(memPool, minBytesToKeep))

/* Attributes 1-3 are int switches, the rest cuuint64_t: the release threshold, then usage
 * figures whose current values are read-only and whose high-water marks only reset to 0. */
static bool pool_attribute_is_int(enum cudaMemPoolAttr attr)
{
    return attr <= cudaMemPoolReuseAllowInternalDependencies;
}

static bool pool_attribute_known(cudaMemPool_t pool, enum cudaMemPoolAttr attr, const void *value)
{
    return pool && value && attr >= cudaMemPoolReuseFollowEventDependencies &&
           attr <= cudaMemPoolAttrUsedMemHigh;
}

static cudaError_t set_pool_attribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    if (!pool_attribute_known(pool, attr, value))
        return cudaErrorInvalidValue;
    uint64_t v =
        pool_attribute_is_int(attr) ? (uint64_t) * (const int *)value : *(const uint64_t *)value;
    bool settable =
        pool_attribute_is_int(attr) || attr == cudaMemPoolAttrReleaseThreshold ||
        ((attr == cudaMemPoolAttrReservedMemHigh || attr == cudaMemPoolAttrUsedMemHigh) && v == 0);
    if (!settable)
        return cudaErrorInvalidValue;
    pool->attributes[attr] = v;
    return cudaSuccess;
}

static cudaError_t get_pool_attribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    if (!pool_attribute_known(pool, attr, value))
        return cudaErrorInvalidValue;
    if (pool_attribute_is_int(attr))
        *(int *)value = (int)pool->attributes[attr];
    else
        *(uint64_t *)value = pool->attributes[attr];
    return cudaSuccess;
}

DEFINE_GUARDED(cudaMemPoolSetAttribute,
               (cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value),
               set_pool_attribute(memPool, attr, value))
DEFINE_GUARDED(cudaMemPoolGetAttribute,
               (cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value),
               get_pool_attribute(memPool, attr, value))

/* Only exported symbols have names dladdr can see; the exact-address test rejects neighbours. */
static cudaError_t function_name(const char **name, const void *func)
{
    if (!name)
        return cudaErrorInvalidValue;
    Dl_info info;
    if (!func || !dladdr(func, &info) || !info.dli_sname || info.dli_saddr != func)
        return cudaErrorInvalidDeviceFunction;
    *name = info.dli_sname;
    return cudaSuccess;
}

DEFINE_GUARDED(cudaFuncGetName, (const char **name, const void *func), function_name(name, func))

/* These report the latched error rather than fail, so they count it but must not re-latch it. */
static cudaError_t report_last_error(enum api_id id, bool reset)
{
    enter(id);
    cudaError_t rc = last_error;
    if (reset)
        last_error = cudaSuccess;
    if (rc != cudaSuccess)
        count_error(id);
    return rc;
}

cudaError_t CUDARTAPI cudaGetLastError(void)
{
    return report_last_error(API_cudaGetLastError, true);
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
    return report_last_error(API_cudaPeekAtLastError, false);
}

const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
    enter(API_cudaGetErrorName);
    switch (error) {
#define AS_NAME_CASE(code, text)                                                                   \
    case code:                                                                                     \
        return #code;
        CT_DOUBLE_ERRORS(AS_NAME_CASE)
#undef AS_NAME_CASE
    default:
        return UNRECOGNIZED_ERROR;
    }
}

const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
    enter(API_cudaGetErrorString);
    switch (error) {
#define AS_TEXT_CASE(code, text)                                                                   \
    case code:                                                                                     \
        return text;
        CT_DOUBLE_ERRORS(AS_TEXT_CASE)
#undef AS_TEXT_CASE
    default:
        return UNRECOGNIZED_ERROR;
    }
}

/* ---- ground truth ---------------------------------------------------------------------- */

static void write_counts(FILE *out, const char *key, atomic_ullong counts[API_COUNT])
{
    fprintf(out, "  \"%s\": {", key);
    for (int id = 0; id < API_COUNT; id++)
        fprintf(out, "%s\n    \"%s\": %llu", id ? "," : "", api_names[id],
                atomic_load_explicit(&counts[id], memory_order_relaxed));
    fprintf(out, "\n  },\n");
}

/* Runs at exit, after main and atexit handlers, so it sees every call the program made. */
__attribute__((destructor)) static void write_stats(void)
{
    if (!stats_enabled())
        return;
    FILE *out = fopen(knobs.stats_path, "w");
    if (!out) {
        fprintf(stderr, "cudart double: cannot write %s: %s\n", knobs.stats_path, strerror(errno));
        return;
    }
    pthread_mutex_lock(&blocks.lock);
    fprintf(out, "{\n");
    write_counts(out, "calls", call_counts);
    write_counts(out, "errors", error_counts);
    fprintf(out, "  \"alloc_bytes\": %llu,\n", blocks.device_bytes_allocated);
    fprintf(out, "  \"peak_device_bytes\": %zu,\n", blocks.peak_bytes[MEM_DEVICE]);
    fprintf(out, "  \"final_device_bytes\": %zu,\n", blocks.live_bytes[MEM_DEVICE]);
    fprintf(out, "  \"peak_pinned_bytes\": %zu,\n", blocks.peak_bytes[MEM_PINNED]);
    fprintf(out, "  \"launches\": %llu\n}\n",
            atomic_load_explicit(&kernel_launches, memory_order_relaxed));
    pthread_mutex_unlock(&blocks.lock);
    if (fclose(out) != 0)
        fprintf(stderr, "cudart double: cannot write %s: %s\n", knobs.stats_path, strerror(errno));
}
