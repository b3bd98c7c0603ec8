/*
 * A deterministic CPU stand-in for libcudart.so.13, used to test the tracer on machines without a
 * GPU and to measure the tracer's own overhead. It owns the exported runtime entry points listed
 * in CT_DOUBLE_APIS (versioned like the real library by libcudart.map, and none that the real
 * one lacks: tests/test_doubles_runtime_fidelity.py), the bookkeeping behind them (device memory is
 * ordinary host memory, so copies and sets really move bytes; kernels are validated but never
 * run) and the ground-truth statistics written at exit. Behaviour is tuned by CT_DOUBLE_*
 * environment variables read once (CT_DOUBLE_DRIVER_VERSION below 13000 plays a driver too old
 * for this runtime); with none set, an API call costs no syscall, lock or atomic, so benchmarks
 * see the tracer's cost rather than the double's. CT_DOUBLE_DRIVER=1 makes it load the driver
 * double (libcuda.so.1) at its first call, as the real runtime does, and report every call and
 * the work it submits there (double_gpu.h), which turns them into CUPTI callbacks and activity.
 * CT_DOUBLE_DEVICES_UNAVAILABLE=1 plays a device no context can be made on (a compute mode that
 * forbids it, or another process holding it exclusively): every call but the version, device and
 * error queries fails with cudaErrorDevicesUnavailable. CT_DOUBLE_GPUS=N presents a node of N GPUs
 * (double_node.h: the UUIDs and PCI buses the NVML double gives them), ordered as CUDA orders
 * devices: fastest first, as CT_DOUBLE_FASTEST_FIRST lists their PCI positions ("1,0"), unless
 * CUDA_DEVICE_ORDER=PCI_BUS_ID; CUDA_VISIBLE_DEVICES then picks among them by that order's index
 * or by UUID (or its prefix), up to its first entry that names none. Only the device queries see
 * the node: every device does its work on the double's one simulated device. Unset, the double is
 * that one device, whatever CUDA_VISIBLE_DEVICES says. CT_DOUBLE_MIG_INSTANCE=N makes device 0 the
 * GPU's MIG instance N (its UUID the NVML double's "MIG-..." one), as CUDA sees a GPU in MIG mode.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/doubles/shared/cudart_apis.h"
#include "tests/doubles/runtime/cudart_extra.h"
#include "tests/doubles/shared/double_gpu.h"
#include "tests/doubles/shared/double_graph.h"
#include "tests/doubles/shared/double_node.h"
#include "tests/doubles/shared/double_util.h"

// clang-format off
enum api_id {
#define AS_ENUM(name, cbid) API_##name,
    CT_DOUBLE_APIS(AS_ENUM)
#undef AS_ENUM
    API_COUNT
};
// clang-format on

static const char *const api_names[API_COUNT] = {
#define AS_NAME(name, cbid) #name,
    CT_DOUBLE_APIS(AS_NAME)
#undef AS_NAME
};

static const CUpti_CallbackId api_cbids[API_COUNT] = {
#define AS_CBID(name, cbid) CUPTI_RUNTIME_TRACE_CBID_##cbid,
    CT_DOUBLE_APIS(AS_CBID)
#undef AS_CBID
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
    X(cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable")            \
    X(cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device") \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                   \
    X(cudaErrorNotReady, "device not ready")                                                       \
    X(cudaErrorHostMemoryAlreadyRegistered,                                                        \
      "part or all of the requested memory range is already mapped")                               \
    X(cudaErrorHostMemoryNotRegistered,                                                            \
      "pointer does not correspond to a registered memory region")                                 \
    X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing")       \
    X(cudaErrorStreamCaptureInvalidated,                                                           \
      "operation failed due to a previous error during capture")                                   \
    X(cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began")     \
    X(cudaErrorStreamCaptureImplicit,                                                              \
      "operation would make the legacy stream depend on a capturing blocking stream")              \
    X(cudaErrorStreamCaptureWrongThread,                                                           \
      "attempt to terminate a thread-local capture sequence from another thread")                  \
    X(cudaErrorGraphExecUpdateFailure,                                                             \
      "the graph update was not performed because it included changes which violated "             \
      "constraints specific to instantiated graph update")                                         \
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

/* Most handles carry nothing: the runtime only reads their address. A stream keeps the driver's
 * id for it (0 without a driver) and its capture, an event what cudaEventElapsedTime needs and
 * the capture it was last recorded in, a pool what cudaMemPoolSetAttribute set. Graphs are
 * double_graph.h's. */
struct CUstream_st {
    struct ct_gpu_stream gpu;
};
struct CUevent_st {
    unsigned int flags;
    bool recorded;
    unsigned long long recorded_ns;
    uint64_t capture_id; /* of the capture it was last recorded in, 0 if none */
};
struct CUmemPoolHandle_st {
    uint64_t attributes[cudaMemPoolAttrUsedMemHigh + 1]; /* by enum cudaMemPoolAttr */
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
    bool driver;              /* CT_DOUBLE_DRIVER=1: load the driver double and report to it */
    bool devices_unavailable; /* CT_DOUBLE_DEVICES_UNAVAILABLE=1 */
    /* CT_DOUBLE_SYNC_BLOCK_FILE: synchronising calls wait until this file exists, as a sync
     * on work that never completes waits, until a test releases the program. */
    char *sync_block_file;
} knobs = {0,  0,     0,    0,     SIZE_MAX, SIZE_MAX, RUNTIME_VERSION, RUNTIME_VERSION,
           90, false, NULL, false, false,    NULL};

/* The variable naming the statistics file. A copy of the double linked into a library (the
 * static-runtime test) is built to read another, so that two copies never write one file. */
#ifndef CT_DOUBLE_STATS_ENV
#define CT_DOUBLE_STATS_ENV "CT_DOUBLE_STATS"
#endif

/* A kernel whose host function has no exported name still needs one on the timeline. */
#define UNNAMED_KERNEL "ct_double_unnamed_kernel"
/* How deep a thread's runtime calls are traced: a tool's callback may call the runtime. */
#define TRACED_DEPTH 4

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
    cudaMemPool_t pool; /* the pool it came from (cudaMallocAsync and the like), or NULL */
};

/* Frees need each pointer's size and kind; allocation is never on a benchmark's hot path. */
static struct {
    pthread_mutex_t lock;
    struct block *buckets[BLOCK_TABLE_BUCKETS];
    size_t live_bytes[MEM_KIND_COUNT];
    size_t peak_bytes[MEM_KIND_COUNT];
    unsigned long long device_bytes_allocated;
} blocks = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void load_node(void);

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
    if (parse_decimal(getenv("CT_DOUBLE_DRIVER"), 1, &value))
        knobs.driver = value == 1;
    if (parse_decimal(getenv("CT_DOUBLE_DEVICES_UNAVAILABLE"), 1, &value))
        knobs.devices_unavailable = value == 1;
    load_node();
    const char *stats_path = getenv(CT_DOUBLE_STATS_ENV);
    if (stats_path && stats_path[0] != '\0')
        knobs.stats_path = strdup(stats_path);
    const char *block = getenv("CT_DOUBLE_SYNC_BLOCK_FILE");
    if (block && block[0] != '\0')
        knobs.sync_block_file = strdup(block);
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

/* ---- the driver and its tool (CT_DOUBLE_DRIVER=1) -------------------------------------- */

/* The driver double's table once loaded; NULL while the runtime stands alone. */
static _Atomic(const struct ct_gpu_table *) gpu;

