/*
 * A CPU stand-in for the CUDA driver, libcuda.so.1, playing the GPU for tests of the tracer's
 * CUPTI support. It owns what a GPU and its driver own: the cu* entry points a launcher such as
 * Triton's uses, with their per-thread-default-stream variants and cuGetProcAddress (device memory
 * is host memory, so copies and sets really move bytes; kernels are never run), a simulated device
 * timeline (a cursor per stream; CT_DOUBLE_GPU_LATENCY_NS, CT_DOUBLE_KERNEL_NS,
 * CT_DOUBLE_TRANSFER_NS and CT_DOUBLE_COPY_BYTES_PER_NS set its pace, and synchronising calls
 * really wait for it), the
 * correlation ids of API calls, the loading of a CUDA_INJECTION64_PATH library at cuInit, and the
 * one tool attachment. The CUPTI double attaches through cuGetExportTable (double_gpu.h), and the
 * runtime double reports its calls and work through the same table, so both kinds of call reach the
 * tool as callbacks and activity alike. The virtual-memory API keeps the real one's rules on
 * physical memory: a handle's memory goes when it is released and every mapping of it unmapped, and
 * CT_DOUBLE_VMM_LIMIT bounds what is held (cuMemCreate then fails with CUDA_ERROR_OUT_OF_MEMORY).
 * Its addresses are reserved from a range no host allocation uses, and are never touched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/doubles/shared/double_gpu.h"
#include "tests/doubles/shared/double_graph.h"
#include "tests/doubles/shared/double_util.h"

#define DRIVER_VERSION 13000
#define DEVICE_ALIGNMENT 256
/* Stream ids index the timeline directly; creating more streams than this fails. */
#define MAX_STREAM_ID 4096
#define FUNCTION_BUCKETS 256

static struct {
    uint64_t latency_ns;
    uint64_t kernel_ns;
    uint64_t copy_bytes_per_ns;
    uint64_t transfer_ns; /* what every copy and set costs besides its bytes */
    uint64_t vmm_limit;
} knobs;

__attribute__((constructor)) static void load_knobs(void)
{
    knobs.latency_ns = knob_or("CT_DOUBLE_GPU_LATENCY_NS", 0, 2000);
    knobs.kernel_ns = knob_or("CT_DOUBLE_KERNEL_NS", 0, 10000);
    knobs.copy_bytes_per_ns = knob_or("CT_DOUBLE_COPY_BYTES_PER_NS", 1, 10);
    knobs.transfer_ns = knob_or("CT_DOUBLE_TRANSFER_NS", 0, 1000);
    knobs.vmm_limit = knob_or("CT_DOUBLE_VMM_LIMIT", 1, UINT64_MAX);
}

/* Sleeps until CUPTI's clock reads `target`: how a synchronising call spends the GPU's time. */
static void wait_until(uint64_t target)
{
    struct timespec at = {(time_t)(target / 1000000000ULL), (long)(target % 1000000000ULL)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == EINTR)
        ;
}

/* ---- the tool slot, API calls and correlation ids -------------------------------------- */

static _Atomic(const struct ct_gpu_tool *) tool;
static atomic_uint next_correlation_id = 1;

/* CT_DOUBLE_CUPTI_IDS: which calls CUPTI's correlation ids tell apart, on which cupti_callbacks.h
 * says only "Each function invocation is assigned a unique correlation ID that is identical to
 * the correlation ID in the API activity record". "outermost" (the default): a call and the
 * calls it makes inside share the outermost one's; "per_call": every call has its own, as the
 * activity records' separate runtimeCorrelationId (CUpti_ActivityMemcpy6) suggests. */
static bool ids_per_call;

__attribute__((constructor)) static void load_id_knob(void)
{
    const char *ids = getenv("CT_DOUBLE_CUPTI_IDS");
    ids_per_call = ids && strcmp(ids, "per_call") == 0;
}

/* Per thread: how deep in API calls it is, the id work submitted now belongs to, the outermost
 * call's id when that is a runtime call, whether it is inside a tool callback (calls the tool
 * makes from there get no callbacks of their own), and the graph node a replay runs now. */
static _Thread_local struct {
    int depth;
    uint32_t correlation_id, runtime_id;
    bool in_callback;
    uint32_t graph_id;
    uint64_t graph_node_id;
} thread_calls;

static struct CUctx_st {
    char unused;
} the_context;

static bool attach_tool(const struct ct_gpu_tool *new_tool)
{
    const struct ct_gpu_tool *none = NULL;
    return atomic_compare_exchange_strong(&tool, &none, new_tool);
}

static void detach_tool(void)
{
    atomic_store(&tool, NULL);
}

static void deliver(struct ct_gpu_call *call)
{
    const struct ct_gpu_tool *current = atomic_load(&tool);
    if (!current || thread_calls.in_callback)
        return;
    thread_calls.in_callback = true;
    current->callback(call->domain, call->cbid, &call->data);
    thread_calls.in_callback = false;
}

static void api_enter(struct ct_gpu_call *call, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                      const char *name, const void *params, const char *symbol)
{
    uint32_t outer_id = thread_calls.correlation_id;
    if (thread_calls.depth++ == 0 || ids_per_call)
        thread_calls.correlation_id = atomic_fetch_add(&next_correlation_id, 1);
    if (thread_calls.depth == 1)
        thread_calls.runtime_id =
            domain == CUPTI_CB_DOMAIN_RUNTIME_API ? thread_calls.correlation_id : 0;
    *call = (struct ct_gpu_call){.domain = domain, .cbid = cbid, .outer_id = outer_id};
    call->data = (CUpti_CallbackData){
        .callbackSite = CUPTI_API_ENTER,
        .functionName = name,
        .functionParams = params,
        .symbolName = symbol,
        .context = &the_context,
        .contextUid = CT_GPU_CONTEXT_ID,
        .correlationData = &call->correlation_data,
        .correlationId = thread_calls.correlation_id,
    };
    deliver(call);
}

static void api_exit(struct ct_gpu_call *call, void *return_value)
{
    call->data.callbackSite = CUPTI_API_EXIT;
    call->data.functionReturnValue = return_value;
    deliver(call);
    thread_calls.depth--;
    if (ids_per_call)
        thread_calls.correlation_id = call->outer_id;
}

/* Work belongs to the API call in flight on the submitting thread. */
static void emit(struct ct_gpu_work *work)
{
    const struct ct_gpu_tool *current = atomic_load(&tool);
    work->correlation_id = thread_calls.correlation_id;
    work->runtime_correlation_id = thread_calls.runtime_id;
    work->graph_id = thread_calls.graph_id;
    work->graph_node_id = thread_calls.graph_node_id;
    if (current)
        current->record(work);
}

