/*
 * CUPTI's activity records, the GPU's work as it ran: kernels, copies,
 * memsets, memory operations, synchronisations and CUPTI's own overhead.
 * CUPTI fills buffers from a bounded pool (16 of 4 MiB, made as needed);
 * with none free it drops records and counts them, and that count is read
 * after every buffer and sent on. The buffers come from malloc, so that a
 * tool that takes CUPTI over and is handed one of ours (CUPTI promises
 * nothing of the buffers lent before it registered) may free it as its
 * own; only buffers handed back to us return to the pool. A completed
 * buffer (when flusher.c asks, when full, and at exit) becomes CT_REC_GPU
 * records on the ring of the thread CUPTI hands it to, after a reading of
 * CUPTI's clock against ours, which is how the collector puts GPU times on
 * the trace's clock. A record that gives no time is never sent as one:
 * reading a buffer stops at a record "either incomplete or invalid", as
 * cuptiActivityGetNextRecord says, and a start or end of 0 means the time
 * "could not be collected"; both are counted (CT_CUPTI_UNREAD).
 * Records are read only up to the fields every CUPTI since CUDA 12 lays out
 * at the same offsets (the toolkit's newest structures name them).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "preload/core/clock.h"
#include "preload/core/config.h"
#include "preload/cupti/api.h"
#include "preload/cupti/internal.h"
#include "preload/hooks/kernel_names.h"
#include "preload/core/ring.h"

#define BUFFER_BYTES (4u << 20)
#define BUFFERS 16
#define FLUSH_PERIOD_MS 100
#define RECORD_ALIGNMENT 8 /* cuptiActivityGetNextRecord's records sit on 8-byte boundaries */