enum driver_state { DRIVER_UNTRIED, DRIVER_LOADING, DRIVER_SETTLED };
static atomic_int driver_state;

/* Per thread: the runtime calls in flight, each with whether the driver saw it enter, and what
 * the export about to enter offers the driver (its params struct; a launch's host function). */
static _Thread_local struct {
    struct {
        struct ct_gpu_call call;
        bool entered;
    } calls[TRACED_DEPTH];
    int depth;
    const void *params;
    const void *host_function;
} tracing;

static cudaError_t function_name(const char **name, const void *func);

/* What the real runtime does at its first call: load the driver and initialise it. */
static void load_driver(void)
{
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    CUresult (*init)(unsigned int) = NULL;
    if (libcuda)
        *(void **)&init = dlsym(libcuda, "cuInit");
    if (init && init(0) == CUDA_SUCCESS)
        atomic_store(&gpu, ct_gpu_table_of(libcuda));
}

/* The version and error queries never start the driver, as in the real runtime. Other threads
 * wait while one loads it, as they wait for the real runtime's initialisation (going on alone,
 * their work would bypass the driver and its tool); a call the loading itself makes goes on. */
static _Thread_local bool loading_here;

static void start_driver(enum api_id id)
{
    if (id == API_cudaRuntimeGetVersion || id == API_cudaDriverGetVersion ||
        id == API_cudaGetLastError || id == API_cudaPeekAtLastError || id == API_cudaGetErrorName ||
        id == API_cudaGetErrorString)
        return;
    int untried = DRIVER_UNTRIED;
    if (atomic_compare_exchange_strong(&driver_state, &untried, DRIVER_LOADING)) {
        loading_here = true;
        load_driver();
        loading_here = false;
        atomic_store(&driver_state, DRIVER_SETTLED);
        return;
    }
    while (!loading_here && atomic_load(&driver_state) != DRIVER_SETTLED)
        sched_yield();
}

static const char *kernel_name(const void *func)
{
    const char *name;
    return function_name(&name, func) == cudaSuccess ? name : UNNAMED_KERNEL;
}

static void begin_call(enum api_id id)
{
    if (atomic_load_explicit(&driver_state, memory_order_acquire) != DRIVER_SETTLED)
        start_driver(id);
    const struct ct_gpu_table *table = atomic_load_explicit(&gpu, memory_order_acquire);
    const void *params = tracing.params, *func = tracing.host_function;
    tracing.params = tracing.host_function = NULL;
    int depth = tracing.depth++;
    if (depth >= TRACED_DEPTH)
        return;
    tracing.calls[depth].entered = table != NULL;
    if (table)
        table->enter(&tracing.calls[depth].call, CUPTI_CB_DOMAIN_RUNTIME_API, api_cbids[id],
                     api_names[id], params, func ? kernel_name(func) : NULL);
}

static void end_call(void *return_value)
{
    int depth = --tracing.depth;
    if (depth < TRACED_DEPTH && tracing.calls[depth].entered)
        atomic_load_explicit(&gpu, memory_order_acquire)
            ->exit(&tracing.calls[depth].call, return_value);
}

/* The driver, when it saw the call in flight enter; NULL otherwise and always without the knob,
 * so reporting work costs the standalone double one predictable branch. */
static inline const struct ct_gpu_table *tracing_driver(void)
{
    if (__builtin_expect(!knobs.driver, 1))
        return NULL;
    int depth = tracing.depth - 1;
    if (depth < 0 || depth >= TRACED_DEPTH || !tracing.calls[depth].entered)
        return NULL;
    return atomic_load_explicit(&gpu, memory_order_acquire);
}

/* Offers the export's CUPTI params struct to the call it is about to enter. */
static inline void offer_params(const void *params)
{
    if (__builtin_expect(knobs.driver, 0))
        tracing.params = params;
}

static inline void offer_kernel(const void *host_function)
{
    if (__builtin_expect(knobs.driver, 0))
        tracing.host_function = host_function;
}

/* NULL and the legacy and per-thread handles all run on the legacy stream here. */
static uint32_t stream_id_of(cudaStream_t stream)
{
    if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread || !stream->gpu.id)
        return CT_GPU_LEGACY_STREAM_ID;
    return stream->gpu.id;
}

/* The graphs and captures that count: the driver's when it is loaded, else the runtime's own. */
static const struct ctg_ops *graphs(void)
{
    const struct ct_gpu_table *driver =
        knobs.driver ? atomic_load_explicit(&gpu, memory_order_acquire) : NULL;
    return driver ? driver->graphs : &ctg_ops;
}

/* No capture anywhere, known without a call: the standalone double's fast path. */
static inline bool graphs_idle(void)
{
    return !knobs.driver && atomic_load_explicit(&ctg.active, memory_order_relaxed) == 0;
}

/* Work a call pushes to `stream`: a node of the stream's capture (*captured, the node in *node
 * when asked), refused (*captured too), or to run. A copy or set the runtime waits for is a
 * potentially unsafe call instead. */
static cudaError_t route_work(bool waits, cudaStream_t stream, struct CUgraphNode_st like,
                              bool *captured, struct CUgraphNode_st **node)
{
    *captured = false;
    if (graphs_idle())
        return cudaSuccess;
    if (!waits)
        return (cudaError_t)graphs()->capture(stream, like, captured, node);
    cudaError_t rc = (cudaError_t)graphs()->unsafe_call();
    *captured = rc != cudaSuccess;
    return rc;
}

/* A potentially unsafe call (cudaThreadExchangeStreamCaptureMode: "During stream capture ...,
 * some actions, such as a call to cudaMalloc, may be unsafe"): refused where a capture
 * prohibits it. */
static cudaError_t refuse_unsafe(void)
{
    return graphs_idle() ? cudaSuccess : (cudaError_t)graphs()->unsafe_call();
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
    if (__builtin_expect(knobs.driver, 0))
        begin_call(id);
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
    if (__builtin_expect(knobs.driver, 0))
        end_call(&rc);
    return rc;
}

/* With CT_DOUBLE_DEVICES_UNAVAILABLE, what the real runtime answers when it cannot make its
 * context: the device queries still work, as they need none. */
static inline bool context_refused_for(enum api_id id)
{
    return knobs.devices_unavailable && id != API_cudaRuntimeGetVersion &&
           id != API_cudaDriverGetVersion && id != API_cudaGetDeviceCount &&
           id != API_cudaGetDeviceProperties && id != API_cudaDeviceGetAttribute;
}

/* Starts every export that returns a cudaError_t. A driver too old, or a device no context can be
 * made on, refuses the call here, before it has any effect (no output written, nothing
 * allocated, copied or launched), as the real runtime then does. */