/* A driver entry point's callback id and name, as one argument. */
#define ENTRY(name) CUPTI_DRIVER_TRACE_CBID_##name, #name

/* The body of every driver export: callbacks around `work`, an expression giving the result.
 * `entry` is ENTRY(name), or the id and name a body shared by a plain entry point and its
 * per-thread-default-stream variant was given. */
#define DRIVER_CALL_AS(entry, params, symbol, work)                                                \
    do {                                                                                           \
        struct ct_gpu_call call;                                                                   \
        api_enter(&call, CUPTI_CB_DOMAIN_DRIVER_API, entry, params, symbol);                       \
        CUresult rc = (work);                                                                      \
        api_exit(&call, &rc);                                                                      \
        return rc;                                                                                 \
    } while (0)
#define DRIVER_CALL(name, params, symbol, work) DRIVER_CALL_AS(ENTRY(name), params, symbol, work)
/* In a body shared by an entry point and its variant: its own `cbid` and `name` parameters. */
#define SHARED_ENTRY cbid, name

/* ---- kernels by name ------------------------------------------------------------------- */

/* One function object per kernel name, never freed: its name is what activity records point
 * at, so it must outlive every buffer. */
struct CUfunc_st {
    char *name;
    struct CUfunc_st *next;
};

static struct {
    pthread_mutex_t lock;
    struct CUfunc_st *buckets[FUNCTION_BUCKETS];
} functions = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned name_hash(const char *name)
{
    unsigned hash = 5381;
    while (*name)
        hash = hash * 33 + (unsigned char)*name++;
    return hash % FUNCTION_BUCKETS;
}

/* Adds a function named `name` at the head of the bucket; NULL when out of memory. */
static struct CUfunc_st *add_function(struct CUfunc_st **bucket, const char *name)
{
    struct CUfunc_st *added = malloc(sizeof *added);
    char *copy = strdup(name);
    if (!added || !copy) {
        free(added);
        free(copy);
        return NULL;
    }
    *added = (struct CUfunc_st){copy, *bucket};
    *bucket = added;
    return added;
}

/* NULL only when out of memory. */
static CUfunction function_named(const char *name)
{
    struct CUfunc_st **bucket = &functions.buckets[name_hash(name)];
    pthread_mutex_lock(&functions.lock);
    struct CUfunc_st *found = *bucket;
    while (found && strcmp(found->name, name) != 0)
        found = found->next;
    if (!found)
        found = add_function(bucket, name);
    pthread_mutex_unlock(&functions.lock);
    return found;
}

/* ---- the timeline ---------------------------------------------------------------------- */

static struct {
    pthread_mutex_t lock;
    uint64_t cursor[MAX_STREAM_ID]; /* when each stream's last work ends */
    uint32_t next_stream_id;
} timeline = {.lock = PTHREAD_MUTEX_INITIALIZER, .next_stream_id = CT_GPU_FIRST_STREAM_ID};

static uint32_t create_stream_id(void)
{
    pthread_mutex_lock(&timeline.lock);
    uint32_t id = timeline.next_stream_id < MAX_STREAM_ID ? timeline.next_stream_id++ : 0;
    pthread_mutex_unlock(&timeline.lock);
    return id;
}

/* Queues `duration` ns of work on the stream behind what it already holds, and never sooner
 * than the launch latency after now. */
static void schedule(struct ct_gpu_work *work, uint64_t duration)
{
    uint64_t earliest = realtime_ns() + knobs.latency_ns;
    pthread_mutex_lock(&timeline.lock);
    uint64_t *cursor = &timeline.cursor[work->stream_id];
    work->start = *cursor > earliest ? *cursor : earliest;
    work->end = work->start + duration;
    *cursor = work->end;
    pthread_mutex_unlock(&timeline.lock);
}

/* When the stream (or, for CUPTI_SYNCHRONIZATION_INVALID_VALUE, every stream) falls idle. */
static uint64_t idle_at(uint32_t stream_id)
{
    uint64_t last = 0;
    pthread_mutex_lock(&timeline.lock);
    if (stream_id != CUPTI_SYNCHRONIZATION_INVALID_VALUE)
        last = timeline.cursor[stream_id];
    else
        for (uint32_t id = 0; id < timeline.next_stream_id; id++)
            if (timeline.cursor[id] > last)
                last = timeline.cursor[id];
    pthread_mutex_unlock(&timeline.lock);
    return last;
}

static void synchronize(CUpti_ActivitySynchronizationType type, uint32_t stream_id)
{
    struct ct_gpu_work work = {
        .kind = CT_WORK_SYNC, .stream_id = stream_id, .start = realtime_ns()};
    wait_until(idle_at(stream_id));
    work.end = realtime_ns();
    work.sync.type = type;
    emit(&work);
}

/* NULL and the legacy and per-thread handles all run on the legacy stream here. */
static uint32_t stream_id_of(CUstream stream)
{
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
        return CT_GPU_LEGACY_STREAM_ID;
    return ((const struct ct_gpu_stream *)stream)->id;
}

/* ---- memory ---------------------------------------------------------------------------- */

/* Every live allocation either double made, so copies can tell pinned from pageable host
 * memory and a cudaMemcpyDefault copy its direction. */
struct range {
    uintptr_t start;
    uint64_t bytes;
    CUpti_ActivityMemoryKind memory;
    struct range *next;
};

static struct {
    pthread_mutex_t lock;
    struct range *head;
} ranges = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void emit_memory(CUpti_ActivityMemoryOperationType operation, const struct range *range,
                        uint32_t stream_id)
{
    struct ct_gpu_work work = {.kind = CT_WORK_MEMORY,
                               .stream_id = stream_id,
                               .start = realtime_ns(),
                               .bytes = range->bytes};
    work.end = work.start;
    work.memory.operation = operation;
    work.memory.memory = range->memory;
    work.memory.address = range->start;
    emit(&work);
}

static void note_allocation(CUpti_ActivityMemoryKind memory, const void *address, uint64_t bytes,
                            uint32_t stream_id)
{
    struct range *range = malloc(sizeof *range);
    if (!range)
        return;
    *range = (struct range){(uintptr_t)address, bytes, memory, NULL};
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, range, stream_id);
    pthread_mutex_lock(&ranges.lock);
    range->next = ranges.head;
    ranges.head = range;
    pthread_mutex_unlock(&ranges.lock);
}

/* Takes the allocation that starts at address out of the table; NULL if there is none. */
static struct range *take_range(const void *address)
{
    pthread_mutex_lock(&ranges.lock);
    struct range **link = &ranges.head;
    while (*link && (*link)->start != (uintptr_t)address)
        link = &(*link)->next;
    struct range *found = *link;
    if (found)
        *link = found->next;
    pthread_mutex_unlock(&ranges.lock);
    return found;
}

