/*
 * CUPTI's callbacks on the runtime and driver domains: the calls the hooks
 * cannot see, and the correlation ids of those they can. Callbacks are
 * enabled only for the functions cudatrace names (functions.h) that make,
 * wait for or hold GPU work and memory, found by CUPTI's own names for its
 * callback ids, so a program's thousands of cuCtxGetCurrent or
 * cudaGetLastError calls cost nothing. The preload's own queries are not
 * the program's and are skipped. A call is recorded once: inside a
 * hooked call (ct_cupti_in_hook) a callback only notes CUPTI's correlation
 * id for the hook to send; outside, the outermost call is recorded (a
 * static runtime's cudaLaunchKernel, or a driver cuLaunchKernel from Triton)
 * and what it calls underneath is not. Its arguments are read from CUPTI's
 * parameter structures into the layout of the function's family. A driver
 * call's per-thread-default-stream variant (cuLaunchKernel_ptsz,
 * cuMemcpyHtoD_v2_ptds: what code built with --default-stream per-thread
 * calls, and what cuGetProcAddress hands out for it) has its own callback id
 * and is recorded as its plain function.
 */
#include <string.h>

#include "preload/sites/call_site.h"
#include "preload/core/capture.h"
#include "preload/core/clock.h"
#include "preload/cupti/gpu_trace.h"
#include "preload/cupti/api.h"
#include "preload/cupti/internal.h"
#include "preload/hooks/kernel_names.h"

__thread uint32_t ct_cupti_correlation CT_TLS;
__thread uint32_t ct_cupti_in_hook CT_TLS;
__thread uint32_t ct_cupti_own_calls CT_TLS;

#define CALLBACK_IDS 2048

/* Callback id -> function id + 1 (0: not ours), per domain. */
static uint16_t runtime_functions[CALLBACK_IDS], driver_functions[CALLBACK_IDS];

/* The outermost call this thread is in that only CUPTI sees. */
struct unseen_call {
    uint32_t depth;
    uint16_t func;
    uint32_t correlation;
    uint64_t begin;
};
static __thread struct unseen_call unseen CT_TLS;

/* The ids of the calls made inside the call a correlation is for, when they
 * differ from its own: CUPTI may give each API call an id of its own, and
 * which one a GPU record carries depends on its kind (a memset's is "the
 * correlation ID in the driver API activity record that launched the memory
 * set"; a kernel's that of "the driver or runtime API activity record"). */
#define NESTED_IDS 3
static __thread struct {
    uint32_t ids[NESTED_IDS];
    uint32_t count;
} nested CT_TLS;

static void note_nested(uint32_t outer, uint32_t id)
{
    for (uint32_t i = 0; i < nested.count; i++)
        if (nested.ids[i] == id)
            return;
    if (id != outer && nested.count < NESTED_IDS)
        nested.ids[nested.count++] = id;
}

/* "cudaMalloc" from CUPTI's "cudaMalloc_v3020". */
static size_t runtime_name_length(const char *name)
{
    const char *v = strrchr(name, '_');
    if (v && v[1] == 'v' && v[2] && strspn(v + 2, "0123456789") == strlen(v + 2))
        return (size_t)(v - name);
    return strlen(name);
}

/* "cuLaunchKernel" from "cuLaunchKernel_ptsz", "cuMemcpyHtoD_v2" from
 * "cuMemcpyHtoD_v2_ptds": cuda.h names the variants __CUDA_API_PTSZ(api)
 * and __CUDA_API_PTDS(api), "api ## _ptsz" and "api ## _ptds". */
static size_t driver_name_length(const char *name)
{
    size_t length = strlen(name);
    if (length > 5 &&
        (strcmp(name + length - 5, "_ptsz") == 0 || strcmp(name + length - 5, "_ptds") == 0))
        return length - 5;
    return length;
}

static int function_named(const char *name, size_t length, int driver)
{
    int first = driver ? CT_FN_FIRST_DRIVER : 0, last = driver ? CT_FN_COUNT : CT_FN_FIRST_DRIVER;
    for (int fn = first; fn < last; fn++) {
        const char *ours = ct_function_name(fn);
        if (strlen(ours) == length && strncmp(ours, name, length) == 0)
            return fn;
    }
    return -1;
}

/* Whether calls of `fn` are worth a callback: what makes or waits for GPU
 * work, holds memory or builds graphs. The queries (cudaGetDevice, cudaGetLastError,
 * cudaStreamQuery, ...) are a framework's most frequent calls; the hooks
 * record them, and a static runtime's would tell nothing. */
