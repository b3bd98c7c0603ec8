/*
 * A deterministic CPU stand-in for libcudart.so.13, used to test the tracer on machines without a
 * GPU and to measure the tracer's own overhead. It owns the exported runtime entry points listed
 * in CT_DOUBLE_APIS (versioned like the real library by libcudart.map), the bookkeeping behind
 * them (device memory is ordinary host memory, so copies and sets really move bytes; kernels are
 * validated but never run) and the ground-truth statistics written at exit. Behaviour is tuned
 * by CT_DOUBLE_* environment variables read once (CT_DOUBLE_DRIVER_VERSION below 13000 plays a
 * driver too old for this runtime); with none set, an API call costs no syscall,
 * lock or atomic, so benchmarks see the tracer's cost rather than the double's.
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
    X(cudaGetDeviceProperties_v2)                                                                  \
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
    X(cudaEventDestroy)

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

/* The error codes the double can produce, with the real runtime's descriptions. */
#define CT_DOUBLE_ERRORS(X)                                                                        \
    X(cudaSuccess, "no error")                                                                     \
    X(cudaErrorInvalidValue, "invalid argument")                                                   \
    X(cudaErrorMemoryAllocation, "out of memory")                                                  \
    X(cudaErrorInitializationError, "initialization error")                                        \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")                             \
    X(cudaErrorInvalidPitchValue, "invalid pitch argument")                                        \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                        \
    X(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version") \
    X(cudaErrorInvalidDeviceFunction, "invalid device function")                                   \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                     \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                            \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                   \
    X(cudaErrorNotReady, "device not ready")                                                       \
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

/* The runtime only reads the handle's address, so the double's handles carry nothing. */
struct CUstream_st {
    char unused;
};
struct CUevent_st {
    char unused;
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
    size_t mem_limit;
    int driver_version;
    int runtime_version;    /* CT_DOUBLE_RUNTIME_VERSION: the runtime it plays */
    int compute_capability; /* CT_DOUBLE_SM: 90 means 9.0 */
    bool no_kernel_image;   /* CT_DOUBLE_NO_KERNEL_IMAGE=1: launches fail with 209 */
    char *stats_path;
} knobs = {0, 0, SIZE_MAX, RUNTIME_VERSION, RUNTIME_VERSION, 90, false, NULL};

static atomic_bool knobs_loaded;
static pthread_once_t knobs_once = PTHREAD_ONCE_INIT;

static atomic_ullong call_counts[API_COUNT];
static atomic_ullong error_counts[API_COUNT];
static atomic_ullong kernel_launches;

/* The real runtime keeps the last error per host thread. */
static _Thread_local cudaError_t last_error = cudaSuccess;

enum mem_kind { MEM_DEVICE, MEM_PINNED, MEM_KIND_COUNT };

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

/* With CT_DOUBLE_DRIVER_VERSION below the runtime's, behave as the real
 * runtime does on a driver that is too old: everything but the version and
 * error queries fails with cudaErrorInsufficientDriver. */
static inline bool driver_too_old_for(enum api_id id)
{
    return knobs.driver_version < knobs.runtime_version && id != API_cudaRuntimeGetVersion &&
           id != API_cudaDriverGetVersion && id != API_cudaGetLastError &&
           id != API_cudaPeekAtLastError && id != API_cudaGetErrorName &&
           id != API_cudaGetErrorString;
}

static inline cudaError_t leave(enum api_id id, cudaError_t rc)
{
    if (__builtin_expect(driver_too_old_for(id), 0))
        rc = cudaErrorInsufficientDriver;
    if (__builtin_expect(rc != cudaSuccess, 0)) {
        /* "Not ready" is a status, not a failure: the real runtime does not latch it. */
        if (rc != cudaErrorNotReady)
            last_error = rc;
        count_error(id);
    }
    return rc;
}

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

/* ---- memory ---------------------------------------------------------------------------- */

static struct block **bucket_for(const void *ptr)
{
    uintptr_t key = (uintptr_t)ptr / DEVICE_ALIGNMENT;
    return &blocks.buckets[key % BLOCK_TABLE_BUCKETS];
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
    if (rc == cudaSuccess) {
        *entry = (struct block){ptr, size, kind, *bucket_for(ptr)};
        *bucket_for(ptr) = entry;
        blocks.live_bytes[kind] = live + size;
        if (blocks.live_bytes[kind] > blocks.peak_bytes[kind])
            blocks.peak_bytes[kind] = blocks.live_bytes[kind];
        if (kind == MEM_DEVICE)
            blocks.device_bytes_allocated += size;
    }
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
    struct block *found = NULL;
    pthread_mutex_lock(&blocks.lock);
    for (struct block **link = bucket_for(ptr); *link; link = &(*link)->next) {
        if ((*link)->ptr == ptr && (*link)->kind == kind) {
            found = *link;
            *link = found->next;
            blocks.live_bytes[kind] -= found->size;
            break;
        }
    }
    pthread_mutex_unlock(&blocks.lock);
    if (!found)
        return cudaErrorInvalidValue;
    free(found->ptr);
    free(found);
    return cudaSuccess;
}