static bool note_release(const void *address, uint32_t stream_id)
{
    struct range *found = take_range(address);
    if (found)
        emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, found, stream_id);
    free(found);
    return found != NULL;
}

/* The runtime frees only what it allocated, so it has no use for the answer. */
static void runtime_release(const void *address, uint32_t stream_id)
{
    note_release(address, stream_id);
}

/* The kind of memory at ptr: inside a live allocation, that allocation's; else pageable. */
static CUpti_ActivityMemoryKind memory_at(const void *ptr)
{
    CUpti_ActivityMemoryKind memory = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    uintptr_t at = (uintptr_t)ptr;
    pthread_mutex_lock(&ranges.lock);
    for (struct range *r = ranges.head; r; r = r->next)
        if (at >= r->start && at - r->start < r->bytes)
            memory = r->memory;
    pthread_mutex_unlock(&ranges.lock);
    return memory;
}

static CUresult allocate(void **out, size_t bytes, CUpti_ActivityMemoryKind memory)
{
    if (!out || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t rounded = (bytes + DEVICE_ALIGNMENT - 1) & ~(size_t)(DEVICE_ALIGNMENT - 1);
    if (rounded < bytes || !(*out = aligned_alloc(DEVICE_ALIGNMENT, rounded)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    note_allocation(memory, *out, bytes, CT_GPU_LEGACY_STREAM_ID);
    return CUDA_SUCCESS;
}

static CUresult release(void *ptr)
{
    if (!note_release(ptr, CT_GPU_LEGACY_STREAM_ID))
        return CUDA_ERROR_INVALID_VALUE;
    free(ptr);
    return CUDA_SUCCESS;
}

/* ---- work: launches, copies, sets ------------------------------------------------------ */

static void run_kernel(CUfunction f, const uint32_t grid[3], const uint32_t block[3],
                       uint32_t dynamic_shared, uint32_t stream_id)
{
    struct ct_gpu_work work = {.kind = CT_WORK_KERNEL, .stream_id = stream_id};
    work.kernel.name = f->name;
    memcpy(work.kernel.grid, grid, sizeof work.kernel.grid);
    memcpy(work.kernel.block, block, sizeof work.kernel.block);
    work.kernel.dynamic_shared = dynamic_shared;
    schedule(&work, knobs.kernel_ns);
    emit(&work);
}

static uint64_t transfer_ns(uint64_t bytes)
{
    return knobs.transfer_ns + bytes / knobs.copy_bytes_per_ns;
}

/* A copy's source and destination kinds: the device side of an explicit direction is device
 * memory; host sides, and both sides of an undirected copy, are looked up. */
static void copy_kinds(struct ct_gpu_work *work, const void *dst, const void *src)
{
    CUpti_ActivityMemcpyKind kind = work->memcpy.kind;
    bool src_device =
        kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH || kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    bool dst_device =
        kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD || kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    work->memcpy.src = src_device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : memory_at(src);
    work->memcpy.dst = dst_device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : memory_at(dst);
    if (kind != CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN)
        return;
    src_device = work->memcpy.src == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    dst_device = work->memcpy.dst == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    work->memcpy.kind =
        src_device
            ? (dst_device ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH)
            : (dst_device ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
}

/* Queues the copy or set `t` describes (bytes already moved); a synchronous copy waits for it. */
static void run_transfer(const struct ct_gpu_transfer *t)
{
    struct ct_gpu_work work = {.stream_id = t->stream_id, .bytes = t->bytes};
    if (t->src) {
        work.kind = CT_WORK_MEMCPY;
        work.memcpy.kind = t->kind;
        work.memcpy.async = t->async;
        work.memcpy.copies = t->copies > 1 ? t->copies : 1;
        copy_kinds(&work, t->dst, t->src);
    } else {
        work.kind = CT_WORK_MEMSET;
        work.memset.value = t->value;
        work.memset.memory = memory_at(t->dst);
        work.memset.async = t->async;
    }
    schedule(&work, transfer_ns(t->bytes));
    emit(&work);
    if (t->src && !t->async)
        wait_until(work.end);
}

static CUresult copy(void *dst, const void *src, size_t bytes, CUpti_ActivityMemcpyKind kind,
                     CUstream stream, bool async)
{
    if (bytes != 0 && (!dst || !src))
        return CUDA_ERROR_INVALID_VALUE;
    memmove(dst, src, bytes);
    run_transfer(&(struct ct_gpu_transfer){dst, src, bytes, 0, kind, stream_id_of(stream), stream,
                                           async, 1});
    return CUDA_SUCCESS;
}

/* Sets `count` elements of `width` bytes (1 or 4) to value. */
static CUresult set(CUdeviceptr dst, unsigned int value, size_t count, size_t width)
{
    void *at = (void *)(uintptr_t)dst;
    if (count != 0 && !at)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++)
        memcpy((char *)at + i * width, &value, width);
    run_transfer(&(struct ct_gpu_transfer){at, NULL, count * width, value,
                                           CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN,
                                           CT_GPU_LEGACY_STREAM_ID, NULL, true, 1});
    return CUDA_SUCCESS;
}

/* ---- the runtime double's side of the table -------------------------------------------- */

static void nested_launch(const struct ct_gpu_launch *l)
{
    CUfunction f = function_named(l->name);
    if (!f)
        return;
    CUlaunchConfig config = {l->grid[0],  l->grid[1],        l->grid[2], l->block[0], l->block[1],
                             l->block[2], l->dynamic_shared, l->stream,  NULL,        0};
    cuLaunchKernelEx_params ex = {&config, f, l->args, NULL};
    cuLaunchKernel_params plain = {f,           l->grid[0],  l->grid[1],  l->grid[2],
                                   l->block[0], l->block[1], l->block[2], l->dynamic_shared,
                                   l->stream,   l->args,     NULL};
    struct ct_gpu_call call;
    if (l->ex)
        api_enter(&call, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                  "cuLaunchKernelEx", &ex, f->name);
    else
        api_enter(&call, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                  "cuLaunchKernel", &plain, f->name);
    run_kernel(f, l->grid, l->block, l->dynamic_shared, l->stream_id);
    CUresult rc = CUDA_SUCCESS;
    api_exit(&call, &rc);
}

/* The parameters of every driver copy or set a runtime call may nest, one of them in use. */
union transfer_params {
    cuMemcpy_params any;
    cuMemcpyAsync_params any_async;
    cuMemcpyHtoD_v2_params htod;
    cuMemcpyHtoDAsync_v2_params htod_async;
    cuMemcpyDtoH_v2_params dtoh;
    cuMemcpyDtoHAsync_v2_params dtoh_async;
    cuMemcpyDtoD_v2_params dtod;
    cuMemcpyDtoDAsync_v2_params dtod_async;
    cuMemsetD8_v2_params set;
    cuMemsetD8Async_params set_async;
    cuMemcpyBatchAsync_params batch;
};

#define AS_DEVICE(ptr) ((CUdeviceptr)(uintptr_t)(ptr))
#define NESTED(name, field, ...)                                                                   \
    (p->field = (__typeof__(p->field)){__VA_ARGS__}, *cbid = CUPTI_DRIVER_TRACE_CBID_##name, #name)

/* Fills the parameters of the driver call that performs t; its name and cbid. */
static const char *nested_transfer(const struct ct_gpu_transfer *t, union transfer_params *p,
                                   CUpti_CallbackId *cbid)
{
    void *d = t->dst;
    const void *s = t->src;
    size_t n = t->bytes;
    CUstream h = t->stream;
    if (!s)
        return t->async ? NESTED(cuMemsetD8Async, set_async, AS_DEVICE(d), t->value, n, h)
                        : NESTED(cuMemsetD8_v2, set, AS_DEVICE(d), t->value, n);
    if (t->copies > 1) /* the runtime's arrays are its own: the count and stream are passed on */
        return NESTED(cuMemcpyBatchAsync, batch, .count = t->copies, .hStream = h);
    switch (t->kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return t->async ? NESTED(cuMemcpyHtoDAsync_v2, htod_async, AS_DEVICE(d), s, n, h)
                        : NESTED(cuMemcpyHtoD_v2, htod, AS_DEVICE(d), s, n);
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return t->async ? NESTED(cuMemcpyDtoHAsync_v2, dtoh_async, d, AS_DEVICE(s), n, h)
                        : NESTED(cuMemcpyDtoH_v2, dtoh, d, AS_DEVICE(s), n);
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return t->async ? NESTED(cuMemcpyDtoDAsync_v2, dtod_async, AS_DEVICE(d), AS_DEVICE(s), n, h)
                        : NESTED(cuMemcpyDtoD_v2, dtod, AS_DEVICE(d), AS_DEVICE(s), n);
    default:
        return t->async ? NESTED(cuMemcpyAsync, any_async, AS_DEVICE(d), AS_DEVICE(s), n, h)
                        : NESTED(cuMemcpy, any, AS_DEVICE(d), AS_DEVICE(s), n);
    }
}

static void nested_transfer_call(const struct ct_gpu_transfer *t)
{
    union transfer_params params;
    CUpti_CallbackId cbid;
    const char *name = nested_transfer(t, &params, &cbid);
    struct ct_gpu_call call;
    api_enter(&call, CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, &params, NULL);
    run_transfer(t);
    CUresult rc = CUDA_SUCCESS;
    api_exit(&call, &rc);
}

/* ---- graphs: what the driver adds to double_graph.h --------------------------------------- */

/* CT_DOUBLE_CUPTI_GRAPH_NODE and CT_DOUBLE_CUPTI_GRAPH_ID: which ids a replayed record carries,
 * on which cupti_activity.h says only "The unique ID of the graph node that launched this kernel
 * through graph launch APIs" and "The unique ID of the graph that launched this kernel": the
 * executable graph's cloned node ("clone", the default) or the node it was cloned from
 * ("original"); the graph it was instantiated from ("original", the default) or the executable
 * graph's clone of it ("clone"). */
static struct {
    bool original_node, clone_graph;
} graph_ids;

__attribute__((constructor)) static void load_graph_knobs(void)
{
    const char *node = getenv("CT_DOUBLE_CUPTI_GRAPH_NODE"),
               *graph = getenv("CT_DOUBLE_CUPTI_GRAPH_ID");
    graph_ids.original_node = node && strcmp(node, "original") == 0;
    graph_ids.clone_graph = graph && strcmp(graph, "clone") == 0;
}

/* A kernel, copy or set node becomes work on the stream; memory and empty nodes do none. */
static void replay_node(const struct CUgraphNode_st *n, CUstream stream, uint32_t stream_id)
{
    CUfunction f;
    switch (n->kind) {
    case CTG_KERNEL:
        if ((f = function_named(n->kernel.name)))
            run_kernel(f, n->kernel.grid, n->kernel.block, n->kernel.dynamic_shared, stream_id);
        return;
    case CTG_MEMCPY:
        run_transfer(&(struct ct_gpu_transfer){n->copy.dst, n->copy.src, n->bytes, 0, n->copy.kind,
                                               stream_id, stream, true, 1});
        return;
    case CTG_MEMSET:
        run_transfer(&(struct ct_gpu_transfer){n->set.dst, NULL, n->bytes, n->set.value,
                                               CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, stream_id,
                                               stream, true, 1});
        return;
    default:
        return;
    }
}

/* The executable graph's nodes in order, on the launch stream, each attributed to the launch
 * call in flight and to its graph node; then the whole launch as one CT_WORK_GRAPH. */
static void replay(const struct CUgraphExec_st *exec, CUstream stream)
{
    struct ct_gpu_work whole = {.kind = CT_WORK_GRAPH, .stream_id = stream_id_of(stream)};
    schedule(&whole, 0);
    thread_calls.graph_id = graph_ids.clone_graph ? exec->clone.id : exec->graph_id;
    for (const struct CUgraphNode_st *n = exec->clone.first; n; n = n->next) {
        thread_calls.graph_node_id = graph_ids.original_node ? n->original_id : n->id;
        replay_node(n, stream, whole.stream_id);
    }
    thread_calls.graph_node_id = 0;
    whole.end = idle_at(whole.stream_id);
    emit(&whole);
    thread_calls.graph_id = 0;
}

static void announce_resource(CUpti_CallbackId cbid, const CUpti_GraphData *graph)
{
    const struct ct_gpu_tool *current = atomic_load(&tool);
    if (!current || !current->resource || thread_calls.in_callback)
        return;
    CUpti_ResourceData data = {.context = &the_context, .resourceDescriptor = (void *)graph};
    thread_calls.in_callback = true;
    current->resource(cbid, &data);
    thread_calls.in_callback = false;
}

static const struct ctg_hooks graph_hooks = {.resource = announce_resource, .replay = replay};

__attribute__((constructor)) static void hook_graphs(void)
{
    ctg.hooks = &graph_hooks;
}

/* A runtime graph launch nests the driver's, as the real runtime's does. */
static int nested_graph_launch(struct CUgraphExec_st *exec, CUstream stream)
{
    cuGraphLaunch_params params = {exec, stream};
    struct ct_gpu_call call;
    api_enter(&call, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
              "cuGraphLaunch", &params, NULL);
    CUresult rc = (CUresult)ctg_launch(exec, stream);
    api_exit(&call, &rc);
    return rc;
}

static const struct ct_gpu_table table = {
    .size = sizeof table,
    .attach = attach_tool,
    .detach = detach_tool,
    .enter = api_enter,
    .exit = api_exit,
    .create_stream = create_stream_id,
    .launch = nested_launch,
    .transfer = nested_transfer_call,
    .allocated = note_allocation,
    .released = runtime_release,
    .synchronize = synchronize,
    .graphs = &ctg_ops,
    .graph_launch = nested_graph_launch,
};

/* ---- exports: initialisation and queries ----------------------------------------------- */

/* What the real driver does for a profiler named by CUDA_INJECTION64_PATH: load it at the first
 * cuInit and call its InitializeInjection once. A file that does not load is ignored. */
static void inject(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    void *library = path && path[0] ? dlopen(path, RTLD_NOW) : NULL;
    int (*initialize)(void) = library ? (int (*)(void))dlsym(library, "InitializeInjection") : NULL;
    if (initialize)
        initialize();
}

static atomic_bool injected;

static CUresult init(unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* Not pthread_once: the injected library may itself call cuInit. */
    if (!atomic_exchange(&injected, true))
        inject();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    cuInit_params params = {Flags};
    DRIVER_CALL(cuInit, &params, NULL, init(Flags));
}

static CUresult report_int(int *out, int value)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    *out = value;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    cuDriverGetVersion_params params = {driverVersion};
    DRIVER_CALL(cuDriverGetVersion, &params, NULL, report_int(driverVersion, DRIVER_VERSION));
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    cuDeviceGetCount_params params = {count};
    DRIVER_CALL(cuDeviceGetCount, &params, NULL, report_int(count, 1));
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    cuDeviceGet_params params = {device, ordinal};
    DRIVER_CALL(cuDeviceGet, &params, NULL,
                ordinal != 0 ? CUDA_ERROR_INVALID_DEVICE : report_int(device, 0));
}

static CUresult current_context(CUcontext *out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    *out = &the_context;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    cuCtxGetCurrent_params params = {pctx};
    DRIVER_CALL(cuCtxGetCurrent, &params, NULL, current_context(pctx));
}

static CUresult export_table(const void **out, const CUuuid *id)
{
    static const CUuuid ours = CT_GPU_TABLE_ID;
    if (!out || !id)
        return CUDA_ERROR_INVALID_VALUE;
    if (memcmp(id, &ours, sizeof ours) != 0)
        return CUDA_ERROR_NOT_FOUND;
    *out = &table;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    cuGetExportTable_params params = {ppExportTable, pExportTableId};
    DRIVER_CALL(cuGetExportTable, &params, NULL, export_table(ppExportTable, pExportTableId));
}

/* ---- exports: modules and launches ----------------------------------------------------- */

/* Every image loads as the one module: kernels are found by name alone. */
static struct CUmod_st {
    char unused;
} the_module;

static CUresult load_module(CUmodule *out, const void *image)
{
    if (!out || !image)
        return CUDA_ERROR_INVALID_VALUE;
    *out = &the_module;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    cuModuleLoadData_params params = {module, image};
    DRIVER_CALL(cuModuleLoadData, &params, NULL, load_module(module, image));
}

static CUresult get_function(CUfunction *out, CUmodule module, const char *name)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (module != &the_module)
        return CUDA_ERROR_INVALID_HANDLE;
    return (*out = function_named(name)) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    cuModuleGetFunction_params params = {hfunc, hmod, name};
    DRIVER_CALL(cuModuleGetFunction, &params, NULL, get_function(hfunc, hmod, name));
}

static CUresult launch(CUfunction f, const uint32_t grid[3], const uint32_t block[3],
                       uint32_t dynamic_shared, CUstream stream)
{
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < 3; i++)
        if (grid[i] == 0 || block[i] == 0)
            return CUDA_ERROR_INVALID_VALUE;
    bool captured;
    CUresult rc = (CUresult)ctg_capture(
        stream, ctg_kernel_node(f->name, grid, block, dynamic_shared), &captured, NULL);
    if (!captured)
        run_kernel(f, grid, block, dynamic_shared, stream_id_of(stream));
    return rc;
}

/* The per-thread-default-stream variants (_ptsz, _ptds) share their plain entry point's body
 * and parameter layout (generated_cuda_meta.h gives both the same fields); each has its own
 * callback id, as cupti_driver_cbid.h lists them. */

static CUresult launch_kernel(CUpti_CallbackId cbid, const char *name, CUfunction f,
                              unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                              unsigned int blockDimX, unsigned int blockDimY,
                              unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                              void **kernelParams, void **extra)
{
    cuLaunchKernel_params params = {f,         gridDimX,     gridDimY,  gridDimZ,
                                    blockDimX, blockDimY,    blockDimZ, sharedMemBytes,
                                    hStream,   kernelParams, extra};
    const uint32_t grid[3] = {gridDimX, gridDimY, gridDimZ};
    const uint32_t block[3] = {blockDimX, blockDimY, blockDimZ};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, f ? f->name : NULL,
                   launch(f, grid, block, sharedMemBytes, hStream));
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                                void **extra)
{
    return launch_kernel(ENTRY(cuLaunchKernel), f, gridDimX, gridDimY, gridDimZ, blockDimX,
                         blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

/* cuda.h: "#define cuLaunchKernel __CUDA_API_PTSZ(cuLaunchKernel)" */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX,
                                     unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra)
{
    return launch_kernel(ENTRY(cuLaunchKernel_ptsz), f, gridDimX, gridDimY, gridDimZ, blockDimX,
                         blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

static CUresult launch_with_config(const CUlaunchConfig *c, CUfunction f)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    const uint32_t grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
    const uint32_t block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
    return launch(f, grid, block, c->sharedMemBytes, c->hStream);
}

static CUresult launch_kernel_ex(CUpti_CallbackId cbid, const char *name,
                                 const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                 void **extra)
{
    cuLaunchKernelEx_params params = {config, f, kernelParams, extra};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, f ? f->name : NULL, launch_with_config(config, f));
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra)
{
    return launch_kernel_ex(ENTRY(cuLaunchKernelEx), config, f, kernelParams, extra);
}

/* cuda.h: "#define cuLaunchKernelEx __CUDA_API_PTSZ(cuLaunchKernelEx)" */
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra)
{
    return launch_kernel_ex(ENTRY(cuLaunchKernelEx_ptsz), config, f, kernelParams, extra);
}