static int worth_a_callback(int fn)
{
    enum ct_family family = ct_function_family((unsigned)fn);
    return family <= CT_FAMILY_SYNC_EVENT || family == CT_FAMILY_VMM ||
           family == CT_FAMILY_GRAPH_BUILD;
}

static void enable_domain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                          uint16_t *functions)
{
    int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    for (uint32_t cbid = 1; cbid < CALLBACK_IDS; cbid++) {
        const char *name = NULL;
        if (ct_cupti.get_callback_name(domain, cbid, &name) != CUPTI_SUCCESS || !name)
            continue;
        int fn = function_named(name, driver ? driver_name_length(name) : runtime_name_length(name),
                                driver);
        if (fn >= 0 && worth_a_callback(fn) &&
            ct_cupti.enable_callback(1, subscriber, domain, cbid) == CUPTI_SUCCESS)
            functions[cbid] = (uint16_t)(fn + 1);
    }
}

void ct_cupti_callbacks_enable(CUpti_SubscriberHandle subscriber)
{
    enable_domain(subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_functions);
    enable_domain(subscriber, CUPTI_CB_DOMAIN_DRIVER_API, driver_functions);
}

int ct_cupti_makes_gpu_work(uint16_t func)
{
    switch (ct_function_family(func)) {
    case CT_FAMILY_LAUNCH:
    case CT_FAMILY_GRAPH:
    case CT_FAMILY_COPY:
    case CT_FAMILY_SET:
        return 1;
    default:
        return 0;
    }
}

void ct_cupti_emit_correlation(uint64_t begin, uint16_t func)
{
    uint32_t id = ct_cupti_correlation, count = nested.count;
    ct_cupti_correlation = 0;
    nested.count = 0;
    struct ct_ring *ring = ct_ring_current();
    if (!ring || !ct_cupti_makes_gpu_work(func) || !ct_capture_recording())
        return; /* outside a capture window its call leaves no record to tie */
    struct ct_record r = {.type = CT_REC_CORRELATION, .begin = begin, .end = begin, .arg = {id}};
    for (uint32_t i = 0; i < count; i++)
        r.arg[1 + i] = nested.ids[i];
    ct_emit_record(ring, &r, ct_function_is_kept(func));
}

static uint64_t out_value(const void *out, int ok)
{
    return ok && out ? *(const uint64_t *)out : 0;
}

/* cudaMemcpyKind of a driver copy, from its name. */
enum { HOST_TO_DEVICE = 1, DEVICE_TO_HOST = 2, DEVICE_TO_DEVICE = 3, DEFAULT = 4 };

#define PARAMS(type) const type *p = data->functionParams

/* The runtime functions whose parameters are read: what a static runtime
 * inside a library (cuBLAS, cuDNN) calls most. Others keep their name and
 * times, with no arguments. */
static void runtime_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, int ok, uint64_t *a)
{
    switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
        PARAMS(cudaLaunchKernel_v7000_params);
        a[0] = (uintptr_t)p->func, a[1] = (uintptr_t)p->stream;
        a[2] = ct_pack_dim3(p->gridDim.x, p->gridDim.y, p->gridDim.z);
        a[3] = ct_pack_dim3(p->blockDim.x, p->blockDim.y, p->blockDim.z), a[4] = p->sharedMem;
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
        PARAMS(cudaMalloc_v3020_params);
        a[0] = out_value(p->devPtr, ok), a[1] = p->size;
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: {
        PARAMS(cudaFree_v3020_params);
        a[0] = (uintptr_t)p->devPtr;
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020: {
        PARAMS(cudaMemcpy_v3020_params);
        a[0] = (uintptr_t)p->dst, a[1] = p->count, a[3] = (uint64_t)p->kind;
        a[4] = (uintptr_t)p->src;
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: {
        PARAMS(cudaMemcpyAsync_v3020_params);
        a[0] = (uintptr_t)p->dst, a[1] = p->count, a[2] = (uintptr_t)p->stream;
        a[3] = (uint64_t)p->kind, a[4] = (uintptr_t)p->src;
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: {
        PARAMS(cudaMemsetAsync_v3020_params);
        a[0] = (uintptr_t)p->devPtr, a[1] = p->count, a[2] = (uintptr_t)p->stream;
        a[3] = (uint64_t)(uint32_t)p->value;
        break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020: {
        PARAMS(cudaStreamSynchronize_v3020_params);
        a[0] = (uintptr_t)p->stream;
        break;
    }
    default:
        break;
    }
}

static void launch_args(CUfunction f, const unsigned *grid, const unsigned *block, unsigned smem,
                        CUstream stream, uint64_t *a)
{
    a[0] = (uintptr_t)f, a[1] = (uintptr_t)stream;
    a[2] = ct_pack_dim3(grid[0], grid[1], grid[2]);
    a[3] = ct_pack_dim3(block[0], block[1], block[2]), a[4] = smem;
}

static void copy_args(uint64_t dst, uint64_t src, size_t bytes, CUstream stream, int kind,
                      uint64_t *a)
{
    a[0] = dst, a[1] = bytes, a[2] = (uintptr_t)stream, a[3] = (uint64_t)kind, a[4] = src;
}

static void set_args(CUdeviceptr ptr, size_t bytes, CUstream stream, unsigned value, uint64_t *a)
{
    a[0] = ptr, a[1] = bytes, a[2] = (uintptr_t)stream, a[3] = value;
}

static void driver_launch_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, uint64_t *a)
{
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
        PARAMS(cuLaunchKernelEx_params);
        const CUlaunchConfig *c = p->config;
        if (c)
            launch_args(p->f, &c->gridDimX, &c->blockDimX, c->sharedMemBytes, c->hStream, a);
        else
            a[0] = (uintptr_t)p->f;
    } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel) {
        PARAMS(cuLaunchCooperativeKernel_params);
        launch_args(p->f, &p->gridDimX, &p->blockDimX, p->sharedMemBytes, p->hStream, a);
    } else {
        PARAMS(cuLaunchKernel_params);
        launch_args(p->f, &p->gridDimX, &p->blockDimX, p->sharedMemBytes, p->hStream, a);
    }
}