static struct {
    pthread_mutex_t lock;
    uint8_t *free[BUFFERS];
    int free_count, made;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Atomic uint64_t dropped_total, cut_short_total, untimed_total, work_total;

/* CUpti_ActivityMemcpy6, with copyCount, came with CUDA 12.8 (CUPTI API
 * version 26: "Structure deprecated in CUDA 12.8: Refer to
 * CUpti_ActivityMemcpy6"); an older CUPTI's copy record ends before it. */
#define COPY_COUNT_SINCE 26
static int copy_count_laid_out;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint8_t *b = NULL;
    pthread_mutex_lock(&pool.lock);
    if (pool.free_count)
        b = pool.free[--pool.free_count];
    else if (pool.made < BUFFERS && (b = aligned_alloc(RECORD_ALIGNMENT, BUFFER_BYTES)))
        pool.made++;
    pthread_mutex_unlock(&pool.lock);
    *buffer = b;
    *size = b ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void give_back(uint8_t *buffer)
{
    pthread_mutex_lock(&pool.lock);
    if (pool.free_count < BUFFERS)
        pool.free[pool.free_count++] = buffer;
    pthread_mutex_unlock(&pool.lock);
}

/* The graph node and graph a kernel, copy or set a graph launch ran from,
 * sent ahead of its record: "The unique ID of the graph node that launched
 * this kernel through graph launch APIs. This field will be 0 if the kernel
 * is not launched through graph launch APIs." (likewise for copies, sets and
 * graphId). */
static void graph_ids(struct ct_record *ids, uint64_t node, uint32_t graph)
{
    ids->arg[1] = node;
    ids->arg[2] = graph;
}

static void kernel(struct ct_ring *ring, const CUpti_ActivityKernel10 *k, struct ct_record *r,
                   struct ct_record *ids)
{
    graph_ids(ids, k->graphNodeId, k->graphId);
    uint64_t name = (uintptr_t)k->name;
    if (k->name)
        ct_kernel_name_once(ring, CT_STR_GPU_KERNEL_NAME, name, k->name);
    r->func = CT_GPU_KERNEL;
    r->result = (int32_t)k->deviceId;
    r->begin = k->start;
    r->end = k->end;
    r->arg[0] = ct_pack_gpu_ids(k->correlationId, k->streamId);
    r->arg[1] = name;
    r->arg[2] = ct_pack_dim3((uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ);
    r->arg[3] = ct_pack_dim3((uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ);
    r->arg[4] = ct_pack_kernel_resources(k->registersPerThread, (uint32_t)k->staticSharedMemory,
                                         (uint32_t)k->dynamicSharedMemory);
}

/* A copy's record carries the driver call's id and, when a runtime call
 * made it, that call's too: the one a hooked call noted (callbacks.c
 * keeps the outermost). */
static void memcpy_record(const CUpti_ActivityMemcpy6 *m, struct ct_record *r,
                          struct ct_record *ids)
{
    graph_ids(ids, m->graphNodeId, m->graphId);
    uint32_t correlation = m->runtimeCorrelationId ? m->runtimeCorrelationId : m->correlationId;
    r->func = CT_GPU_MEMCPY;
    r->result = (int32_t)m->deviceId;
    r->begin = m->start;
    r->end = m->end;
    r->arg[0] = ct_pack_gpu_ids(correlation, m->streamId);
    r->arg[1] = m->bytes;
    r->arg[2] = ct_pack_copy_kinds(m->copyKind, m->srcKind, m->dstKind);
    r->arg[3] = copy_count_laid_out ? m->copyCount : 1; /* a batch's copies; else 1 */
}

static void memset_record(const CUpti_ActivityMemset4 *m, struct ct_record *r,
                          struct ct_record *ids)
{
    graph_ids(ids, m->graphNodeId, m->graphId);
    r->func = CT_GPU_MEMSET;
    r->result = (int32_t)m->deviceId;
    r->begin = m->start;
    r->end = m->end;
    r->arg[0] = ct_pack_gpu_ids(m->correlationId, m->streamId);
    r->arg[1] = m->bytes;
    r->arg[2] = m->value;
}

/* No device in CUPTI's record: the context stands in for it. */
static void sync_record(const CUpti_ActivitySynchronization2 *s, struct ct_record *r)
{
    r->func = CT_GPU_SYNC;
    r->result = (int32_t)s->contextId;
    r->begin = s->start;
    r->end = s->end;
    r->arg[0] = ct_pack_gpu_ids(s->correlationId, s->streamId);
    r->arg[2] = (uint64_t)s->type;
}

static void memory_record(const CUpti_ActivityMemory4 *m, struct ct_record *r)
{
    r->func = CT_GPU_MEMORY;
    r->result = (int32_t)m->deviceId;
    r->begin = r->end = m->timestamp;
    r->arg[0] = ct_pack_gpu_ids(m->correlationId, m->streamId);
    r->arg[1] = m->bytes;
    r->arg[2] = (uint64_t)m->memoryOperationType;
    r->arg[3] = m->address;
}

/* A whole graph launch, under graph-level tracing: "This activity record
 * represents execution for a graph without giving visibility about the
 * execution of its nodes." Its correlation id is "identical to the
 * correlation ID in the driver API activity record that launched the
 * graph": the hooked launch noted it among the ids of the calls inside it. */
static void graph_record(const CUpti_ActivityGraphTrace2 *g, struct ct_record *r)
{
    r->func = CT_GPU_GRAPH;
    r->result = (int32_t)g->deviceId;
    r->begin = g->start;
    r->end = g->end;
    r->arg[0] = ct_pack_gpu_ids(g->correlationId, g->streamId);
    r->arg[2] = g->graphId;
}

static void overhead_record(const CUpti_ActivityOverhead3 *o, struct ct_record *r)
{
    r->func = CT_GPU_OVERHEAD;
    r->begin = o->start;
    r->end = o->end;
    r->arg[2] = (uint64_t)o->overheadKind;
}

/* Sends one record; 0 when it gives no time ("A value of 0 for both the start
 * and end timestamps indicates that timestamp information could not be
 * collected"), which is counted instead, and -1 for a kind not traced. */
static int convert(struct ct_ring *ring, const CUpti_Activity *a)
{
    struct ct_record r = {.type = CT_REC_GPU};
    struct ct_record ids = {.type = CT_REC_GPU, .func = CT_GPU_GRAPH_IDS};
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        kernel(ring, (const CUpti_ActivityKernel10 *)a, &r, &ids);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        memcpy_record((const CUpti_ActivityMemcpy6 *)a, &r, &ids);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        memset_record((const CUpti_ActivityMemset4 *)a, &r, &ids);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        sync_record((const CUpti_ActivitySynchronization2 *)a, &r);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        memory_record((const CUpti_ActivityMemory4 *)a, &r);
        break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        overhead_record((const CUpti_ActivityOverhead3 *)a, &r);
        break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        graph_record((const CUpti_ActivityGraphTrace2 *)a, &r);
        break;
    default:
        return -1;
    }
    if (!r.begin || !r.end)
        return 0;
    if (ids.arg[1] || ids.arg[2])
        ct_emit_record(ring, &ids, 1);
    ct_emit_record(ring, &r, 1);
    return 1;
}

static int is_work(const CUpti_Activity *a)
{
    return a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
           a->kind == CUPTI_ACTIVITY_KIND_KERNEL || a->kind == CUPTI_ACTIVITY_KIND_MEMCPY ||
           a->kind == CUPTI_ACTIVITY_KIND_MEMSET || a->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
}

/* Says how many records so far gave no time, when a buffer added some. */
static void note_unread(uint64_t cut_short, uint64_t untimed)
{
    if (!cut_short && !untimed)
        return;
    struct ct_record r = {.type = CT_REC_CUPTI_STATE, .func = CT_CUPTI_UNREAD};
    r.arg[1] = atomic_fetch_add(&cut_short_total, cut_short) + cut_short;
    r.arg[2] = atomic_fetch_add(&untimed_total, untimed) + untimed;
    struct ct_ring *ring = ct_ring_current();
    if (ring) {
        r.begin = r.end = ct_clock_now();
        ct_emit_record(ring, &r, 1);
    }
}

static void note_dropped(CUcontext context, uint32_t stream)
{
    size_t dropped = 0;
    if (ct_cupti.activity_get_num_dropped_records(context, stream, &dropped) != CUPTI_SUCCESS ||
        !dropped)
        return;
    uint64_t total = atomic_fetch_add(&dropped_total, dropped) + dropped;
    ct_cupti_note_state(CT_CUPTI_DROPPED, 0, total, NULL);
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)size;
    struct ct_ring *ring = ct_ring_current();
    CUpti_Activity *record = NULL;
    /* The reading goes first: on this ring, the collector then always has
     * one before the records it maps. */
    ct_cupti_clock_sample();
    CUptiResult status = CUPTI_ERROR_MAX_LIMIT_REACHED;
    uint64_t untimed = 0, work = 0;
    while (ring &&
           (status = ct_cupti.activity_get_next_record(buffer, valid, &record)) == CUPTI_SUCCESS) {
        untimed += convert(ring, record) == 0;
        work += is_work(record);
    }
    atomic_fetch_add(&work_total, work);
    note_unread(ring && status == CUPTI_ERROR_INVALID_KIND, untimed);
    note_dropped(context, stream);
    if (buffer)
        give_back(buffer);
}

/* Kernels first: they are required, the others are left out where an
 * older CUPTI lacks them. */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};