/* ---- exports: memory, copies and sets -------------------------------------------------- */

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    cuMemAlloc_v2_params params = {dptr, bytesize};
    DRIVER_CALL(cuMemAlloc_v2, &params, NULL,
                allocate((void **)dptr, bytesize, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    cuMemFree_v2_params params = {dptr};
    DRIVER_CALL(cuMemFree_v2, &params, NULL, release((void *)(uintptr_t)dptr));
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    cuMemAllocHost_v2_params params = {pp, bytesize};
    DRIVER_CALL(cuMemAllocHost_v2, &params, NULL,
                allocate(pp, bytesize, CUPTI_ACTIVITY_MEMORY_KIND_PINNED));
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    cuMemFreeHost_params params = {p};
    DRIVER_CALL(cuMemFreeHost, &params, NULL, release(p));
}

#define DEVICE_PTR(ptr) ((void *)(uintptr_t)(ptr))

static CUresult copy_htod(CUpti_CallbackId cbid, const char *name, CUdeviceptr dstDevice,
                          const void *srcHost, size_t ByteCount)
{
    cuMemcpyHtoD_v2_params params = {dstDevice, srcHost, ByteCount};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL,
                   copy(DEVICE_PTR(dstDevice), srcHost, ByteCount, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                        NULL, false));
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return copy_htod(ENTRY(cuMemcpyHtoD_v2), dstDevice, srcHost, ByteCount);
}