static void driver_memory_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, int ok,
                               uint64_t *a)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: { /* dptr and bytesize lead both */
        PARAMS(cuMemAlloc_v2_params);
        a[0] = out_value(p->dptr, ok), a[1] = p->bytesize;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
        PARAMS(cuMemAllocPitch_v2_params);
        a[0] = out_value(p->dptr, ok), a[1] = out_value(p->pPitch, ok) * p->Height;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync: {
        PARAMS(cuMemAllocAsync_params);
        a[0] = out_value(p->dptr, ok), a[1] = p->bytesize, a[2] = (uintptr_t)p->hStream;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2: {
        PARAMS(cuMemFree_v2_params);
        a[0] = p->dptr;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync: {
        PARAMS(cuMemFreeAsync_params);
        a[0] = p->dptr, a[2] = (uintptr_t)p->hStream;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc: { /* pp and bytesize lead both */
        PARAMS(cuMemHostAlloc_params);
        a[0] = out_value(p->pp, ok), a[1] = p->bytesize;
        a[2] = cbid == CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc ? p->Flags : 0;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost: {
        PARAMS(cuMemFreeHost_params);
        a[0] = (uintptr_t)p->p;
        break;
    }
    default:
        break;
    }
}

static void driver_copy_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, uint64_t *a)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpy:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync: {
        PARAMS(cuMemcpyAsync_params);
        copy_args(p->dst, p->src, p->ByteCount,
                  cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync ? p->hStream : NULL, DEFAULT, a);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2: {
        PARAMS(cuMemcpyHtoDAsync_v2_params);
        copy_args(p->dstDevice, (uintptr_t)p->srcHost, p->ByteCount,
                  cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2 ? p->hStream : NULL,
                  HOST_TO_DEVICE, a);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2: {
        PARAMS(cuMemcpyDtoHAsync_v2_params);
        copy_args((uintptr_t)p->dstHost, p->srcDevice, p->ByteCount,
                  cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2 ? p->hStream : NULL,
                  DEVICE_TO_HOST, a);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2: {
        PARAMS(cuMemcpyDtoDAsync_v2_params);
        copy_args(p->dstDevice, p->srcDevice, p->ByteCount,
                  cbid == CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2 ? p->hStream : NULL,
                  DEVICE_TO_DEVICE, a);
        break;
    }
    default:
        break;
    }
}

static void driver_set_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, uint64_t *a)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async: {
        PARAMS(cuMemsetD8Async_params);
        set_args(p->dstDevice, p->N,
                 cbid == CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async ? p->hStream : NULL, p->uc, a);
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async: {
        PARAMS(cuMemsetD32Async_params);
        set_args(p->dstDevice, p->N * 4,
                 cbid == CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async ? p->hStream : NULL, p->ui, a);
        break;
    }
    default:
        break;
    }
}

/* The virtual-memory API, by which allocators (PyTorch's expandable
 * segments, NCCL's buffers) hold memory no cudaMalloc shows. */
static void driver_vmm_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, int ok,
                            uint64_t *a)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
        PARAMS(cuMemCreate_params);
        a[1] = p->size, a[2] = out_value(p->handle, ok);
        a[3] = p->prop ? (uint64_t)p->prop->location.id : 0;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease: {
        PARAMS(cuMemRelease_params);
        a[2] = p->handle;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve: {
        PARAMS(cuMemAddressReserve_params);
        a[0] = out_value(p->ptr, ok), a[1] = p->size;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
        PARAMS(cuMemMap_params);
        a[0] = p->ptr, a[1] = p->size, a[2] = p->handle, a[3] = p->offset;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree:
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: { /* ptr and size lead both */
        PARAMS(cuMemUnmap_params);
        a[0] = p->ptr, a[1] = p->size;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemSetAccess: {
        PARAMS(cuMemSetAccess_params);
        a[0] = p->ptr, a[1] = p->size, a[4] = p->count;
        break;
    }
    default:
        break;
    }
}

static void driver_sync_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, uint64_t *a)
{
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize) {
        PARAMS(cuStreamSynchronize_params);
        a[0] = (uintptr_t)p->hStream;
    } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize) {
        PARAMS(cuEventSynchronize_params);
        a[0] = (uintptr_t)p->hEvent;
    } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) {
        PARAMS(cuGraphLaunch_params);
        a[0] = (uintptr_t)p->hGraph, a[1] = (uintptr_t)p->hStream;
    }
}