#define ENTER_OR_REFUSE(id)                                                                        \
    do {                                                                                           \
        enter(id);                                                                                 \
        if (__builtin_expect(driver_too_old_for(id), 0))                                           \
            return leave(id, cudaErrorInsufficientDriver);                                         \
        if (__builtin_expect(context_refused_for(id), 0))                                          \
            return leave(id, cudaErrorDevicesUnavailable);                                         \
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

/* Exports whose callbacks carry the real CUPTI params struct `type`, filled with `fields` (the
 * export's arguments, parenthesised, in the struct's order). A per-thread twin's struct is laid
 * out like its legacy one's, so a pair shares the legacy type. */
#define BRACED(...)                                                                                \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }
#define DEFINE_TRACED(name, params, type, fields, impl, ...)                                       \
    cudaError_t CUDARTAPI name params                                                              \
    {                                                                                              \
        offer_params(&(type)BRACED fields);                                                        \
        return impl(API_##name, __VA_ARGS__);                                                      \
    }

#define DEFINE_TRACED_PAIR(name, twin, params, type, fields, impl, ...)                            \
    DEFINE_TRACED(name, params, type, fields, impl, __VA_ARGS__)                                   \
    DEFINE_TRACED(twin, params, type, fields, impl, __VA_ARGS__)

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
    *entry = (struct block){ptr, size, kind, *bucket_for(ptr), NULL};
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

/* Device and pinned allocations become MEMORY2 records, and tell the driver which host memory
 * is pinned. */
static void report_allocation(const void *ptr, size_t size, enum mem_kind kind)
{
    const struct ct_gpu_table *driver = tracing_driver();
    if (driver)
        driver->allocated(kind == MEM_PINNED ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
                                             : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                          ptr, size, CT_GPU_LEGACY_STREAM_ID);
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
    else
        report_allocation(ptr, size, kind);
    *out = ptr;
    return rc;
}

/* Freeing through the wrong family (cudaFree on pinned memory) is an error, as on a GPU. */
/* ---- what a pool holds ----------------------------------------------------------------------
 * A pool reserves device memory in granules as its allocations need it and keeps it when they
 * are freed; it gives back what no allocation uses down to its release threshold at a
 * synchronisation (the default pool's and the device's current pool's) and down to the bytes to
 * keep at cudaMemPoolTrimTo, as the real runtime does. The figures are its ReservedMem* and
 * UsedMem* attributes; blocks.lock guards them. */
#define POOL_GRANULE (2u << 20)

static uint64_t pool_granules(uint64_t bytes)
{
    return (bytes + POOL_GRANULE - 1) / POOL_GRANULE * POOL_GRANULE;
}

static void raise_to(uint64_t *high, uint64_t value)
{
    if (value > *high)
        *high = value;
}

/* The pool's reserve once it gives back what its allocations do not use beyond `keep`. */
static void pool_shrink(cudaMemPool_t pool, uint64_t keep)
{
    uint64_t *a = pool->attributes, needed = pool_granules(a[cudaMemPoolAttrUsedMemCurrent]);
    uint64_t kept = keep < a[cudaMemPoolAttrReservedMemCurrent]
                        ? pool_granules(keep)
                        : a[cudaMemPoolAttrReservedMemCurrent];
    a[cudaMemPoolAttrReservedMemCurrent] = kept > needed ? kept : needed;
}

/* The block at `ptr` came from `pool`. */
static void pool_took(cudaMemPool_t pool, void *ptr)
{
    pthread_mutex_lock(&blocks.lock);
    struct block **link = find_block(ptr, MEM_DEVICE);
    if (link) {
        uint64_t *a = pool->attributes;
        (*link)->pool = pool;
        a[cudaMemPoolAttrUsedMemCurrent] += (*link)->size;
        raise_to(&a[cudaMemPoolAttrUsedMemHigh], a[cudaMemPoolAttrUsedMemCurrent]);
        raise_to(&a[cudaMemPoolAttrReservedMemCurrent],
                 pool_granules(a[cudaMemPoolAttrUsedMemCurrent]));
        raise_to(&a[cudaMemPoolAttrReservedMemHigh], a[cudaMemPoolAttrReservedMemCurrent]);
    }
    pthread_mutex_unlock(&blocks.lock);
}

/* A device reset forgets what the default pool held, so a later free may find less. */
static void pool_gave_back(const struct block *b)
{
    if (!b->pool)
        return;
    pthread_mutex_lock(&blocks.lock);
    uint64_t *used = &b->pool->attributes[cudaMemPoolAttrUsedMemCurrent];
    *used -= b->size < *used ? b->size : *used;
    pthread_mutex_unlock(&blocks.lock);
}

/* A destroyed pool's blocks stay valid until freed, and no longer count for it. */
static void pool_forget(cudaMemPool_t pool)
{
    pthread_mutex_lock(&blocks.lock);
    for (size_t i = 0; i < BLOCK_TABLE_BUCKETS; i++)
        for (struct block *b = blocks.buckets[i]; b; b = b->next)
            if (b->pool == pool)
                b->pool = NULL;
    pthread_mutex_unlock(&blocks.lock);
}

static cudaError_t release(void *ptr, enum mem_kind kind)
{
    if (!ptr)
        return cudaSuccess;
    struct block *found = unlink_block(ptr, kind);
    if (!found)
        return cudaErrorInvalidValue;
    pool_gave_back(found);
    const struct ct_gpu_table *driver = tracing_driver();
    if (driver)
        driver->released(ptr, CT_GPU_LEGACY_STREAM_ID);
    free(found->ptr);
    free(found);
    return cudaSuccess;
}

static cudaError_t allocate_as(enum api_id id, void **out, size_t size, enum mem_kind kind)
{
    ENTER_OR_REFUSE(id);
    cudaError_t rc = refuse_unsafe();
    return leave(id, rc == cudaSuccess ? allocate(out, size, kind) : rc);
}

static cudaMemPool_t current_device_pool(void);

/* From the device's current pool; in a capture, an allocation node: Programming Guide, Graph
 * Memory Nodes, "CUDA assigns virtual addresses for the graph allocation at node creation
 * time", and no memory is allocated until the graph runs. */
static cudaError_t allocate_on_stream(enum api_id id, void **out, size_t size, cudaStream_t stream)
{
    ENTER_OR_REFUSE(id);
    bool captured;
    struct CUgraphNode_st *node;
    cudaError_t rc = route_work(
        false, stream, (struct CUgraphNode_st){.kind = CTG_ALLOC, .bytes = size}, &captured, &node);
    if (captured && out && rc == cudaSuccess)
        *out = (void *)(uintptr_t)node->address;
    if (captured)
        return leave(id, rc);
    rc = allocate(out, size, MEM_DEVICE);
    if (rc == cudaSuccess && *out)
        pool_took(current_device_pool(), *out);
    return leave(id, rc);
}

static cudaError_t release_as(enum api_id id, void *ptr, enum mem_kind kind)
{
    ENTER_OR_REFUSE(id);
    cudaError_t rc = refuse_unsafe();
    return leave(id, rc == cudaSuccess ? release(ptr, kind) : rc);
}

/* In a capture, a free node ("GPU execution reaches the freeing graph node"). */
static cudaError_t release_on_stream(enum api_id id, void *ptr, cudaStream_t stream)
{
    ENTER_OR_REFUSE(id);
    bool captured;
    cudaError_t rc = route_work(
        false, stream, (struct CUgraphNode_st){.kind = CTG_FREE, .address = (uintptr_t)ptr},
        &captured, NULL);
    return leave(id, captured ? rc : release(ptr, MEM_DEVICE));
}

DEFINE_TRACED(cudaMalloc, (void **devPtr, size_t size), cudaMalloc_v3020_params, (devPtr, size),
              allocate_as, devPtr, size, MEM_DEVICE)
DEFINE_TRACED(cudaMallocHost, (void **ptr, size_t size), cudaMallocHost_v3020_params, (ptr, size),
              allocate_as, ptr, size, MEM_PINNED)
DEFINE_TRACED(cudaFree, (void *devPtr), cudaFree_v3020_params, (devPtr), release_as, devPtr,
              MEM_DEVICE)
DEFINE_TRACED(cudaFreeHost, (void *ptr), cudaFreeHost_v3020_params, (ptr), release_as, ptr,
              MEM_PINNED)
DEFINE_TRACED_PAIR(cudaMallocAsync, cudaMallocAsync_ptsz,
                   (void **devPtr, size_t size, cudaStream_t hStream),
                   cudaMallocAsync_v11020_params, (devPtr, size, hStream), allocate_on_stream,
                   devPtr, size, hStream)
DEFINE_TRACED_PAIR(cudaFreeAsync, cudaFreeAsync_ptsz, (void *devPtr, cudaStream_t hStream),
                   cudaFreeAsync_v11020_params, (devPtr, hStream), release_on_stream, devPtr,
                   hStream)

cudaError_t CUDARTAPI cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    offer_params(&(cudaHostAlloc_v3020_params){pHost, size, flags});
    return allocate_as(API_cudaHostAlloc, pHost, size, MEM_PINNED);
}

cudaError_t CUDARTAPI cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    offer_params(&(cudaMallocManaged_v6000_params){devPtr, size, flags});
    return allocate_as(API_cudaMallocManaged, devPtr, size, MEM_DEVICE);
}