static cudaError_t allocate_as(enum api_id id, void **out, size_t size, enum mem_kind kind)
{
    enter(id);
    return leave(id, allocate(out, size, kind));
}

static cudaError_t allocate_on_stream(enum api_id id, void **out, size_t size, cudaStream_t stream)
{
    (void)stream;
    return allocate_as(id, out, size, MEM_DEVICE);
}

static cudaError_t release_as(enum api_id id, void *ptr, enum mem_kind kind)
{
    enter(id);
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
    enter(API_cudaMallocPitch);
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
    enter(id);
    return leave(id, copy_rows(dst, dpitch, src, spitch, width, height, kind));
}

static cudaError_t copy_peer(enum api_id id, void *dst, int dst_device, const void *src,
                             int src_device, size_t count, cudaStream_t stream)
{
    (void)stream;
    enter(id);
    if (dst_device != 0 || src_device != 0)
        return leave(id, cudaErrorInvalidDevice);
    return leave(id, copy_rows(dst, count, src, count, count, 1, cudaMemcpyDeviceToDevice));
}

static cudaError_t fill(enum api_id id, void *ptr, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    enter(id);
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
    enter(id);
    cudaError_t rc = check_launch(func, grid, block);
    if (rc == cudaSuccess && stats_enabled())
        atomic_fetch_add_explicit(&kernel_launches, 1, memory_order_relaxed);
    return leave(id, rc);
}

static cudaError_t launch_with_config(enum api_id id, const cudaLaunchConfig_t *config,
                                      const void *func, void **args)
{
    if (!config) {
        enter(id);
        return leave(id, cudaErrorInvalidValue);
    }
    return launch(id, func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                  config->stream);
}

DEFINE_EXPORT_PAIR(cudaLaunchKernel, cudaLaunchKernel_ptsz,
                   (const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   launch, func, gridDim, blockDim, args, sharedMem, stream)
DEFINE_EXPORT_PAIR(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel_ptsz,
                   (const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   launch, func, gridDim, blockDim, args, sharedMem, stream)
/* __cudaGetKernel hands out the host stub's address as the kernel handle. */
DEFINE_EXPORT_PAIR(__cudaLaunchKernel, __cudaLaunchKernel_ptsz,
                   (cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   launch, (const void *)kernel, gridDim, blockDim, args, sharedMem, stream)
DEFINE_EXPORT_PAIR(cudaLaunchKernelExC, cudaLaunchKernelExC_ptsz,
                   (const cudaLaunchConfig_t *config, const void *func, void **args),
                   launch_with_config, config, func, args)

cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    enter(API___cudaGetKernel);
    if (!kernel || !func)
        return leave(API___cudaGetKernel, cudaErrorInvalidValue);
    *kernel = (cudaKernel_t)func;
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

cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value || device != 0)
        return cudaErrorInvalidValue;
    if (attr == cudaDevAttrComputeCapabilityMajor)
        *value = knobs.compute_capability / 10;
    else if (attr == cudaDevAttrComputeCapabilityMinor)
        *value = knobs.compute_capability % 10;
    else
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* ---- handles: streams, events, graphs -------------------------------------------------- */

#define NEW_HANDLE(out)                                                                            \
    ((*(out) = calloc(1, sizeof **(out))) ? cudaSuccess : cudaErrorMemoryAllocation)

static cudaError_t destroy_handle(enum api_id id, void *handle, cudaError_t if_null)
{
    enter(id);
    if (!handle)
        return leave(id, if_null);
    free(handle);
    return leave(id, cudaSuccess);
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
    enter(API_cudaStreamCreate);
    return leave(API_cudaStreamCreate, pStream ? NEW_HANDLE(pStream) : cudaErrorInvalidValue);
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
    enter(API_cudaEventCreate);
    return leave(API_cudaEventCreate, event ? NEW_HANDLE(event) : cudaErrorInvalidValue);
}

cudaError_t CUDARTAPI cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    enter(API_cudaGraphCreate);
    if (!pGraph || flags != 0)
        return leave(API_cudaGraphCreate, cudaErrorInvalidValue);
    return leave(API_cudaGraphCreate, NEW_HANDLE(pGraph));
}

cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                           unsigned long long flags)
{
    (void)flags;
    enter(API_cudaGraphInstantiate);
    if (!pGraphExec || !graph)
        return leave(API_cudaGraphInstantiate, cudaErrorInvalidValue);
    return leave(API_cudaGraphInstantiate, NEW_HANDLE(pGraphExec));
}