/* Graph building through the driver (CT_FAMILY_GRAPH_BUILD's layout). */
static void driver_graph_args(CUpti_CallbackId cbid, const CUpti_CallbackData *data, int ok,
                              uint64_t *a)
{
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2: {
        PARAMS(cuStreamBeginCapture_v2_params);
        a[1] = (uintptr_t)p->hStream, a[3] = (uint64_t)p->mode;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture: {
        PARAMS(cuStreamEndCapture_params);
        a[0] = ok && p->phGraph ? (uintptr_t)*p->phGraph : 0, a[1] = (uintptr_t)p->hStream;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags: {
        PARAMS(cuGraphInstantiateWithFlags_params);
        a[0] = (uintptr_t)p->hGraph, a[3] = p->flags;
        a[2] = ok && p->phGraphExec ? (uintptr_t)*p->phGraphExec : 0;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphUpload: {
        PARAMS(cuGraphUpload_params);
        a[1] = (uintptr_t)p->hStream, a[2] = (uintptr_t)p->hGraph;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy: {
        PARAMS(cuGraphExecDestroy_params);
        a[2] = (uintptr_t)p->hGraphExec;
        break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy: {
        PARAMS(cuGraphDestroy_params);
        a[0] = (uintptr_t)p->hGraph;
        break;
    }
    default:
        break;
    }
}

/* The per-thread-default-stream variants of the driver calls whose
 * parameters are read, each with its plain call: generated_cuda_meta.h gives
 * a variant's parameter structure the plain one's fields, in its order. */
#define PER_THREAD_VARIANTS(X)                                                                     \
    X(cuLaunchKernel_ptsz, cuLaunchKernel)                                                         \
    X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx)                                                     \
    X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel)                                   \
    X(cuGraphLaunch_ptsz, cuGraphLaunch)                                                           \
    X(cuMemAllocAsync_ptsz, cuMemAllocAsync)                                                       \
    X(cuMemFreeAsync_ptsz, cuMemFreeAsync)                                                         \
    X(cuMemcpy_ptds, cuMemcpy)                                                                     \
    X(cuMemcpyAsync_ptsz, cuMemcpyAsync)                                                           \
    X(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2)                                                       \
    X(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2)                                                       \
    X(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2)                                                       \
    X(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2)                                             \
    X(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2)                                             \
    X(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2)                                             \
    X(cuMemsetD8_v2_ptds, cuMemsetD8_v2)                                                           \
    X(cuMemsetD8Async_ptsz, cuMemsetD8Async)                                                       \
    X(cuMemsetD32_v2_ptds, cuMemsetD32_v2)                                                         \
    X(cuMemsetD32Async_ptsz, cuMemsetD32Async)                                                     \
    X(cuStreamSynchronize_ptsz, cuStreamSynchronize)                                               \
    X(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2)                                       \
    X(cuStreamEndCapture_ptsz, cuStreamEndCapture)                                                 \
    X(cuGraphUpload_ptsz, cuGraphUpload)

#define SAME_FIELDS(variant, plain)                                                                \
    _Static_assert(sizeof(variant##_params) == sizeof(plain##_params), #variant);
PER_THREAD_VARIANTS(SAME_FIELDS)
#undef SAME_FIELDS

/* The plain call's id for a per-thread variant's, so that one reading of
 * the parameters serves both. */
static CUpti_CallbackId plain_driver_cbid(CUpti_CallbackId cbid)
{
    switch (cbid) {
#define AS_CASE(variant, plain)                                                                    \
    case CUPTI_DRIVER_TRACE_CBID_##variant:                                                        \
        return CUPTI_DRIVER_TRACE_CBID_##plain;
        PER_THREAD_VARIANTS(AS_CASE)
#undef AS_CASE
    default:
        return cbid;
    }
}

/* The call's record arguments; the parameters are only read where CUPTI
 * gave them (a NULL functionParams leaves the arguments 0). */
static void call_args(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint16_t func,
                      const CUpti_CallbackData *data, int ok, uint64_t *a)
{
    if (!data->functionParams)
        return;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        runtime_args(cbid, data, ok, a);
        return;
    }
    cbid = plain_driver_cbid(cbid);
    switch (ct_function_family(func)) {
    case CT_FAMILY_LAUNCH:
        driver_launch_args(cbid, data, a);
        break;
    case CT_FAMILY_COPY:
        driver_copy_args(cbid, data, a);
        break;
    case CT_FAMILY_SET:
        driver_set_args(cbid, data, a);
        break;
    case CT_FAMILY_ALLOC_DEVICE:
    case CT_FAMILY_ALLOC_HOST:
    case CT_FAMILY_FREE_DEVICE:
    case CT_FAMILY_FREE_HOST:
        driver_memory_args(cbid, data, ok, a);
        break;
    case CT_FAMILY_VMM:
        driver_vmm_args(cbid, data, ok, a);
        break;
    case CT_FAMILY_GRAPH_BUILD:
        driver_graph_args(cbid, data, ok, a);
        break;
    default:
        driver_sync_args(cbid, data, a);
        break;
    }
}

static int32_t return_value(const CUpti_CallbackData *data)
{
    return data->functionReturnValue ? *(const int32_t *)data->functionReturnValue : 0;
}

static void record_unseen(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const CUpti_CallbackData *data)
{
    uint64_t end = ct_clock_now();
    int32_t result = return_value(data);
    uint64_t a[CT_RECORD_ARGS] = {0};
    call_args(domain, cbid, unseen.func, data, result == 0, a);
    struct ct_ring *ring = ct_ring_current();
    if (!ring)
        return;
    if (ct_function_family(unseen.func) == CT_FAMILY_LAUNCH && a[0] && data->symbolName)
        ct_kernel_name_once(ring, CT_STR_KERNEL_NAME, a[0], data->symbolName);
    if (ct_call_site_due(unseen.func, result, unseen.begin))
        ct_call_site_capture(unseen.begin, NULL, ct_function_is_kept(unseen.func));
    ct_cupti_correlation = unseen.correlation;
    ct_cupti_emit_correlation(unseen.begin, unseen.func);
    ct_emit_typed_call(CT_REC_CUPTI_CALL, unseen.func, unseen.begin, end, result, a[0], a[1], a[2],
                       a[3], a[4]);
}

uint64_t ct_cupti_call_begin(void)
{
    struct ct_ring *ring = ct_thread_ring;
    uint64_t begin = ct_cupti_in_hook && ring ? ring->inflight_begin : 0;
    if (!begin && unseen.depth)
        begin = unseen.begin;
    return begin ? begin : ct_clock_now();
}

void CUPTIAPI ct_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void *callback_data)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        if (!ct_cupti_own_calls)
            ct_cupti_graph_event(cbid, callback_data);
        return;
    }
    const uint16_t *functions = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? runtime_functions
                                : domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_functions
                                                                       : NULL;
    if (!functions || cbid >= CALLBACK_IDS || !functions[cbid] || ct_cupti_own_calls)
        return;
    const CUpti_CallbackData *data = callback_data;
    int entering = data->callbackSite == CUPTI_API_ENTER;
    if (ct_cupti_in_hook) {
        /* The outermost call's id first, then those of the calls inside it. */
        if (entering && !ct_cupti_correlation) {
            ct_cupti_correlation = data->correlationId;
            nested.count = 0;
        } else if (entering) {
            note_nested(ct_cupti_correlation, data->correlationId);
        }
        return;
    }
    if (entering) {
        if (unseen.depth++ == 0) {
            unseen = (struct unseen_call){1, (uint16_t)(functions[cbid] - 1), data->correlationId,
                                          ct_clock_now()};
            nested.count = 0;
        } else {
            note_nested(unseen.correlation, data->correlationId);
        }
        return;
    }
    if (unseen.depth && --unseen.depth == 0)
        record_unseen(domain, cbid, data);
}