/* cuda.h: "#define cuMemcpyHtoD __CUDA_API_PTDS(cuMemcpyHtoD_v2)" */
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return copy_htod(ENTRY(cuMemcpyHtoD_v2_ptds), dstDevice, srcHost, ByteCount);
}

static CUresult copy_dtoh(CUpti_CallbackId cbid, const char *name, void *dstHost,
                          CUdeviceptr srcDevice, size_t ByteCount)
{
    cuMemcpyDtoH_v2_params params = {dstHost, srcDevice, ByteCount};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL,
                   copy(dstHost, DEVICE_PTR(srcDevice), ByteCount, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
                        NULL, false));
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_dtoh(ENTRY(cuMemcpyDtoH_v2), dstHost, srcDevice, ByteCount);
}

/* cuda.h: "#define cuMemcpyDtoH __CUDA_API_PTDS(cuMemcpyDtoH_v2)" */
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_dtoh(ENTRY(cuMemcpyDtoH_v2_ptds), dstHost, srcDevice, ByteCount);
}

static CUresult copy_dtod(CUpti_CallbackId cbid, const char *name, CUdeviceptr dstDevice,
                          CUdeviceptr srcDevice, size_t ByteCount)
{
    cuMemcpyDtoD_v2_params params = {dstDevice, srcDevice, ByteCount};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL,
                   copy(DEVICE_PTR(dstDevice), DEVICE_PTR(srcDevice), ByteCount,
                        CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, NULL, false));
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_dtod(ENTRY(cuMemcpyDtoD_v2), dstDevice, srcDevice, ByteCount);
}