cudaError_t CUDARTAPI cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    offer_params(&(cudaMallocPitch_v3020_params){devPtr, pitch, width, height});
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
static cudaError_t allocate_from_pool(enum api_id id, void **out, size_t size, cudaMemPool_t pool,
                                      cudaStream_t stream)
{
    (void)stream;
    ENTER_OR_REFUSE(id);
    cudaError_t rc = pool ? allocate(out, size, MEM_DEVICE) : cudaErrorInvalidValue;
    if (rc == cudaSuccess && *out)
        pool_took(pool, *out);
    return leave(id, rc);
}

DEFINE_TRACED_PAIR(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_ptsz,
                   (void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream),
                   cudaMallocFromPoolAsync_v11020_params, (ptr, size, memPool, stream),
                   allocate_from_pool, ptr, size, memPool, stream)

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

/* The copies and sets a runtime issues through the driver's synchronous calls; the others go
 * through its Async ones. */
static bool waits_for_device(enum api_id id)
{
    return id == API_cudaMemcpy || id == API_cudaMemcpy_ptds || id == API_cudaMemcpy2D ||
           id == API_cudaMemcpy2D_ptds || id == API_cudaMemcpyPeer || id == API_cudaMemset ||
           id == API_cudaMemset_ptds;
}

static const CUpti_ActivityMemcpyKind copy_kinds[] = {
    [cudaMemcpyHostToHost] = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH,
    [cudaMemcpyHostToDevice] = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
    [cudaMemcpyDeviceToHost] = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
    [cudaMemcpyDeviceToDevice] = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD,
    [cudaMemcpyDefault] = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN,
};

/* A done copy (src set) or set, or a batch of `copies` copies of `bytes` in all, becomes the
 * driver call a runtime nests and a device record. */
static void report_copies(enum api_id id, void *dst, const void *src, size_t bytes, int value,
                          enum cudaMemcpyKind kind, cudaStream_t stream, size_t copies)
{
    const struct ct_gpu_table *driver = tracing_driver();
    if (driver)
        driver->transfer(&(struct ct_gpu_transfer){dst, src, bytes, (uint8_t)value,
                                                   copy_kinds[kind], stream_id_of(stream), stream,
                                                   !waits_for_device(id), copies});
}

static void report_transfer(enum api_id id, void *dst, const void *src, size_t bytes, int value,
                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    report_copies(id, dst, src, bytes, value, kind, stream, 1);
}

/* What a copy or set pushed to a capturing stream becomes. */
static struct CUgraphNode_st copy_node(void *dst, const void *src, size_t count,
                                       enum cudaMemcpyKind kind)
{
    struct CUgraphNode_st node = {.kind = CTG_MEMCPY, .bytes = count};
    node.copy.dst = dst;
    node.copy.src = src;
    node.copy.kind = copy_kinds[kind];
    return node;
}

static struct CUgraphNode_st set_node(void *dst, int value, size_t bytes)
{
    struct CUgraphNode_st node = {.kind = CTG_MEMSET, .bytes = bytes};
    node.set.dst = dst;
    node.set.value = (uint8_t)value;
    return node;
}

static cudaError_t copy_2d(enum api_id id, void *dst, size_t dpitch, const void *src, size_t spitch,
                           size_t width, size_t height, enum cudaMemcpyKind kind,
                           cudaStream_t stream)
{
    ENTER_OR_REFUSE(id);
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return leave(id, cudaErrorInvalidMemcpyDirection);
    bool captured;
    cudaError_t rc = route_work(waits_for_device(id), stream,
                                copy_node(dst, src, width * height, kind), &captured, NULL);
    if (captured)
        return leave(id, rc);
    rc = copy_rows(dst, dpitch, src, spitch, width, height, kind);
    if (rc == cudaSuccess)
        report_transfer(id, dst, src, width * height, 0, kind, stream);
    return leave(id, rc);
}

static cudaError_t copy_peer(enum api_id id, void *dst, int dst_device, const void *src,
                             int src_device, size_t count, cudaStream_t stream)
{
    if (dst_device != 0 || src_device != 0) {
        ENTER_OR_REFUSE(id);
        return leave(id, cudaErrorInvalidDevice);
    }
    return copy_2d(id, dst, count, src, count, count, 1, cudaMemcpyDeviceToDevice, stream);
}

/* What cudaMemcpyBatchAsync refuses with cudaErrorInvalidValue: "All three arrays must be of
 * the same length as specified by count", "Note that the first entry in attrsIdxs must always be
 * 0 ... and the last entry should be less than count. Furthermore, numAttrs must be lesser than or
 * equal to count", and hStream "Must not be legacy NULL stream". */
static bool batch_valid(void *const *dsts, const void *const *srcs, const size_t *sizes,
                        size_t count, const struct cudaMemcpyAttributes *attrs,
                        const size_t *attrs_idxs, size_t num_attrs, cudaStream_t stream)
{
    if (!count || !dsts || !srcs || !sizes || !attrs || !attrs_idxs || !num_attrs ||
        num_attrs > count || attrs_idxs[0] != 0 || !stream || stream == cudaStreamLegacy)
        return false;
    for (size_t i = 1; i < num_attrs; i++)
        if (attrs_idxs[i] <= attrs_idxs[i - 1] || attrs_idxs[i] >= count)
            return false;
    for (size_t i = 0; i < count; i++)
        if (sizes[i] && (!dsts[i] || !srcs[i]))
            return false;
    return true;
}

/* A batch's copies are done at once; CUPTI's record of them is one with copyCount copies, "In
 * MemcpyBatchAsync APIs, multiple memcpy operations are batched together for optimization
 * purposes based on certain heuristics" (CUpti_ActivityMemcpy6), or one per copy with
 * CT_DOUBLE_CUPTI_BATCH=each, as those heuristics may also choose. */
static cudaError_t copy_batch(enum api_id id, void *const *dsts, const void *const *srcs,
                              const size_t *sizes, size_t count, struct cudaMemcpyAttributes *attrs,
                              size_t *attrs_idxs, size_t num_attrs, cudaStream_t stream)
{
    ENTER_OR_REFUSE(id);
    if (!batch_valid(dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, stream))
        return leave(id, cudaErrorInvalidValue);
    const char *records = getenv("CT_DOUBLE_CUPTI_BATCH");
    bool each = records && strcmp(records, "each") == 0;
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        memmove(dsts[i], srcs[i], sizes[i]);
        bytes += sizes[i];
        if (each)
            report_transfer(id, dsts[i], srcs[i], sizes[i], 0, cudaMemcpyDefault, stream);
    }
    if (!each)
        report_copies(id, dsts[0], srcs[0], bytes, 0, cudaMemcpyDefault, stream, count);
    return leave(id, cudaSuccess);
}

