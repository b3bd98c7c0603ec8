/*
 * The private interface between the CPU doubles of the CUDA driver (tests/doubles/driver), the
 * runtime (tests/doubles/runtime) and CUPTI (tests/doubles/cupti). The real runtime and CUPTI reach
 * driver internals through cuGetExportTable with private UUIDs; the doubles do the same with
 * CT_GPU_TABLE_ID, so that the driver double alone owns what the GPU owns: the correlation ids of
 * API calls, the simulated device timeline and the one tool (CUPTI) attachment. The runtime
 * reports its API calls and the work they submit through the table; the driver turns calls into
 * callbacks and work into neutral descriptions (struct ct_gpu_work) that the attached tool lays
 * out as activity records. The driver-domain callback list is here too, so the ids the driver
 * emits and the names CUPTI gives them come from one place.
 */
#ifndef CT_DOUBLE_GPU_H
#define CT_DOUBLE_GPU_H

#include <cupti.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What cuGetExportTable answers with the table below; no real table has this id. */
#define CT_GPU_TABLE_ID                                                                            \
    {                                                                                              \
        {                                                                                          \
            'c', 'u', 'd', 'a', 't', 'r', 'a', 'c', 'e', '-', 'g', 'p', 'u', '-', 'v', '1'         \
        }                                                                                          \
    }

/* The ids activity records carry, as a one-GPU machine reports them. */
#define CT_GPU_DEVICE_ID 0u
#define CT_GPU_CONTEXT_ID 1u
#define CT_GPU_LEGACY_STREAM_ID 7u
#define CT_GPU_FIRST_STREAM_ID 13u

/* Every driver-domain callback the doubles emit: the cu* exports of the driver double (the
 * per-thread-default-stream variants among them, each with its own id in cupti_driver_cbid.h) and
 * the driver calls the runtime double's copies and sets nest (the enum names minus
 * CUPTI_DRIVER_TRACE_CBID_, which is also what cuptiGetCallbackName answers). */
#define CT_DRIVER_CALLBACKS(X)                                                                     \
    X(cuInit)                                                                                      \
    X(cuDriverGetVersion)                                                                          \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxSynchronize)                                                                            \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleGetFunction)                                                                         \
    X(cuLaunchKernel)                                                                              \
    X(cuLaunchKernelEx)                                                                            \
    X(cuMemAlloc_v2)                                                                               \
    X(cuMemFree_v2)                                                                                \
    X(cuMemAllocHost_v2)                                                                           \
    X(cuMemFreeHost)                                                                               \
    X(cuMemcpy)                                                                                    \
    X(cuMemcpyAsync)                                                                               \
    X(cuMemcpyHtoD_v2)                                                                             \
    X(cuMemcpyDtoH_v2)                                                                             \
    X(cuMemcpyDtoD_v2)                                                                             \
    X(cuMemcpyHtoDAsync_v2)                                                                        \
    X(cuMemcpyDtoHAsync_v2)                                                                        \
    X(cuMemcpyDtoDAsync_v2)                                                                        \
    X(cuMemcpyBatchAsync)                                                                          \
    X(cuMemsetD8_v2)                                                                               \
    X(cuMemsetD8Async)                                                                             \
    X(cuMemsetD32_v2)                                                                              \
    X(cuStreamCreate)                                                                              \
    X(cuStreamDestroy_v2)                                                                          \
    X(cuStreamSynchronize)                                                                         \
    X(cuMemCreate)                                                                                 \
    X(cuMemRelease)                                                                                \
    X(cuMemAddressReserve)                                                                         \
    X(cuMemAddressFree)                                                                            \
    X(cuMemMap)                                                                                    \
    X(cuMemUnmap)                                                                                  \
    X(cuMemSetAccess)                                                                              \
    X(cuGetExportTable)                                                                            \
    X(cuGetProcAddress_v2)                                                                         \
    X(cuLaunchKernel_ptsz)                                                                         \
    X(cuLaunchKernelEx_ptsz)                                                                       \
    X(cuMemcpyHtoD_v2_ptds)                                                                        \
    X(cuMemcpyDtoH_v2_ptds)                                                                        \
    X(cuMemcpyDtoD_v2_ptds)                                                                        \
    X(cuMemcpyHtoDAsync_v2_ptsz)                                                                   \
    X(cuMemcpyDtoHAsync_v2_ptsz)                                                                   \
    X(cuMemsetD8_v2_ptds)                                                                          \
    X(cuMemsetD32_v2_ptds)                                                                         \
    X(cuStreamSynchronize_ptsz)                                                                    \
    X(cuStreamBeginCapture_v2)                                                                     \
    X(cuStreamBeginCapture_v2_ptsz)                                                                \
    X(cuStreamEndCapture)                                                                          \
    X(cuStreamEndCapture_ptsz)                                                                     \
    X(cuGraphInstantiateWithFlags)                                                                 \
    X(cuGraphLaunch)                                                                               \
    X(cuGraphLaunch_ptsz)                                                                          \
    X(cuGraphExecDestroy)                                                                          \
    X(cuGraphDestroy)

enum ct_gpu_work_kind {
    CT_WORK_KERNEL,
    CT_WORK_MEMCPY,
    CT_WORK_MEMSET,
    CT_WORK_MEMORY,
    CT_WORK_SYNC,
    CT_WORK_GRAPH /* a whole graph launch, from its first node's start to its last one's end */
};

/* One thing the simulated GPU did. Times are CUPTI's clock (CLOCK_REALTIME ns); a memory
 * operation happens at `start`. */