/* cuda.h: "#define cuMemcpyDtoD __CUDA_API_PTDS(cuMemcpyDtoD_v2)" */
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                      size_t ByteCount)
{
    return copy_dtod(ENTRY(cuMemcpyDtoD_v2_ptds), dstDevice, srcDevice, ByteCount);
}

static CUresult copy_htod_async(CUpti_CallbackId cbid, const char *name, CUdeviceptr dstDevice,
                                const void *srcHost, size_t ByteCount, CUstream hStream)
{
    cuMemcpyHtoDAsync_v2_params params = {dstDevice, srcHost, ByteCount, hStream};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL,
                   copy(DEVICE_PTR(dstDevice), srcHost, ByteCount, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                        hStream, true));
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                      CUstream hStream)
{
    return copy_htod_async(ENTRY(cuMemcpyHtoDAsync_v2), dstDevice, srcHost, ByteCount, hStream);
}

/* cuda.h: "#define cuMemcpyHtoDAsync __CUDA_API_PTSZ(cuMemcpyHtoDAsync_v2)" */
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                           size_t ByteCount, CUstream hStream)
{
    return copy_htod_async(ENTRY(cuMemcpyHtoDAsync_v2_ptsz), dstDevice, srcHost, ByteCount,
                           hStream);
}

static CUresult copy_dtoh_async(CUpti_CallbackId cbid, const char *name, void *dstHost,
                                CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    cuMemcpyDtoHAsync_v2_params params = {dstHost, srcDevice, ByteCount, hStream};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL,
                   copy(dstHost, DEVICE_PTR(srcDevice), ByteCount, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
                        hStream, true));
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                      CUstream hStream)
{
    return copy_dtoh_async(ENTRY(cuMemcpyDtoHAsync_v2), dstHost, srcDevice, ByteCount, hStream);
}

/* cuda.h: "#define cuMemcpyDtoHAsync __CUDA_API_PTSZ(cuMemcpyDtoHAsync_v2)" */
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream)
{
    return copy_dtoh_async(ENTRY(cuMemcpyDtoHAsync_v2_ptsz), dstHost, srcDevice, ByteCount,
                           hStream);
}

static CUresult set_d8(CUpti_CallbackId cbid, const char *name, CUdeviceptr dstDevice,
                       unsigned char uc, size_t N)
{
    cuMemsetD8_v2_params params = {dstDevice, uc, N};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL, set(dstDevice, uc, N, 1));
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return set_d8(ENTRY(cuMemsetD8_v2), dstDevice, uc, N);
}

/* cuda.h: "#define cuMemsetD8 __CUDA_API_PTDS(cuMemsetD8_v2)" */
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return set_d8(ENTRY(cuMemsetD8_v2_ptds), dstDevice, uc, N);
}

static CUresult set_d32(CUpti_CallbackId cbid, const char *name, CUdeviceptr dstDevice,
                        unsigned int ui, size_t N)
{
    cuMemsetD32_v2_params params = {dstDevice, ui, N};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL, set(dstDevice, ui, N, 4));
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    return set_d32(ENTRY(cuMemsetD32_v2), dstDevice, ui, N);
}

/* cuda.h: "#define cuMemsetD32 __CUDA_API_PTDS(cuMemsetD32_v2)" */
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    return set_d32(ENTRY(cuMemsetD32_v2_ptds), dstDevice, ui, N);
}

/* ---- exports: the virtual-memory API --------------------------------------------------- */

/* A handle: its memory, and one reference for itself and one per mapping. */
struct vmm_handle {
    size_t bytes;
    unsigned refs;
};

struct vmm_mapping {
    CUdeviceptr ptr;
    size_t bytes;
    struct vmm_handle *handle;
    struct vmm_mapping *next;
};