DEFINE_EXPORT(cudaStreamDestroy, (cudaStream_t stream), destroy_handle, stream,
              cudaErrorInvalidResourceHandle)
DEFINE_EXPORT(cudaEventDestroy, (cudaEvent_t event), destroy_handle, event,
              cudaErrorInvalidResourceHandle)
DEFINE_EXPORT(cudaGraphExecDestroy, (cudaGraphExec_t graphExec), destroy_handle, graphExec,
              cudaErrorInvalidValue)
DEFINE_EXPORT(cudaGraphDestroy, (cudaGraph_t graph), destroy_handle, graph, cudaErrorInvalidValue)

/* Work completes inside the call that issues it, so anything that has a handle is done. */
static cudaError_t require_handle(enum api_id id, const void *handle, cudaError_t if_null)
{
    enter(id);
    return leave(id, handle ? cudaSuccess : if_null);
}

static cudaError_t launch_graph(enum api_id id, cudaGraphExec_t exec, cudaStream_t stream)
{
    (void)stream;
    return require_handle(id, exec, cudaErrorInvalidValue);
}

static cudaError_t record_event(enum api_id id, cudaEvent_t event, cudaStream_t stream)
{
    (void)stream;
    return require_handle(id, event, cudaErrorInvalidResourceHandle);
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
    enter(id);
    return leave(id, cudaSuccess);
}

DEFINE_EXPORT_PAIR(cudaGraphLaunch, cudaGraphLaunch_ptsz,
                   (cudaGraphExec_t graphExec, cudaStream_t stream), launch_graph, graphExec,
                   stream)
DEFINE_EXPORT_PAIR(cudaEventRecord, cudaEventRecord_ptsz, (cudaEvent_t event, cudaStream_t stream),
                   record_event, event, stream)
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
    enter(id);
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

/* Takes a pointer so knobs are read only after enter() has made sure they are loaded. */
static cudaError_t report_int(enum api_id id, int *out, const int *value)
{
    enter(id);
    if (!out)
        return leave(id, cudaErrorInvalidValue);
    *out = *value;
    return leave(id, cudaSuccess);
}

DEFINE_EXPORT(cudaRuntimeGetVersion, (int *runtimeVersion), report_int, runtimeVersion,
              &knobs.runtime_version)
DEFINE_EXPORT(cudaDriverGetVersion, (int *driverVersion), report_int, driverVersion,
              &knobs.driver_version)
DEFINE_EXPORT(cudaGetDeviceCount, (int *count), report_int, count, &device_count)
DEFINE_EXPORT(cudaGetDevice, (int *device), report_int, device, &only_device)

cudaError_t CUDARTAPI cudaSetDevice(int device)
{
    enter(API_cudaSetDevice);
    return leave(API_cudaSetDevice, device == only_device ? cudaSuccess : cudaErrorInvalidDevice);
}

static void copy_dims(int out[3], dim3 dims)
{
    out[0] = (int)dims.x;
    out[1] = (int)dims.y;
    out[2] = (int)dims.z;
}

static cudaError_t describe_device(enum api_id id, struct cudaDeviceProp *prop, int device)
{
    enter(id);
    if (!prop)
        return leave(id, cudaErrorInvalidValue);
    if (device != only_device)
        return leave(id, cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "%s", DEVICE_NAME);
    prop->totalGlobalMem =
        knobs.mem_limit == SIZE_MAX ? (size_t)UNLIMITED_ADVERTISED_BYTES : knobs.mem_limit;
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
    return leave(id, cudaSuccess);
}

DEFINE_EXPORT(cudaGetDeviceProperties, (struct cudaDeviceProp * prop, int device), describe_device,
              prop, device)
DEFINE_EXPORT(cudaGetDeviceProperties_v2, (struct cudaDeviceProp * prop, int device),
              describe_device, prop, device)

/* Only exported symbols have names dladdr can see; the exact-address test rejects neighbours. */
cudaError_t CUDARTAPI cudaFuncGetName(const char **name, const void *func)
{
    enter(API_cudaFuncGetName);
    if (!name)
        return leave(API_cudaFuncGetName, cudaErrorInvalidValue);
    Dl_info info;
    if (!func || !dladdr(func, &info) || !info.dli_sname || info.dli_saddr != func)
        return leave(API_cudaFuncGetName, cudaErrorInvalidDeviceFunction);
    *name = info.dli_sname;
    return leave(API_cudaFuncGetName, cudaSuccess);
}

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