static cudaError_t fill(enum api_id id, void *ptr, int value, size_t count, cudaStream_t stream)
{
    ENTER_OR_REFUSE(id);
    if (count != 0 && !ptr)
        return leave(id, cudaErrorInvalidValue);
    bool captured;
    cudaError_t rc =
        route_work(waits_for_device(id), stream, set_node(ptr, value, count), &captured, NULL);
    if (captured)
        return leave(id, rc);
    if (count != 0)
        memset(ptr, value, count);
    report_transfer(id, ptr, NULL, count, value, cudaMemcpyDefault, stream);
    return leave(id, cudaSuccess);
}

DEFINE_TRACED_PAIR(cudaMemcpy, cudaMemcpy_ptds,
                   (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind),
                   cudaMemcpy_v3020_params, (dst, src, count, kind), copy_2d, dst, count, src,
                   count, count, 1, kind, NULL)
DEFINE_TRACED_PAIR(cudaMemcpyAsync, cudaMemcpyAsync_ptsz,
                   (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                    cudaStream_t stream),
                   cudaMemcpyAsync_v3020_params, (dst, src, count, kind, stream), copy_2d, dst,
                   count, src, count, count, 1, kind, stream)
DEFINE_TRACED_PAIR(cudaMemcpyBatchAsync, cudaMemcpyBatchAsync_ptsz,
                   (void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                    struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                    cudaStream_t stream),
                   cudaMemcpyBatchAsync_v13000_params,
                   (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream), copy_batch, dsts,
                   srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream)
DEFINE_TRACED_PAIR(cudaMemcpy2D, cudaMemcpy2D_ptds,
                   (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                    size_t height, enum cudaMemcpyKind kind),
                   cudaMemcpy2D_v3020_params, (dst, dpitch, src, spitch, width, height, kind),
                   copy_2d, dst, dpitch, src, spitch, width, height, kind, NULL)
DEFINE_TRACED_PAIR(cudaMemcpy2DAsync, cudaMemcpy2DAsync_ptsz,
                   (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                    size_t height, enum cudaMemcpyKind kind, cudaStream_t stream),
                   cudaMemcpy2DAsync_v3020_params,
                   (dst, dpitch, src, spitch, width, height, kind, stream), copy_2d, dst, dpitch,
                   src, spitch, width, height, kind, stream)
DEFINE_TRACED(cudaMemcpyPeer,
              (void *dst, int dstDevice, const void *src, int srcDevice, size_t count),
              cudaMemcpyPeer_v4000_params, (dst, dstDevice, src, srcDevice, count), copy_peer, dst,
              dstDevice, src, srcDevice, count, NULL)
DEFINE_TRACED(cudaMemcpyPeerAsync,
              (void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
               cudaStream_t stream),
              cudaMemcpyPeerAsync_v4000_params, (dst, dstDevice, src, srcDevice, count, stream),
              copy_peer, dst, dstDevice, src, srcDevice, count, stream)
DEFINE_TRACED_PAIR(cudaMemset, cudaMemset_ptds, (void *devPtr, int value, size_t count),
                   cudaMemset_v3020_params, (devPtr, value, count), fill, devPtr, value, count,
                   NULL)
DEFINE_TRACED_PAIR(cudaMemsetAsync, cudaMemsetAsync_ptsz,
                   (void *devPtr, int value, size_t count, cudaStream_t stream),
                   cudaMemsetAsync_v3020_params, (devPtr, value, count, stream), fill, devPtr,
                   value, count, stream)

/* ---- launches -------------------------------------------------------------------------- */

static inline bool dims_fit(dim3 dims, dim3 max)
{
    return dims.x != 0 && dims.y != 0 && dims.z != 0 && dims.x <= max.x && dims.y <= max.y &&
           dims.z <= max.z;
}

static inline __attribute__((always_inline)) cudaError_t check_launch(const void *func, dim3 grid,
                                                                      dim3 block)
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

/* A launch the driver saw enter becomes a nested cuLaunchKernel (cuLaunchKernelEx for the Ex
 * entry points) and a kernel on the device timeline, named as the callbacks named it. */
static void report_launch(enum api_id id, dim3 grid, dim3 block, void **args, size_t shared_mem,
                          cudaStream_t stream)
{
    const struct ct_gpu_table *driver = tracing_driver();
    if (!driver)
        return;
    const char *name = tracing.calls[tracing.depth - 1].call.data.symbolName;
    driver->launch(&(struct ct_gpu_launch){name ? name : UNNAMED_KERNEL,
                                           {grid.x, grid.y, grid.z},
                                           {block.x, block.y, block.z},
                                           (uint32_t)shared_mem,
                                           stream_id_of(stream),
                                           stream,
                                           args,
                                           id == API_cudaLaunchKernelExC ||
                                               id == API_cudaLaunchKernelExC_ptsz});
}

/* A launch that passed validation, pushed to a capturing stream, is a kernel node, named as the
 * callbacks name it. */
static __attribute__((noinline)) cudaError_t capture_launch(const void *func, dim3 grid, dim3 block,
                                                            size_t shared_mem, cudaStream_t stream,
                                                            bool *captured)
{
    const char *name =
        knobs.driver ? tracing.calls[tracing.depth - 1].call.data.symbolName : kernel_name(func);
    const uint32_t g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    return route_work(false, stream,
                      ctg_kernel_node(name ? name : UNNAMED_KERNEL, g, b, (uint32_t)shared_mem),
                      captured, NULL);
}

/* The kernel is never run: a launch is exactly as cheap as validating it. Inlined into each
 * export (with check_launch), so the grid and block stay in registers: passed on by value
 * through the stack they cost the benchmarks' no-op launch store-forwarding stalls, 13 ns
 * a launch instead of 4. */