static struct {
    pthread_mutex_t lock;
    uint64_t held, next_address;
    struct vmm_mapping *mappings;
} vmm = {.lock = PTHREAD_MUTEX_INITIALIZER, .next_address = 0x600000000000ull};

/* Under the lock. */
static void vmm_let_go(struct vmm_handle *h)
{
    if (--h->refs == 0) {
        vmm.held -= h->bytes;
        free(h);
    }
}

static CUresult vmm_create(CUmemGenericAllocationHandle *out, size_t bytes,
                           const CUmemAllocationProp *prop)
{
    if (!out || !prop || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm.lock);
    struct vmm_handle *h = vmm.held + bytes <= knobs.vmm_limit ? malloc(sizeof *h) : NULL;
    if (h) {
        *h = (struct vmm_handle){bytes, 1};
        vmm.held += bytes;
        *out = (CUmemGenericAllocationHandle)(uintptr_t)h;
    }
    pthread_mutex_unlock(&vmm.lock);
    return h ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult vmm_release(CUmemGenericAllocationHandle handle)
{
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm.lock);
    vmm_let_go((struct vmm_handle *)(uintptr_t)handle);
    pthread_mutex_unlock(&vmm.lock);
    return CUDA_SUCCESS;
}

static CUresult vmm_reserve(CUdeviceptr *out, size_t bytes)
{
    if (!out || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm.lock);
    *out = vmm.next_address;
    vmm.next_address += (bytes + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
    pthread_mutex_unlock(&vmm.lock);
    return CUDA_SUCCESS;
}

static CUresult vmm_map(CUdeviceptr ptr, size_t bytes, CUmemGenericAllocationHandle handle)
{
    struct vmm_mapping *m = malloc(sizeof *m);
    if (!ptr || !bytes || !handle || !m) {
        free(m);
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&vmm.lock);
    *m = (struct vmm_mapping){ptr, bytes, (struct vmm_handle *)(uintptr_t)handle, vmm.mappings};
    m->handle->refs++;
    vmm.mappings = m;
    pthread_mutex_unlock(&vmm.lock);
    return CUDA_SUCCESS;
}

/* Unmaps every mapping that starts inside [ptr, ptr + bytes). */
static CUresult vmm_unmap(CUdeviceptr ptr, size_t bytes)
{
    int found = 0;
    pthread_mutex_lock(&vmm.lock);
    for (struct vmm_mapping **at = &vmm.mappings; *at;) {
        struct vmm_mapping *m = *at;
        if (m->ptr >= ptr && m->ptr - ptr < bytes) {
            *at = m->next;
            vmm_let_go(m->handle);
            free(m);
            found = 1;
        } else {
            at = &m->next;
        }
    }
    pthread_mutex_unlock(&vmm.lock);
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                             const CUmemAllocationProp *prop, unsigned long long flags)
{
    cuMemCreate_params params = {handle, size, prop, flags};
    DRIVER_CALL(cuMemCreate, &params, NULL, vmm_create(handle, size, prop));
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    cuMemRelease_params params = {handle};
    DRIVER_CALL(cuMemRelease, &params, NULL, vmm_release(handle));
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags)
{
    cuMemAddressReserve_params params = {ptr, size, alignment, addr, flags};
    DRIVER_CALL(cuMemAddressReserve, &params, NULL, vmm_reserve(ptr, size));
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    cuMemAddressFree_params params = {ptr, size};
    DRIVER_CALL(cuMemAddressFree, &params, NULL,
                ptr && size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    cuMemMap_params params = {ptr, size, offset, handle, flags};
    DRIVER_CALL(cuMemMap, &params, NULL, vmm_map(ptr, size, handle));
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    cuMemUnmap_params params = {ptr, size};
    DRIVER_CALL(cuMemUnmap, &params, NULL, vmm_unmap(ptr, size));
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                size_t count)
{
    cuMemSetAccess_params params = {ptr, size, desc, count};
    DRIVER_CALL(cuMemSetAccess, &params, NULL,
                ptr && size && desc && count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

/* ---- exports: streams and synchronisation ---------------------------------------------- */

static CUresult create_stream(CUstream *out, unsigned int flags)
{
    if (!out || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct ct_gpu_stream *stream = calloc(1, sizeof *stream);
    if (!stream || !(stream->id = create_stream_id())) {
        free(stream);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    stream->non_blocking = flags & CU_STREAM_NON_BLOCKING;
    *out = (CUstream)stream;
    return CUDA_SUCCESS;
}

static CUresult destroy_stream(CUstream stream)
{
    if (stream_id_of(stream) == CT_GPU_LEGACY_STREAM_ID)
        return CUDA_ERROR_INVALID_HANDLE;
    free(stream);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    cuStreamCreate_params params = {phStream, Flags};
    DRIVER_CALL(cuStreamCreate, &params, NULL, create_stream(phStream, Flags));
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    cuStreamDestroy_v2_params params = {hStream};
    DRIVER_CALL(cuStreamDestroy_v2, &params, NULL, destroy_stream(hStream));
}

/* A wait that stream capture refuses (ctg_sync_call) waits for nothing. */
static CUresult wait_for(CUpti_ActivitySynchronizationType type, CUstream stream, bool context)
{
    CUresult rc = (CUresult)(context ? ctg_unsafe_call() : ctg_sync_call(stream));
    if (rc == CUDA_SUCCESS)
        synchronize(type, context ? CUPTI_SYNCHRONIZATION_INVALID_VALUE : stream_id_of(stream));
    return rc;
}

static CUresult stream_synchronize(CUpti_CallbackId cbid, const char *name, CUstream hStream)
{
    cuStreamSynchronize_params params = {hStream};
    DRIVER_CALL_AS(
        SHARED_ENTRY, &params, NULL,
        wait_for(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, hStream, false));
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    return stream_synchronize(ENTRY(cuStreamSynchronize), hStream);
}

/* cuda.h: "#define cuStreamSynchronize __CUDA_API_PTSZ(cuStreamSynchronize)" */
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
    return stream_synchronize(ENTRY(cuStreamSynchronize_ptsz), hStream);
}

/* cuCtxSynchronize takes no arguments, so it has no parameter struct. */
CUresult CUDAAPI cuCtxSynchronize(void)
{
    DRIVER_CALL(cuCtxSynchronize, NULL, NULL,
                wait_for(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, NULL, true));
}

/* ---- exports: stream capture and graphs ------------------------------------------------ */

static CUresult begin_capture(CUpti_CallbackId cbid, const char *name, CUstream hStream,
                              CUstreamCaptureMode mode)
{
    cuStreamBeginCapture_v2_params params = {hStream, mode};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL, (CUresult)ctg_begin(hStream, (int)mode, NULL));
}

/* cuda.h: "#define cuStreamBeginCapture __CUDA_API_PTSZ(cuStreamBeginCapture_v2)", so this is
 * the _v2 export. */
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(ENTRY(cuStreamBeginCapture_v2), hStream, mode);
}

CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(ENTRY(cuStreamBeginCapture_v2_ptsz), hStream, mode);
}

static CUresult end_capture(CUpti_CallbackId cbid, const char *name, CUstream hStream,
                            CUgraph *phGraph)
{
    cuStreamEndCapture_params params = {hStream, phGraph};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL, (CUresult)ctg_end(hStream, phGraph));
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(ENTRY(cuStreamEndCapture), hStream, phGraph);
}

/* cuda.h: "#define cuStreamEndCapture __CUDA_API_PTSZ(cuStreamEndCapture)" */
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(ENTRY(cuStreamEndCapture_ptsz), hStream, phGraph);
}