/* CUPTI's times on CLOCK_BOOTTIME, which nothing steps: by default they are
 * CLOCK_REALTIME's (cuptiActivityRegisterTimestampCallback), which NTP or a
 * VM's time sync may step between a record and the reading of CUPTI's clock
 * that maps it, moving GPU work against the calls that made it. */
static uint64_t CUPTIAPI timestamp_ns(void)
{
    return ct_clock_boottime_ns();
}

int ct_cupti_activity_enable(char *why, size_t why_size)
{
    uint32_t version = 0;
    ct_cupti.get_version(&version);
    copy_count_laid_out = version >= COPY_COUNT_SINCE;
    /* "should be done before any of the CUPTI activity kinds are enabled" */
    if (ct_cupti.activity_register_timestamp_callback)
        ct_cupti.activity_register_timestamp_callback(timestamp_ns);
    CUptiResult r = ct_cupti.activity_register_callbacks(buffer_requested, buffer_completed);
    if (r == CUPTI_SUCCESS)
        r = ct_cupti.activity_enable(kinds[0]);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, why_size, "CUPTI's activity API: %s", ct_cupti_result_name(r));
        return -1;
    }
    for (size_t i = 1; i < sizeof kinds / sizeof kinds[0]; i++)
        ct_cupti.activity_enable(kinds[i]);
    if (ct_config.graph_level) /* CUDATRACE_GPU_GRAPHS=graphs (docs/gpu.md) */
        ct_cupti.activity_enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    if (ct_cupti.activity_flush_period)
        ct_cupti.activity_flush_period(FLUSH_PERIOD_MS);
    return 0;
}

void ct_cupti_activity_disable(void)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        ct_cupti.activity_disable(kinds[i]);
    if (ct_config.graph_level)
        ct_cupti.activity_disable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
}

void ct_cupti_clock_sample(void)
{
    struct ct_ring *ring = ct_ring_current();
    if (!ring)
        return;
    /* The tightest of three brackets bounds the reading's error best. */
    struct ct_record best = {.type = CT_REC_GPU_CLOCK, .end = UINT64_MAX};
    for (int i = 0; i < 3; i++) {
        uint64_t cupti = 0, before = ct_clock_now();
        CUptiResult r = ct_cupti.get_timestamp(&cupti);
        uint64_t after = ct_clock_now();
        if (r == CUPTI_SUCCESS && after - before < best.end - best.begin)
            best.begin = before, best.end = after, best.arg[0] = cupti;
    }
    if (best.arg[0])
        ct_emit_record(ring, &best, 1);
}

uint64_t ct_cupti_activity_work_records(void)
{
    return atomic_load(&work_total);
}

void ct_cupti_activity_forget_in_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    atomic_store(&dropped_total, 0);
    atomic_store(&cut_short_total, 0);
    atomic_store(&untimed_total, 0);
    atomic_store(&work_total, 0);
}