static inline __attribute__((always_inline)) cudaError_t launch(enum api_id id, const void *func,
                                                                dim3 grid, dim3 block, void **args,
                                                                size_t shared_mem,
                                                                cudaStream_t stream)
{
    offer_kernel(func);
    ENTER_OR_REFUSE(id);
    cudaError_t rc = check_launch(func, grid, block);
    if (knobs.launch_ns != 0)
        spin_for_ns(knobs.launch_ns);
    if (rc == cudaSuccess && stats_enabled())
        atomic_fetch_add_explicit(&kernel_launches, 1, memory_order_relaxed);
    bool captured = false;
    if (__builtin_expect(!graphs_idle(), 0) && rc == cudaSuccess)
        rc = capture_launch(func, grid, block, shared_mem, stream, &captured);
    if (__builtin_expect(knobs.driver, 0) && rc == cudaSuccess && !captured)
        report_launch(id, grid, block, args, shared_mem, stream);
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

DEFINE_TRACED_PAIR(cudaLaunchKernel, cudaLaunchKernel_ptsz,
                   (const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   cudaLaunchKernel_v7000_params,
                   (func, gridDim, blockDim, args, sharedMem, stream), launch, func, gridDim,
                   blockDim, args, sharedMem, stream)
DEFINE_TRACED_PAIR(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel_ptsz,
                   (const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   cudaLaunchCooperativeKernel_v9000_params,
                   (func, gridDim, blockDim, args, sharedMem, stream), launch, func, gridDim,
                   blockDim, args, sharedMem, stream)
/* The toolkit has no params struct for __cudaLaunchKernel: its callbacks carry one laid out like
 * cudaLaunchKernel's, with the cudaKernel_t handle in `func`. */
DEFINE_TRACED_PAIR(__cudaLaunchKernel, __cudaLaunchKernel_ptsz,
                   (cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                    cudaStream_t stream),
                   cudaLaunchKernel_v7000_params,
                   (kernel, gridDim, blockDim, args, sharedMem, stream), launch_by_handle, kernel,
                   gridDim, blockDim, args, sharedMem, stream)
DEFINE_TRACED_PAIR(cudaLaunchKernelExC, cudaLaunchKernelExC_ptsz,
                   (const cudaLaunchConfig_t *config, const void *func, void **args),
                   cudaLaunchKernelExC_v11060_params, (config, func, args), launch_with_config,
                   config, func, args)

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
    cudaError_t rc = NEW_HANDLE(out);
    const struct ct_gpu_table *driver = tracing_driver();
    if (rc == cudaSuccess)
        (*out)->gpu.non_blocking = flags & cudaStreamNonBlocking;
    if (rc == cudaSuccess && driver)
        (*out)->gpu.id = driver->create_stream();
    return rc;
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

/* ---- graphs and stream capture (double_graph.h) ------------------------------------------ */

static cudaError_t create_graph(cudaGraph_t *out, unsigned int flags)
{
    return flags == 0 ? (cudaError_t)graphs()->create(out) : cudaErrorInvalidValue;
}

DEFINE_GUARDED(cudaGraphCreate, (cudaGraph_t * pGraph, unsigned int flags),
               create_graph(pGraph, flags))

/* Dependencies order nothing in a graph whose nodes run in the order they were added. */
static cudaError_t add_node(cudaGraphNode_t *out, cudaGraph_t graph, struct CUgraphNode_st like)
{
    return out ? (cudaError_t)graphs()->add(out, graph, like) : cudaErrorInvalidValue;
}

/* cudaGraphAddMemAllocNode: "it returns the address of the allocation in nodeParams.dptr". */
static cudaError_t add_alloc_node(cudaGraphNode_t *out, cudaGraph_t graph,
                                  struct cudaMemAllocNodeParams *params)
{
    if (!params)
        return cudaErrorInvalidValue;
    cudaError_t rc =
        add_node(out, graph, (struct CUgraphNode_st){.kind = CTG_ALLOC, .bytes = params->bytesize});
    if (rc == cudaSuccess)
        params->dptr = (void *)(uintptr_t)(*out)->address;
    return rc;
}

static cudaError_t add_kernel_node(cudaGraphNode_t *out, cudaGraph_t graph,
                                   const struct cudaKernelNodeParams *p)
{
    cudaError_t rc = p ? check_launch(p->func, p->gridDim, p->blockDim) : cudaErrorInvalidValue;
    if (rc != cudaSuccess)
        return rc;
    const uint32_t grid[3] = {p->gridDim.x, p->gridDim.y, p->gridDim.z};
    const uint32_t block[3] = {p->blockDim.x, p->blockDim.y, p->blockDim.z};
    return add_node(out, graph,
                    ctg_kernel_node(kernel_name(p->func), grid, block, p->sharedMemBytes));
}

static cudaError_t add_copy_node(cudaGraphNode_t *out, cudaGraph_t graph, void *dst,
                                 const void *src, size_t count, enum cudaMemcpyKind kind)
{
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    return dst && src ? add_node(out, graph, copy_node(dst, src, count, kind))
                      : cudaErrorInvalidValue;
}

/* cudaMemsetParams: "elementSize - Size of each element in bytes. Must be 1, 2, or 4." */
static cudaError_t add_set_node(cudaGraphNode_t *out, cudaGraph_t graph,
                                const struct cudaMemsetParams *p)
{
    if (!p || !p->dst || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
        return cudaErrorInvalidValue;
    return add_node(out, graph,
                    set_node(p->dst, (int)p->value, (size_t)p->elementSize * p->width * p->height));
}

static cudaError_t add_free_node(cudaGraphNode_t *out, cudaGraph_t graph, void *dptr)
{
    return add_node(out, graph,
                    (struct CUgraphNode_st){.kind = CTG_FREE, .address = (uintptr_t)dptr});
}

DEFINE_GUARDED(cudaGraphAddMemAllocNode,
               (cudaGraphNode_t * pGraphNode, cudaGraph_t graph,
                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                struct cudaMemAllocNodeParams *nodeParams),
               ((void)pDependencies, (void)numDependencies,
                add_alloc_node(pGraphNode, graph, nodeParams)))
DEFINE_GUARDED(cudaGraphAddMemFreeNode,
               (cudaGraphNode_t * pGraphNode, cudaGraph_t graph,
                const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dptr),
               ((void)pDependencies, (void)numDependencies, add_free_node(pGraphNode, graph, dptr)))
DEFINE_GUARDED(cudaGraphAddKernelNode,
               (cudaGraphNode_t * pGraphNode, cudaGraph_t graph,
                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                const struct cudaKernelNodeParams *pNodeParams),
               ((void)pDependencies, (void)numDependencies,
                add_kernel_node(pGraphNode, graph, pNodeParams)))
DEFINE_GUARDED(cudaGraphAddMemcpyNode1D,
               (cudaGraphNode_t * pGraphNode, cudaGraph_t graph,
                const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
                const void *src, size_t count, enum cudaMemcpyKind kind),
               ((void)pDependencies, (void)numDependencies,
                add_copy_node(pGraphNode, graph, dst, src, count, kind)))
DEFINE_GUARDED(cudaGraphAddMemsetNode,
               (cudaGraphNode_t * pGraphNode, cudaGraph_t graph,
                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                const struct cudaMemsetParams *pMemsetParams),
               ((void)pDependencies, (void)numDependencies,
                add_set_node(pGraphNode, graph, pMemsetParams)))
DEFINE_GUARDED(cudaGraphAddEmptyNode,
               (cudaGraphNode_t * pGraphNode, cudaGraph_t graph,
                const cudaGraphNode_t *pDependencies, size_t numDependencies),
               ((void)pDependencies, (void)numDependencies,
                add_node(pGraphNode, graph, (struct CUgraphNode_st){.kind = CTG_EMPTY})))
DEFINE_GUARDED(cudaGraphGetNodes, (cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes),
               (cudaError_t)graphs()->nodes(graph, nodes, numNodes))

static cudaError_t get_graph_mem_attribute(int device, enum cudaGraphMemAttributeType attr,
                                           void *value)
{
    if (device != 0)
        return cudaErrorInvalidDevice;
    if (!value || attr < cudaGraphMemAttrUsedMemCurrent || attr > cudaGraphMemAttrReservedMemHigh)
        return cudaErrorInvalidValue;
    uint64_t figures[4];
    graphs()->memory(figures);
    *(uint64_t *)value = figures[attr - cudaGraphMemAttrUsedMemCurrent];
    return cudaSuccess;
}

static cudaError_t graph_mem_trim(int device)
{
    if (device != 0)
        return cudaErrorInvalidDevice;
    graphs()->trim();
    return cudaSuccess;
}

DEFINE_GUARDED(cudaDeviceGraphMemTrim, (int device), graph_mem_trim(device))
DEFINE_GUARDED(cudaDeviceGetGraphMemAttribute,
               (int device, enum cudaGraphMemAttributeType attr, void *value),
               get_graph_mem_attribute(device, attr, value))

/* Every instantiation is cudaGraphInstantiateWithParams underneath:
 * "cudaGraphInstantiateFlagUpload, which will perform an upload of the graph into uploadStream once
 * the graph has been instantiated". */
static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t graph,
                               cudaGraphInstantiateParams *params)
{
    if (!params)
        return cudaErrorInvalidValue;
    cudaError_t rc = (cudaError_t)graphs()->instantiate(
        out, graph, params->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch);
    if (rc == cudaSuccess && (params->flags & cudaGraphInstantiateFlagUpload))
        graphs()->upload(*out);
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
DEFINE_GUARDED_PAIR(cudaGraphUpload, cudaGraphUpload_ptsz,
                    (cudaGraphExec_t graphExec, cudaStream_t stream),
                    ((void)stream, (cudaError_t)graphs()->upload(graphExec)))

/* cudaGraphExecUpdate: "resultInfo - the error info structure". */
static cudaError_t update_exec(cudaGraphExec_t exec, cudaGraph_t graph,
                               cudaGraphExecUpdateResultInfo *info)
{
    int result;
    cudaGraphNode_t error_node;
    if (!info)
        return cudaErrorInvalidValue;
    cudaError_t rc = (cudaError_t)graphs()->update(exec, graph, &result, &error_node);
    if (rc == cudaSuccess || rc == cudaErrorGraphExecUpdateFailure)
        *info = (cudaGraphExecUpdateResultInfo){(enum cudaGraphExecUpdateResult)result, error_node,
                                                NULL};
    return rc;
}

DEFINE_GUARDED(cudaGraphExecUpdate,
               (cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                cudaGraphExecUpdateResultInfo *resultInfo),
               update_exec(hGraphExec, hGraph, resultInfo))

DEFINE_GUARDED(cudaThreadExchangeStreamCaptureMode, (enum cudaStreamCaptureMode * mode),
               (cudaError_t)graphs()->exchange_mode((int *)mode))
DEFINE_GUARDED_PAIR(cudaStreamBeginCapture, cudaStreamBeginCapture_ptsz,
                    (cudaStream_t stream, enum cudaStreamCaptureMode mode),
                    (cudaError_t)graphs()->begin(stream, (int)mode, NULL))
DEFINE_GUARDED_PAIR(cudaStreamBeginCaptureToGraph, cudaStreamBeginCaptureToGraph_ptsz,
                    (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *dependencies,
                     const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                     enum cudaStreamCaptureMode mode),
                    ((void)dependencies, (void)dependencyData, (void)numDependencies,
                     graph ? (cudaError_t)graphs()->begin(stream, (int)mode, graph)
                           : cudaErrorInvalidValue))

DEFINE_GUARDED_PAIR(cudaStreamEndCapture, cudaStreamEndCapture_ptsz,
                    (cudaStream_t stream, cudaGraph_t *pGraph),
                    (cudaError_t)graphs()->end(stream, pGraph))
DEFINE_GUARDED_PAIR(cudaStreamIsCapturing, cudaStreamIsCapturing_ptsz,
                    (cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus),
                    (cudaError_t)graphs()->status_of(stream, (int *)pCaptureStatus, NULL, NULL))

/* cudaStreamGetCaptureInfo: dependencies_out is "the set of nodes" the next captured node will
 * depend on; nodes here follow one another, so it is the last node captured, if any. "If
 * edgeData_out is non-NULL then dependencies_out must be as well." */
static cudaError_t capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                unsigned long long *id, cudaGraph_t *graph_out,
                                const cudaGraphNode_t **dependencies,
                                const cudaGraphEdgeData **edges, size_t *count)
{
    if (edges && !dependencies)
        return cudaErrorInvalidValue;
    cudaGraph_t graph = NULL;
    uint64_t sequence = 0;
    cudaError_t rc = (cudaError_t)graphs()->status_of(stream, (int *)status, &sequence, &graph);
    if (rc != cudaSuccess)
        return rc;
    if (id)
        *id = sequence;
    if (graph_out)
        *graph_out = graph;
    if (dependencies)
        *dependencies = graph ? (const cudaGraphNode_t *)&graph->last : NULL;
    if (count)
        *count = graph && graph->last;
    if (edges) /* its edges carry no data */
        *edges = NULL;
    return cudaSuccess;
}

DEFINE_GUARDED_PAIR(cudaStreamGetCaptureInfo, cudaStreamGetCaptureInfo_ptsz,
                    (cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                     unsigned long long *id_out, cudaGraph_t *graph_out,
                     const cudaGraphNode_t **dependencies_out,
                     const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out),
                    capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                                 edgeData_out, numDependencies_out))

DEFINE_GUARDED(cudaStreamDestroy, (cudaStream_t stream),
               destroy_handle(stream, cudaErrorInvalidResourceHandle))
DEFINE_GUARDED(cudaEventDestroy, (cudaEvent_t event),
               destroy_handle(event, cudaErrorInvalidResourceHandle))
DEFINE_GUARDED(cudaGraphExecDestroy, (cudaGraphExec_t graphExec),
               (cudaError_t)graphs()->destroy_exec(graphExec))
DEFINE_GUARDED(cudaGraphDestroy, (cudaGraph_t graph), (cudaError_t)graphs()->destroy(graph))

/* Work completes inside the call that issues it, so anything that has a handle is done. */
static cudaError_t require_handle(enum api_id id, const void *handle, cudaError_t if_null)
{
    ENTER_OR_REFUSE(id);
    return leave(id, handle ? cudaSuccess : if_null);
}

/* With the driver, a launch nests cuGraphLaunch, which plays the graph's nodes on the device. */
static cudaError_t launch_graph(enum api_id id, cudaGraphExec_t exec, cudaStream_t stream)
{
    ENTER_OR_REFUSE(id);
    const struct ct_gpu_table *driver = tracing_driver();
    if (!exec)
        return leave(id, cudaErrorInvalidValue);
    return leave(id, driver ? (cudaError_t)driver->graph_launch(exec, stream)
                            : (cudaError_t)graphs()->launch(exec, stream));
}

/* An event remembers when it was recorded, for cudaEventElapsedTime; one recorded in a capture
 * is not executed but remembers the capture, which a stream that waits for it joins. */
static cudaError_t record_event(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    if (!event)
        return cudaErrorInvalidResourceHandle;
    if (flags & ~(unsigned int)cudaEventRecordExternal)
        return cudaErrorInvalidValue;
    struct ct_capture *capture = NULL;
    cudaError_t rc = graphs_idle() ? cudaSuccess : (cudaError_t)graphs()->route(stream, &capture);
    event->capture_id = capture ? capture->id : 0;
    if (rc != cudaSuccess || capture)
        return rc;
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
    (void)flags;
    ENTER_OR_REFUSE(id);
    if (!event)
        return leave(id, cudaErrorInvalidResourceHandle);
    return leave(id, event->capture_id ? (cudaError_t)graphs()->join(stream, event->capture_id)
                                       : cudaSuccess);
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

/* The simulated wait is what makes synchronising calls visible on a trace's timeline; with the
 * driver, the call also waits for the device to reach the end of the work it waits for (an event
 * waits for the whole device) and leaves a SYNCHRONIZATION record. */
static void pools_release_at_sync(void);

static cudaError_t synchronize(enum api_id id, bool handle_valid,
                               CUpti_ActivitySynchronizationType type, const cudaStream_t *stream)
{
    ENTER_OR_REFUSE(id);
    if (!handle_valid)
        return leave(id, cudaErrorInvalidResourceHandle);
    cudaError_t refused = graphs_idle() ? cudaSuccess
                          : stream      ? (cudaError_t)graphs()->sync_call(*stream)
                                        : (cudaError_t)graphs()->unsafe_call();
    if (refused != cudaSuccess)
        return leave(id, refused);
    uint32_t stream_id = stream ? stream_id_of(*stream) : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    if (knobs.sync_ns != 0)
        sleep_for_ns(knobs.sync_ns);
    while (knobs.sync_block_file && access(knobs.sync_block_file, F_OK) != 0)
        sleep_for_ns(10000000ULL);
    const struct ct_gpu_table *driver = tracing_driver();
    if (driver)
        driver->synchronize(type, stream_id);
    pools_release_at_sync();
    return leave(id, cudaSuccess);
}

/* Any stream value is acceptable: NULL, legacy and per-thread streams are all valid handles. */
static cudaError_t synchronize_stream(enum api_id id, cudaStream_t stream)
{
    return synchronize(id, true, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, &stream);
}

/* cudaDeviceSynchronize takes no arguments, so it has no params struct. */
cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    return synchronize(API_cudaDeviceSynchronize, true,
                       CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, NULL);
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
    offer_params(&(cudaEventSynchronize_v3020_params){event});
    return synchronize(API_cudaEventSynchronize, event != NULL,
                       CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, NULL);
}

DEFINE_TRACED_PAIR(cudaStreamSynchronize, cudaStreamSynchronize_ptsz, (cudaStream_t stream),
                   cudaStreamSynchronize_v3020_params, (stream), synchronize_stream, stream)

/* ---- versions, devices, errors --------------------------------------------------------- */

static const int only_device = 0;
#define NODE_GPUS_MAX 16
/* The CUDA devices the process sees: by ordinal, their PCI positions on the node. */
static unsigned visible_positions[NODE_GPUS_MAX] = {0};
static int device_count = 1;
static unsigned mig_instance; /* CT_DOUBLE_MIG_INSTANCE; 0: device 0 is a whole GPU */

/* The position on the node of the GPU an entry of CUDA_VISIBLE_DEVICES (`len` bytes) names, by
 * index into `order` or by UUID prefix; -1 for none. */
static int visible_position(const char *entry, size_t len, const unsigned *order, unsigned gpus)
{
    char *end;
    long index = strtol(entry, &end, 10);
    if (len && (size_t)(end - entry) == len)
        return index >= 0 && index < (long)gpus ? (int)order[index] : -1;
    for (unsigned p = 0; len && p < gpus; p++) {
        char uuid[64];
        ct_double_node_uuid(p, 0, uuid, sizeof uuid);
        if (strncmp(uuid, entry, len) == 0 || strncmp(uuid + 4, entry, len) == 0)
            return (int)p;
    }
    return -1;
}

/* The node CT_DOUBLE_GPUS describes, as CUDA orders and CUDA_VISIBLE_DEVICES filters it. */
static void load_node(void)
{
    unsigned long long gpus, mig;
    if (parse_decimal(getenv("CT_DOUBLE_MIG_INSTANCE"), 7, &mig))
        mig_instance = (unsigned)mig;
    if (!parse_decimal(getenv("CT_DOUBLE_GPUS"), NODE_GPUS_MAX, &gpus) || gpus == 0)
        return;
    unsigned order[NODE_GPUS_MAX];
    for (unsigned i = 0; i < gpus; i++)
        order[i] = i;
    const char *fastest = getenv("CT_DOUBLE_FASTEST_FIRST"), *how = getenv("CUDA_DEVICE_ORDER");
    for (unsigned i = 0; fastest && !(how && strcmp(how, "PCI_BUS_ID") == 0) && i < gpus; i++) {
        order[i] = (unsigned)strtoul(fastest, (char **)&fastest, 10) % (unsigned)gpus;
        fastest += *fastest == ',';
    }
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    device_count = 0;
    for (unsigned i = 0; !visible && i < gpus; i++)
        visible_positions[device_count++] = order[i];
    for (const char *entry = visible; entry && device_count < NODE_GPUS_MAX;) {
        size_t len = strcspn(entry, ",");
        int position = visible_position(entry, len, order, (unsigned)gpus);
        if (position < 0)
            break;
        visible_positions[device_count++] = (unsigned)position;
        entry = entry[len] ? entry + len + 1 : NULL;
    }
}

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
               device >= 0 && device < device_count ? cudaSuccess : cudaErrorInvalidDevice)

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
    if (device < 0 || device >= device_count)
        return cudaErrorInvalidDevice;
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "%s", DEVICE_NAME);
    char uuid[64];
    ct_double_node_uuid(visible_positions[device], device ? 0 : mig_instance, uuid, sizeof uuid);
    for (size_t i = 0, from = 4; i < sizeof prop->uuid.bytes;
         i++, from += 2 + (uuid[from + 2] == '-'))
        prop->uuid.bytes[i] = (char)strtoul((char[3]){uuid[from], uuid[from + 1], 0}, NULL, 16);
    prop->pciBusID = (int)CT_DOUBLE_NODE_BUS(visible_positions[device]);
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