/* cuda.h: "#define cuGraphInstantiate cuGraphInstantiateWithFlags", so this is that export. */
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                    unsigned long long flags)
{
    cuGraphInstantiateWithFlags_params params = {phGraphExec, hGraph, flags};
    DRIVER_CALL(cuGraphInstantiateWithFlags, &params, NULL,
                (CUresult)ctg_instantiate(phGraphExec, hGraph,
                                          flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
}

static CUresult graph_launch(CUpti_CallbackId cbid, const char *name, CUgraphExec hGraphExec,
                             CUstream hStream)
{
    cuGraphLaunch_params params = {hGraphExec, hStream};
    DRIVER_CALL_AS(SHARED_ENTRY, &params, NULL, (CUresult)ctg_launch(hGraphExec, hStream));
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_launch(ENTRY(cuGraphLaunch), hGraphExec, hStream);
}

/* cuda.h: "#define cuGraphLaunch __CUDA_API_PTSZ(cuGraphLaunch)" */
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return graph_launch(ENTRY(cuGraphLaunch_ptsz), hGraphExec, hStream);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    cuGraphExecDestroy_params params = {hGraphExec};
    DRIVER_CALL(cuGraphExecDestroy, &params, NULL, (CUresult)ctg_destroy_exec(hGraphExec));
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    cuGraphDestroy_params params = {hGraph};
    DRIVER_CALL(cuGraphDestroy, &params, NULL, (CUresult)ctg_destroy(hGraph));
}

/* ---- exports: entry points by name ----------------------------------------------------- */

/* The entry points cuGetProcAddress finds, by the base name it is asked for: the CUDA version
 * that introduced the versioned function, and the function for each stream mode (the legacy one
 * again where no per-thread variant exists). cuInit is left out, so a program's cuInit always
 * goes through the dynamic linker. */
static const struct proc {
    const char *symbol;
    int since;
    void *legacy, *per_thread;
} procs[] = {
    {"cuModuleLoadData", 2000, (void *)cuModuleLoadData, (void *)cuModuleLoadData},
    {"cuModuleGetFunction", 2000, (void *)cuModuleGetFunction, (void *)cuModuleGetFunction},
    {"cuMemAlloc", 3020, (void *)cuMemAlloc_v2, (void *)cuMemAlloc_v2},
    {"cuMemFree", 3020, (void *)cuMemFree_v2, (void *)cuMemFree_v2},
    {"cuCtxSynchronize", 2000, (void *)cuCtxSynchronize, (void *)cuCtxSynchronize},
    {"cuLaunchKernel", 4000, (void *)cuLaunchKernel, (void *)cuLaunchKernel_ptsz},
    {"cuLaunchKernelEx", 11060, (void *)cuLaunchKernelEx, (void *)cuLaunchKernelEx_ptsz},
    {"cuMemcpyHtoD", 3020, (void *)cuMemcpyHtoD_v2, (void *)cuMemcpyHtoD_v2_ptds},
    {"cuMemcpyDtoH", 3020, (void *)cuMemcpyDtoH_v2, (void *)cuMemcpyDtoH_v2_ptds},
    {"cuMemcpyDtoD", 3020, (void *)cuMemcpyDtoD_v2, (void *)cuMemcpyDtoD_v2_ptds},
    {"cuMemcpyHtoDAsync", 3020, (void *)cuMemcpyHtoDAsync_v2, (void *)cuMemcpyHtoDAsync_v2_ptsz},
    {"cuMemcpyDtoHAsync", 3020, (void *)cuMemcpyDtoHAsync_v2, (void *)cuMemcpyDtoHAsync_v2_ptsz},
    {"cuMemsetD8", 3020, (void *)cuMemsetD8_v2, (void *)cuMemsetD8_v2_ptds},
    {"cuMemsetD32", 3020, (void *)cuMemsetD32_v2, (void *)cuMemsetD32_v2_ptds},
    {"cuStreamSynchronize", 2000, (void *)cuStreamSynchronize, (void *)cuStreamSynchronize_ptsz},
};

static CUresult find_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    /* cuda.h: "If the specified CUDA version is greater than the driver version, the API will
     * return ::CUDA_ERROR_INVALID_VALUE." */
    if (version > DRIVER_VERSION)
        return CUDA_ERROR_INVALID_VALUE;
    const struct proc *found = NULL;
    for (size_t i = 0; i < sizeof procs / sizeof procs[0] && !found; i++)
        if (strcmp(procs[i].symbol, symbol) == 0)
            found = &procs[i];
    /* cuda.h: "The API will return ::CUDA_SUCCESS and set the returned pfn to NULL if ... no ABI
     * compatible driver function exists for the specified cudaVersion or if the driver symbol is
     * invalid." */
    CUdriverProcAddressQueryResult result = !found ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                            : version < found->since
                                                ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                                : CU_GET_PROC_ADDRESS_SUCCESS;
    /* cuda.h: CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM "will enable the search for all
     * driver symbols that match the requested driver symbol name including the per-thread
     * versions. If a per-thread version is not found, the API will return the legacy version";
     * DEFAULT is LEGACY_STREAM unless the caller's own header (compiled per-thread) set the
     * flag. */
    bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    *pfn = result != CU_GET_PROC_ADDRESS_SUCCESS ? NULL
           : per_thread                          ? found->per_thread
                                                 : found->legacy;
    if (status)
        *status = result;
    return CUDA_SUCCESS;
}

/* cuda.h: "#define cuGetProcAddress cuGetProcAddress_v2", so this is the _v2 export. */
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *symbolStatus)
{
    cuGetProcAddress_v2_params params = {symbol, pfn, cudaVersion, flags, symbolStatus};
    DRIVER_CALL(cuGetProcAddress_v2, &params, NULL,
                find_proc(symbol, pfn, cudaVersion, flags, symbolStatus));
}