struct ct_gpu_work {
    enum ct_gpu_work_kind kind;
    uint32_t correlation_id;         /* the innermost API call's, a driver call's when nested */
    uint32_t runtime_correlation_id; /* the runtime call it was made under, 0 if none */
    uint32_t stream_id;
    uint64_t start, end;
    uint64_t bytes;
    /* The graph and graph node a replay ran it for (as CT_DOUBLE_CUPTI_GRAPH_ID and
     * CT_DOUBLE_CUPTI_GRAPH_NODE pick them), 0 outside a graph launch. */
    uint32_t graph_id;
    uint64_t graph_node_id;
    union {
        struct {
            const char *name; /* owned by the driver double, never freed */
            uint32_t grid[3], block[3];
            uint32_t dynamic_shared;
        } kernel;
        struct {
            CUpti_ActivityMemcpyKind kind;
            CUpti_ActivityMemoryKind src, dst;
            bool async;
            uint64_t copies; /* a batch's, else 1 */
        } memcpy;
        struct {
            uint32_t value;
            CUpti_ActivityMemoryKind memory;
            bool async;
        } memset;
        struct {
            CUpti_ActivityMemoryOperationType operation;
            CUpti_ActivityMemoryKind memory;
            uint64_t address;
        } memory;
        struct {
            CUpti_ActivitySynchronizationType type;
        } sync;
    };
};

/* What the CUPTI double attaches: the driver calls `callback` at the entry and exit of every API
 * call (runtime or driver; never for calls made from inside a callback on the same thread) and
 * `record` for every piece of work, and leaves filtering to the tool. */
struct ct_gpu_tool {
    void (*callback)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData *data);
    void (*record)(const struct ct_gpu_work *work);
    /* A CUPTI_CB_DOMAIN_RESOURCE callback, on the thread and inside the call that caused it. */
    void (*resource)(CUpti_CallbackId cbid, const CUpti_ResourceData *data);
};

/* An API call in flight, on its caller's stack from enter to exit: the callback data the tool
 * sees both times, and the slot its correlationData points at. */
struct ct_gpu_call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    uint64_t correlation_data;
    CUpti_CallbackData data;
    uint32_t outer_id; /* the id of the call this one is inside, restored at its exit */
};

struct ct_capture;

/* Both doubles' stream objects start with this, so either double can read the other's handles:
 * its id, whether it was made non-blocking, and the capture it is in (double_graph.h). */
struct ct_gpu_stream {
    uint32_t id;
    bool non_blocking;
    struct ct_capture *capture;
};

/* A runtime launch: the driver nests cuLaunchKernel (cuLaunchKernelEx when `ex`) under it. */
struct ct_gpu_launch {
    const char *name;
    uint32_t grid[3], block[3];
    uint32_t dynamic_shared;
    uint32_t stream_id;
    CUstream stream;
    void **args;
    bool ex;
};

/* A runtime copy or set, already done on the host bytes: the driver nests the cuMemcpy* or
 * cuMemset* call a runtime would make, records the work and, for a synchronous copy, waits. */
struct ct_gpu_transfer {
    void *dst;
    const void *src; /* NULL for a set */
    uint64_t bytes;
    uint32_t value;                /* a set's byte */
    CUpti_ActivityMemcpyKind kind; /* HTOD, DTOH, DTOD, HTOH; UNKNOWN: the driver decides */
    uint32_t stream_id;
    CUstream stream;
    bool async;
    uint64_t copies; /* a batch of this many copies, bytes their sum; 0 or 1: one copy */
};

/* The table behind CT_GPU_TABLE_ID. `size` is sizeof the struct the driver was built with. */
struct ct_gpu_table {
    size_t size;
    /* The tool slot: attach fails when another tool holds it. */
    bool (*attach)(const struct ct_gpu_tool *tool);
    void (*detach)(void);
    /* A runtime API call: a fresh correlation id unless it runs inside another call. */
    void (*enter)(struct ct_gpu_call *call, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                  const char *name, const void *params, const char *symbol);
    void (*exit)(struct ct_gpu_call *call, void *return_value);
    /* The work a runtime call submits, attributed to the call in flight on this thread. */
    uint32_t (*create_stream)(void); /* 0 when the device has no stream left */
    void (*launch)(const struct ct_gpu_launch *launch);
    void (*transfer)(const struct ct_gpu_transfer *transfer);
    void (*allocated)(CUpti_ActivityMemoryKind memory, const void *address, uint64_t bytes,
                      uint32_t stream_id);
    void (*released)(const void *address, uint32_t stream_id);
    /* Waits for the stream (every stream when stream_id is CUPTI_SYNCHRONIZATION_INVALID_VALUE),
     * in real time, and records the synchronisation. */
    void (*synchronize)(CUpti_ActivitySynchronizationType type, uint32_t stream_id);
    /* Graphs and stream capture (double_graph.h), and a runtime graph launch: the driver nests
     * cuGraphLaunch under it and plays the executable graph's nodes on the stream. */
    const struct ctg_ops *graphs;
    int (*graph_launch)(struct CUgraphExec_st *exec, CUstream stream);
};

/* The driver double's table, from a dlopen handle of libcuda.so.1; NULL for any other driver. */
static inline const struct ct_gpu_table *ct_gpu_table_of(void *libcuda)
{
    CUresult (*get_table)(const void **, const CUuuid *) = NULL;
    if (libcuda)
        *(void **)&get_table = dlsym(libcuda, "cuGetExportTable");
    const void *table = NULL;
    const CUuuid id = CT_GPU_TABLE_ID;
    if (!get_table || get_table(&table, &id) != CUDA_SUCCESS)
        return NULL;
    const struct ct_gpu_table *ours = table;
    return ours->size >= sizeof *ours ? ours : NULL;
}

#endif