static cudaMemPool_t current_device_pool(void)
{
    return atomic_load(&current_pool);
}

static void pools_release_at_sync(void)
{
    cudaMemPool_t current = atomic_load(&current_pool);
    pthread_mutex_lock(&blocks.lock);
    pool_shrink(&default_pool, default_pool.attributes[cudaMemPoolAttrReleaseThreshold]);
    if (current != &default_pool)
        pool_shrink(current, current->attributes[cudaMemPoolAttrReleaseThreshold]);
    pthread_mutex_unlock(&blocks.lock);
}
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
/* Without a profiler attached the real runtime answers both with success
 * and does nothing else. */
DEFINE_GUARDED(cudaProfilerStart, (void), cudaSuccess)
DEFINE_GUARDED(cudaProfilerStop, (void), cudaSuccess)

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
    pool_forget(pool);
    free(pool);
    return cudaSuccess;
}

static cudaError_t trim_pool(cudaMemPool_t pool, size_t keep)
{
    if (!pool)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&blocks.lock);
    pool_shrink(pool, keep);
    pthread_mutex_unlock(&blocks.lock);
    return cudaSuccess;
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
    pthread_mutex_lock(&blocks.lock);
    if (pool_attribute_is_int(attr))
        *(int *)value = (int)pool->attributes[attr];
    else
        *(uint64_t *)value = pool->attributes[attr];
    pthread_mutex_unlock(&blocks.lock);
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
    if (__builtin_expect(knobs.driver, 0))
        end_call(&rc);
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

static const char *error_name(cudaError_t error)
{
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

static const char *error_text(cudaError_t error)
{
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

/* These return text rather than an error, so their exit callback's return value is the text. */
static const char *report_text(const char *text)
{
    if (__builtin_expect(knobs.driver, 0))
        end_call(&text);
    return text;
}

const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
    enter(API_cudaGetErrorName);
    return report_text(error_name(error));
}

const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
    enter(API_cudaGetErrorString);
    return report_text(error_text(error));
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
