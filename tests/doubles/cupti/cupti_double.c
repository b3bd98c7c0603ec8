/*
 * A CPU stand-in for libcupti.so.13, for testing the tracer's CUPTI support without a GPU. It
 * owns the subscribers (one at a time, as CUPTI before CUDA 13.3 or driver r610 allows, or several
 * with CT_DOUBLE_CUPTI_MULTIPLE_SUBSCRIBERS=1, as later ones do; CT_DOUBLE_CUPTI_TAKEN=1 plays
 * another profiler holding CUPTI), which callbacks each enabled, which activity kinds are enabled,
 * the activity buffers the client hands it (records laid out with the toolkit's current structures,
 * full buffers delivered from its own worker thread, flushes on demand and every
 * cuptiActivityFlushPeriod), record dropping (CT_DOUBLE_CUPTI_DROP_EVERY=N drops every Nth GPU
 * record) and the ground truth written to CT_DOUBLE_CUPTI_STATS. The calls and the work come from
 * the driver double, which it attaches to through cuGetExportTable (double_gpu.h) as the real CUPTI
 * reaches its driver. No lock is held while the client's callbacks run, so they may call back into
 * CUPTI.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "tests/doubles/shared/cudart_apis.h"
#include "tests/doubles/shared/double_gpu.h"
#include "tests/doubles/shared/double_graph.h"
#include "tests/doubles/shared/double_util.h"

#define CUPTI_VERSION 130001
#define RECORD_ALIGNMENT 8
#define MAX_KERNEL_NAMES 256
#define MAX_SUBSCRIBERS 8

/* The results the double returns, named as the real cuptiGetResultString names them. */
#define RESULTS(X)                                                                                 \
    X(CUPTI_SUCCESS)                                                                               \
    X(CUPTI_ERROR_INVALID_PARAMETER)                                                               \
    X(CUPTI_ERROR_MAX_LIMIT_REACHED)                                                               \
    X(CUPTI_ERROR_NOT_INITIALIZED)                                                                 \
    X(CUPTI_ERROR_INVALID_KIND)                                                                    \
    X(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)                                              \
    X(CUPTI_ERROR_UNKNOWN)

/* The statistics file's record counters, in its order. */
#define STAT_KINDS(X)                                                                              \
    X(kernel)                                                                                      \
    X(memcpy)                                                                                      \
    X(memset)                                                                                      \
    X(memory)                                                                                      \
    X(synchronization)                                                                             \
    X(overhead)                                                                                    \
    X(graph)

// clang-format off
enum stat_kind {
#define AS_ENUM(name) STAT_##name,
    STAT_KINDS(AS_ENUM)
#undef AS_ENUM
    STAT_COUNT
};
// clang-format on

static const char *const stat_names[STAT_COUNT] = {
#define AS_NAME(name) #name,
    STAT_KINDS(AS_NAME)
#undef AS_NAME
};

static struct {
    bool taken;
    bool multiple_subscribers;
    uint64_t drop_every;
    /* CT_DOUBLE_CUPTI_LOSE_KERNEL=N: the Nth kernel never completes. Its record stays
     * incomplete, so the buffer that holds it is never handed back but by a forced flush. */
    uint64_t lose_kernel;
    /* CT_DOUBLE_CUPTI_INCOMPLETE: how a forced flush hands over a record not yet complete, as
     * cupti_activity.h allows either: "invalid" (the default), cuptiActivityGetNextRecord
     * answers CUPTI_ERROR_INVALID_KIND "if activity record is either incomplete or invalid";
     * "zero", its start and end are 0, "A value of 0 for both the start and end timestamps
     * indicates that timestamp information could not be collected". */
    bool incomplete_as_zero;
    /* CT_DOUBLE_CUPTI_PERIODIC: which buffers CUPTI's own worker hands back. "full" (the
     * default) is the most cuptiActivityFlushPeriod promises: "Periodic flush can return only
     * those activity buffers which are full and have all the activity records completed";
     * "partial" also hands back a partly filled one whose records are complete, every period,
     * which the text does not rule out for CUPTI's heuristics. */
    bool periodic_partial;
    /* CT_DOUBLE_CUPTI_UNTIMED_EVERY=N: every Nth kernel record is complete but has no times:
     * "Records of certain kinds like CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL may contain invalid
     * (0) timestamps, indicating that no timing information could be collected for lack of
     * device memory" (cuptiActivityGetNextRecord). */
    uint64_t untimed_every;
    /* CT_DOUBLE_CUPTI_LENT: what becomes of a buffer the client lent when another client
     * registers its callbacks, on which cupti_activity.h says nothing. "keep" (the default):
     * CUPTI asks for a buffer ahead of need after a forced flush, keeps it across a
     * registration and hands it, filled, to the new client ("After this call CUPTI
     * relinquished ownership of the buffer", CUpti_BuffersCallbackCompleteFunc); "return":
     * a registration first hands every lent buffer back to the client that lent it. */
    bool lent_returned;
    /* CT_DOUBLE_CUPTI_CLOCK_STEP=S:K: CLOCK_REALTIME steps S ns forward right after the Kth
     * kernel record, as NTP or a VM's time sync steps it. CUPTI's own timestamps follow it:
     * "By default CUPTI uses ... Linux (x86_64, aarch64 sbsa, aarch64) uses
     * clock_gettime(CLOCK_REALTIME)" (cuptiActivityRegisterTimestampCallback). */
    uint64_t clock_step_ns, clock_step_after;
    bool kernel_id_driver; /* CT_DOUBLE_CUPTI_KERNEL_ID=driver, see kernel_correlation */
    char *stats_path;
} knobs;

static bool word_is(const char *name, const char *word)
{
    const char *value = getenv(name);
    return value && strcmp(value, word) == 0;
}

__attribute__((constructor)) static void load_knobs(void)
{
    knobs.taken = knob_or("CT_DOUBLE_CUPTI_TAKEN", 0, 0) == 1;
    knobs.multiple_subscribers = knob_or("CT_DOUBLE_CUPTI_MULTIPLE_SUBSCRIBERS", 0, 0) == 1;
    knobs.drop_every = knob_or("CT_DOUBLE_CUPTI_DROP_EVERY", 0, 0);
    knobs.lose_kernel = knob_or("CT_DOUBLE_CUPTI_LOSE_KERNEL", 0, 0);
    knobs.incomplete_as_zero = word_is("CT_DOUBLE_CUPTI_INCOMPLETE", "zero");
    knobs.periodic_partial = word_is("CT_DOUBLE_CUPTI_PERIODIC", "partial");
    knobs.untimed_every = knob_or("CT_DOUBLE_CUPTI_UNTIMED_EVERY", 0, 0);
    knobs.lent_returned = word_is("CT_DOUBLE_CUPTI_LENT", "return");
    knobs.kernel_id_driver = word_is("CT_DOUBLE_CUPTI_KERNEL_ID", "driver");
    const char *step = getenv("CT_DOUBLE_CUPTI_CLOCK_STEP");
    if (step &&
        sscanf(step, "%" SCNu64 ":%" SCNu64, &knobs.clock_step_ns, &knobs.clock_step_after) != 2)
        knobs.clock_step_ns = 0;
    const char *path = getenv("CT_DOUBLE_CUPTI_STATS");
    if (path && path[0])
        knobs.stats_path = strdup(path);
}

static _Thread_local CUptiResult last_error = CUPTI_SUCCESS;

/* Every export returns through this, as the real CUPTI remembers its last failure. */
static CUptiResult result(CUptiResult rc)
{
    if (rc != CUPTI_SUCCESS)
        last_error = rc;
    return rc;
}

/* ---- ground truth ---------------------------------------------------------------------- */

static struct {
    atomic_ullong written[STAT_COUNT];
    atomic_ullong dropped_total;
    atomic_ullong incomplete;    /* records a forced flush handed over before they completed */
    atomic_ullong untimed;       /* complete records without timestamps */
    atomic_ullong dropped_since; /* since the last cuptiActivityGetNumDroppedRecords */
    atomic_ullong callbacks[2];  /* runtime, driver */
    atomic_ullong resource[CUPTI_CBID_RESOURCE_SIZE]; /* resource callbacks delivered, by cbid */
    atomic_ullong replayed[CT_WORK_MEMSET + 1];       /* records of graph-launched work, by kind */
    pthread_mutex_t names_lock;
    struct {
        const char *name; /* the driver's interned string, so pointers compare */
        unsigned long long count;
    } names[MAX_KERNEL_NAMES];
    int name_count;
} stats = {.names_lock = PTHREAD_MUTEX_INITIALIZER};

static void count_kernel_name(const char *name)
{
    pthread_mutex_lock(&stats.names_lock);
    int i = 0;
    while (i < stats.name_count && stats.names[i].name != name)
        i++;
    if (i == stats.name_count && i < MAX_KERNEL_NAMES)
        stats.names[stats.name_count++].name = name;
    if (i < MAX_KERNEL_NAMES)
        stats.names[i].count++;
    pthread_mutex_unlock(&stats.names_lock);
}

static void count_drop(void)
{
    atomic_fetch_add(&stats.dropped_total, 1);
    atomic_fetch_add(&stats.dropped_since, 1);
}

static void write_stats(void)
{
    FILE *out = knobs.stats_path ? fopen(knobs.stats_path, "w") : NULL;
    if (!out) {
        if (knobs.stats_path)
            fprintf(stderr, "cupti double: cannot write %s: %s\n", knobs.stats_path,
                    strerror(errno));
        return;
    }
    for (int k = 0; k < STAT_COUNT; k++)
        fprintf(out, "%s %llu\n", stat_names[k], atomic_load(&stats.written[k]));
    fprintf(out, "dropped %llu\n", atomic_load(&stats.dropped_total));
    fprintf(out, "incomplete %llu\n", atomic_load(&stats.incomplete));
    fprintf(out, "untimed %llu\n", atomic_load(&stats.untimed));
    fprintf(out, "callbacks_runtime %llu\n", atomic_load(&stats.callbacks[0]));
    fprintf(out, "callbacks_driver %llu\n", atomic_load(&stats.callbacks[1]));
    /* The first three work kinds and record counters are alike: kernel, memcpy, memset. */
    for (int k = CT_WORK_KERNEL; k <= CT_WORK_MEMSET; k++)
        fprintf(out, "graph_%s %llu\n", stat_names[k], atomic_load(&stats.replayed[k]));
    for (int cbid = 0; cbid < CUPTI_CBID_RESOURCE_SIZE; cbid++)
        if (atomic_load(&stats.resource[cbid]))
            fprintf(out, "callbacks_resource %d %llu\n", cbid, atomic_load(&stats.resource[cbid]));
    pthread_mutex_lock(&stats.names_lock);
    for (int i = 0; i < stats.name_count; i++)
        fprintf(out, "kernel_name %s %llu\n", stats.names[i].name, stats.names[i].count);
    pthread_mutex_unlock(&stats.names_lock);
    if (fclose(out) != 0)
        fprintf(stderr, "cupti double: cannot write %s: %s\n", knobs.stats_path, strerror(errno));
}

/* ---- CUPTI's clock -------------------------------------------------------------------- */

static atomic_bool stamp_callback;  /* a timestamp callback is registered */
static atomic_ullong stamp_offset;  /* its clock less the real CLOCK_REALTIME, when registered */
static atomic_ullong clock_stepped; /* what CT_DOUBLE_CUPTI_CLOCK_STEP added so far */

/* CUPTI's clock less the real CLOCK_REALTIME the simulated GPU runs on: the client's clock
 * once it registered one (read then, so that back-to-back work stays back to back), else
 * CLOCK_REALTIME as stepped. Unsigned: it wraps as a difference should. */
static uint64_t clock_offset(void)
{
    return atomic_load(&stamp_callback) ? atomic_load(&stamp_offset) : atomic_load(&clock_stepped);
}

static uint64_t cupti_now(void)
{
    return realtime_ns() + clock_offset();
}

static void maybe_step_clock(void)
{
    static atomic_ullong kernels;
    if (knobs.clock_step_ns && atomic_fetch_add(&kernels, 1) + 1 == knobs.clock_step_after)
        atomic_store(&clock_stepped, knobs.clock_step_ns);
}

/* ---- activity buffers ------------------------------------------------------------------ */

/* A buffer the client lent: filling (current) or full and waiting to go back (ready). Its
 * records are all complete once CUPTI's clock reaches done_at (UINT64_MAX: never). */
struct buffer {
    uint8_t *data;
    size_t size, used;
    size_t records, max_records; /* max_records 0: as many as fit */
    uint64_t done_at;
    struct buffer *next;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* the worker: a buffer is ready, the period changed, or stop */
    pthread_cond_t settled; /* a buffer request or a worker delivery finished */
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    struct buffer *current;
    bool requesting;
    struct buffer *ready, **ready_tail;
    uint32_t period_ms;
    bool worker_running, worker_stop, worker_delivering;
    pthread_t worker;
} activity = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .settled = PTHREAD_COND_INITIALIZER,
    .ready_tail = &activity.ready,
};

static atomic_bool kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static _Thread_local bool on_worker;

static size_t align_up(size_t n)
{
    return (n + RECORD_ALIGNMENT - 1) & ~(size_t)(RECORD_ALIGNMENT - 1);
}

/* Where the next record starts: records sit on 8-byte boundaries of the address space, as
 * cuptiActivityGetNextRecord expects whatever the buffer's own alignment. */
static size_t next_offset(const uint8_t *data, size_t used)
{
    uintptr_t at = (uintptr_t)data + used;
    return used + (align_up(at) - at);
}

/* Whether a record of `size` bytes fits, leaving room for the flush's overhead record. */
static bool fits(const struct buffer *b, size_t size)
{
    bool overhead = atomic_load(&kind_on[CUPTI_ACTIVITY_KIND_OVERHEAD]);
    size_t need = size + (overhead ? align_up(sizeof(CUpti_ActivityOverhead3)) : 0);
    size_t count = 1 + (overhead ? 1 : 0);
    return next_offset(b->data, b->used) + need <= b->size &&
           (b->max_records == 0 || b->records + count <= b->max_records);
}

static void place(struct buffer *b, const void *record, size_t size, uint64_t done_at)
{
    size_t at = next_offset(b->data, b->used);
    memcpy(b->data + at, record, size);
    b->used = at + size;
    b->records++;
    if (done_at > b->done_at)
        b->done_at = done_at;
}

/* The overhead of flushing a buffer, recorded at its end (space was kept for it). */
static void place_overhead(struct buffer *b)
{
    if (!atomic_load(&kind_on[CUPTI_ACTIVITY_KIND_OVERHEAD]) ||
        next_offset(b->data, b->used) + sizeof(CUpti_ActivityOverhead3) > b->size)
        return;
    CUpti_ActivityOverhead3 r = {.kind = CUPTI_ACTIVITY_KIND_OVERHEAD,
                                 .overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH,
                                 .objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS};
    r.objectId.pt.processId = (uint32_t)getpid();
    r.start = cupti_now();
    r.end = cupti_now();
    place(b, &r, sizeof r, realtime_ns());
    atomic_fetch_add(&stats.written[STAT_overhead], 1);
}

/* Moves the current buffer to the ready queue; the lock is held. */
static void complete_current(void)
{
    struct buffer *b = activity.current;
    place_overhead(b);
    activity.current = NULL;
    b->next = NULL;
    *activity.ready_tail = b;
    activity.ready_tail = &b->next;
    pthread_cond_signal(&activity.wake);
}

/* Asks the client for a buffer, with the lock released around its callback; false when it
 * gave none (the record in hand is then dropped). The lock is held on entry and exit. */
static bool request_buffer(void)
{
    CUpti_BuffersCallbackRequestFunc request = activity.request;
    struct buffer *b = request ? calloc(1, sizeof *b) : NULL;
    if (!b)
        return false;
    activity.requesting = true;
    pthread_mutex_unlock(&activity.lock);
    request(&b->data, &b->size, &b->max_records);
    pthread_mutex_lock(&activity.lock);
    activity.requesting = false;
    pthread_cond_broadcast(&activity.settled);
    if (!b->data || b->size == 0) {
        free(b);
        return false;
    }
    activity.current = b;
    return true;
}

/* Writes a record into the current buffer, completing it and requesting another as needed. */
static bool write_record(const void *record, size_t size, uint64_t done_at)
{
    pthread_mutex_lock(&activity.lock);
    bool written = false, dropped = false;
    while (!written && !dropped) {
        struct buffer *b = activity.current;
        if (b && fits(b, size)) {
            place(b, record, size, done_at);
            written = true;
        } else if (b) {
            dropped = b->records == 0; /* too big for a whole buffer */
            if (!dropped)
                complete_current();
        } else if (activity.requesting) {
            pthread_cond_wait(&activity.settled, &activity.lock);
        } else {
            dropped = !request_buffer();
        }
    }
    pthread_mutex_unlock(&activity.lock);
    if (dropped)
        count_drop();
    return written;
}

/* Which buffers a hand-back takes: CUPTI's worker takes full ones (and, under
 * CT_DOUBLE_CUPTI_PERIODIC=partial, a partly filled one), a default flush any, and both only
 * those whose records are complete; a forced flush takes all. */
enum take { TAKE_FULL, TAKE_PARTIAL, TAKE_DEFAULT, TAKE_FORCED };

static bool all_done(const struct buffer *b)
{
    return realtime_ns() >= b->done_at;
}

/* Takes the buffers `how` hands back, oldest first, stopping at the first that must stay so
 * that the client still reads records in the order they were written; the lock is held. */
static struct buffer *take(enum take how)
{
    struct buffer *list = NULL, **tail = &list;
    while (activity.ready && (how == TAKE_FORCED || all_done(activity.ready))) {
        struct buffer *b = activity.ready;
        activity.ready = b->next;
        b->next = NULL;
        *tail = b;
        tail = &b->next;
    }
    if (!activity.ready)
        activity.ready_tail = &activity.ready;
    /* "For default flush ... it returns all the activity buffers which have all the activity
     * records completed, buffers need not to be full though." (cuptiActivityFlushAll) */
    struct buffer *partial = activity.current;
    if (!activity.ready && how != TAKE_FULL && partial && partial->records > 0 &&
        (how == TAKE_FORCED || all_done(partial))) {
        complete_current();
        activity.ready = NULL;
        activity.ready_tail = &activity.ready;
        *tail = partial;
    }
    return list;
}

/* The time at which a record's work is done, by its kind. */
static uint64_t *end_of(CUpti_Activity *a)
{
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return &((CUpti_ActivityKernel10 *)a)->end;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return &((CUpti_ActivityMemcpy6 *)a)->end;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return &((CUpti_ActivityMemset4 *)a)->end;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return &((CUpti_ActivitySynchronization2 *)a)->end;
    default:
        return NULL; /* memory operations and overhead are complete when written */
    }
}

static size_t record_size(const CUpti_Activity *record);

/* A forced flush "returns all the activity buffers including the ones which have one or more
 * incomplete activity records" (cuptiActivityFlushAll): each record of work not yet done is
 * handed over as CT_DOUBLE_CUPTI_INCOMPLETE says, and its work never gets another. */
static void mark_incomplete(struct buffer *b)
{
    uint64_t now = cupti_now();
    for (size_t at = next_offset(b->data, 0); at + sizeof(CUpti_Activity) <= b->used;) {
        CUpti_Activity *a = (CUpti_Activity *)(b->data + at);
        size_t size = record_size(a);
        uint64_t *end = end_of(a);
        if (end && *end > now) {
            atomic_fetch_add(&stats.incomplete, 1);
            if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                atomic_fetch_sub(&stats.written[STAT_kernel], 1);
            if (knobs.incomplete_as_zero) {
                end[-1] = *end = 0; /* start precedes end in every one of these layouts */
                if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                    ((CUpti_ActivityKernel10 *)a)->completed = 0;
            } else {
                a->kind = CUPTI_ACTIVITY_KIND_INVALID;
            }
        }
        at = next_offset(b->data, at + size);
    }
}

/* Hands buffers back to the client, in order, with no lock held. */
static void deliver(struct buffer *list, CUpti_BuffersCallbackCompleteFunc complete, bool forced)
{
    while (list) {
        struct buffer *next = list->next;
        if (forced)
            mark_incomplete(list);
        complete(NULL, 0, list->data, list->size, list->used);
        free(list);
        list = next;
    }
}

static bool period_due(uint64_t *deadline)
{
    uint64_t now = realtime_ns();
    if (activity.period_ms == 0 || now < *deadline)
        return false;
    *deadline = now + (uint64_t)activity.period_ms * 1000000ULL;
    return true;
}

/* Sleeps until a full buffer's records are complete, the period's deadline passes, the client
 * changes something or the worker must stop. */
static void worker_wait(uint64_t deadline)
{
    if (activity.worker_stop)
        return;
    uint64_t until = activity.period_ms ? deadline : UINT64_MAX;
    if (activity.ready && activity.ready->done_at < until)
        until = activity.ready->done_at;
    if (until == UINT64_MAX) {
        pthread_cond_wait(&activity.wake, &activity.lock);
        return;
    }
    struct timespec at = {(time_t)(until / 1000000000ULL), (long)(until % 1000000000ULL)};
    pthread_cond_timedwait(&activity.wake, &activity.lock, &at);
}

/* CUPTI hands buffers back from a thread of its own, and so does the double. */
static void *worker_main(void *unused)
{
    (void)unused;
    on_worker = true;
    uint64_t deadline = 0;
    pthread_mutex_lock(&activity.lock);
    while (!activity.worker_stop) {
        worker_wait(deadline);
        bool partial = period_due(&deadline) && knobs.periodic_partial;
        struct buffer *list = take(partial ? TAKE_PARTIAL : TAKE_FULL);
        CUpti_BuffersCallbackCompleteFunc complete = activity.complete;
        activity.worker_delivering = true;
        pthread_mutex_unlock(&activity.lock);
        deliver(list, complete, false);
        pthread_mutex_lock(&activity.lock);
        activity.worker_delivering = false;
        pthread_cond_broadcast(&activity.settled);
    }
    pthread_mutex_unlock(&activity.lock);
    return NULL;
}

/* Hands back what a flush with `flag` returns before returning; none is left out if forced. */
static void flush_all(uint32_t flag)
{
    bool forced = flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
    pthread_mutex_lock(&activity.lock);
    struct buffer *list = take(forced ? TAKE_FORCED : TAKE_DEFAULT);
    CUpti_BuffersCallbackCompleteFunc complete = activity.complete;
    /* What the worker is handing back was written earlier and must arrive first. */
    while (activity.worker_delivering && !on_worker)
        pthread_cond_wait(&activity.settled, &activity.lock);
    /* A buffer lent ahead of need, under CT_DOUBLE_CUPTI_LENT=keep. */
    if (forced && !knobs.lent_returned && !activity.current && !activity.requesting)
        request_buffer();
    pthread_mutex_unlock(&activity.lock);
    if (complete)
        deliver(list, complete, forced);
}

static void stop_worker(void)
{
    pthread_mutex_lock(&activity.lock);
    bool running = activity.worker_running;
    activity.worker_stop = true;
    pthread_cond_signal(&activity.wake);
    pthread_mutex_unlock(&activity.lock);
    /* From the worker itself (a callback calling cuptiFinalize) it is left to end by itself. */
    if (!running || on_worker)
        return;
    pthread_join(activity.worker, NULL);
    activity.worker_running = activity.worker_stop = false;
}

/* ---- records from the driver's work ---------------------------------------------------- */

union record {
    CUpti_Activity any;
    CUpti_ActivityKernel10 kernel;
    CUpti_ActivityMemcpy6 memcpy;
    CUpti_ActivityMemset4 memset;
    CUpti_ActivityMemory4 memory;
    CUpti_ActivitySynchronization2 sync;
    CUpti_ActivityGraphTrace2 graph;
};

/* A kernel's record "is assigned a unique correlation ID that is identical to the correlation
 * ID in the driver or runtime API activity record that launched the kernel"
 * (CUpti_ActivityKernel10): the runtime call's, or under CT_DOUBLE_CUPTI_KERNEL_ID=driver the
 * driver call's, which differ under CT_DOUBLE_CUPTI_IDS=per_call. A memset's is "the
 * correlation ID in the driver API activity record that launched the memory set", and a copy
 * carries the driver call's and "the runtime correlation ID" both. */
static uint32_t kernel_correlation(const struct ct_gpu_work *w)
{
    return knobs.kernel_id_driver || !w->runtime_correlation_id ? w->correlation_id
                                                                : w->runtime_correlation_id;
}

static size_t lay_kernel(const struct ct_gpu_work *w, CUpti_ActivityKernel10 *r)
{
    static atomic_llong next_grid_id = 1;
    *r = (CUpti_ActivityKernel10){
        .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        .registersPerThread = 32,
        .start = w->start,
        .end = w->end,
        .completed = w->end,
        .deviceId = CT_GPU_DEVICE_ID,
        .contextId = CT_GPU_CONTEXT_ID,
        .streamId = w->stream_id,
        .gridX = (int32_t)w->kernel.grid[0],
        .gridY = (int32_t)w->kernel.grid[1],
        .gridZ = (int32_t)w->kernel.grid[2],
        .blockX = (int32_t)w->kernel.block[0],
        .blockY = (int32_t)w->kernel.block[1],
        .blockZ = (int32_t)w->kernel.block[2],
        .dynamicSharedMemory = (int32_t)w->kernel.dynamic_shared,
        .correlationId = kernel_correlation(w),
        .gridId = atomic_fetch_add(&next_grid_id, 1),
        .name = w->kernel.name,
        .graphNodeId = w->graph_node_id,
        .graphId = w->graph_id,
    };
    return sizeof *r;
}

static size_t lay_memcpy(const struct ct_gpu_work *w, CUpti_ActivityMemcpy6 *r)
{
    *r = (CUpti_ActivityMemcpy6){
        .kind = CUPTI_ACTIVITY_KIND_MEMCPY,
        .copyKind = (uint8_t)w->memcpy.kind,
        .srcKind = (uint8_t)w->memcpy.src,
        .dstKind = (uint8_t)w->memcpy.dst,
        .flags = w->memcpy.async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0,
        .bytes = w->bytes,
        .start = w->start,
        .end = w->end,
        .deviceId = CT_GPU_DEVICE_ID,
        .contextId = CT_GPU_CONTEXT_ID,
        .streamId = w->stream_id,
        .correlationId = w->correlation_id,
        .runtimeCorrelationId = w->runtime_correlation_id,
        .copyCount = w->memcpy.copies,
        .graphNodeId = w->graph_node_id,
        .graphId = w->graph_id,
    };
    return sizeof *r;
}

static size_t lay_memset(const struct ct_gpu_work *w, CUpti_ActivityMemset4 *r)
{
    *r = (CUpti_ActivityMemset4){
        .kind = CUPTI_ACTIVITY_KIND_MEMSET,
        .value = w->memset.value,
        .bytes = w->bytes,
        .start = w->start,
        .end = w->end,
        .deviceId = CT_GPU_DEVICE_ID,
        .contextId = CT_GPU_CONTEXT_ID,
        .streamId = w->stream_id,
        .correlationId = w->correlation_id,
        .flags = w->memset.async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0,
        .memoryKind = (uint16_t)w->memset.memory,
        .graphNodeId = w->graph_node_id,
        .graphId = w->graph_id,
    };
    return sizeof *r;
}

static size_t lay_memory(const struct ct_gpu_work *w, CUpti_ActivityMemory4 *r)
{
    *r = (CUpti_ActivityMemory4){
        .kind = CUPTI_ACTIVITY_KIND_MEMORY2,
        .memoryOperationType = w->memory.operation,
        .memoryKind = w->memory.memory,
        .correlationId = w->correlation_id,
        .address = w->memory.address,
        .bytes = w->bytes,
        .timestamp = w->start,
        .processId = (uint32_t)getpid(),
        .deviceId = CT_GPU_DEVICE_ID,
        .contextId = CT_GPU_CONTEXT_ID,
        .streamId = w->stream_id,
    };
    return sizeof *r;
}

static size_t lay_sync(const struct ct_gpu_work *w, CUpti_ActivitySynchronization2 *r)
{
    *r = (CUpti_ActivitySynchronization2){
        .kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
        .type = w->sync.type,
        .start = w->start,
        .end = w->end,
        .correlationId = w->correlation_id,
        .contextId = CT_GPU_CONTEXT_ID,
        .streamId = w->stream_id,
        .cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE,
    };
    return sizeof *r;
}

/* CUpti_ActivityGraphTrace2: "The correlation ID of the graph launch. Each graph launch is
 * assigned a unique correlation ID that is identical to the correlation ID in the driver API
 * activity record that launched the graph", with the start and end of the whole execution. */
static size_t lay_graph(const struct ct_gpu_work *w, CUpti_ActivityGraphTrace2 *r)
{
    *r = (CUpti_ActivityGraphTrace2){
        .kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
        .correlationId = w->correlation_id,
        .start = w->start,
        .end = w->end,
        .deviceId = CT_GPU_DEVICE_ID,
        .graphId = w->graph_id,
        .contextId = CT_GPU_CONTEXT_ID,
        .streamId = w->stream_id,
        .endDeviceId = CT_GPU_DEVICE_ID,
        .endContextId = CT_GPU_CONTEXT_ID,
    };
    return sizeof *r;
}

static const CUpti_ActivityKind kind_of_work[] = {
    [CT_WORK_KERNEL] = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    [CT_WORK_MEMCPY] = CUPTI_ACTIVITY_KIND_MEMCPY,
    [CT_WORK_MEMSET] = CUPTI_ACTIVITY_KIND_MEMSET,
    [CT_WORK_MEMORY] = CUPTI_ACTIVITY_KIND_MEMORY2,
    [CT_WORK_SYNC] = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    [CT_WORK_GRAPH] = CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
};

static const enum stat_kind stat_of_work[] = {
    [CT_WORK_KERNEL] = STAT_kernel,        [CT_WORK_MEMCPY] = STAT_memcpy,
    [CT_WORK_MEMSET] = STAT_memset,        [CT_WORK_MEMORY] = STAT_memory,
    [CT_WORK_SYNC] = STAT_synchronization, [CT_WORK_GRAPH] = STAT_graph,
};

static size_t lay_record(const struct ct_gpu_work *w, union record *r)
{
    switch (w->kind) {
    case CT_WORK_KERNEL:
        return lay_kernel(w, &r->kernel);
    case CT_WORK_MEMCPY:
        return lay_memcpy(w, &r->memcpy);
    case CT_WORK_MEMSET:
        return lay_memset(w, &r->memset);
    case CT_WORK_MEMORY:
        return lay_memory(w, &r->memory);
    case CT_WORK_GRAPH:
        return lay_graph(w, &r->graph);
    default:
        return lay_sync(w, &r->sync);
    }
}

/* CT_DOUBLE_CUPTI_DROP_EVERY thins device work only (kernels, copies, sets), as a device-side
 * buffer overflowing would. */
static bool drop_this(const struct ct_gpu_work *w)
{
    static atomic_ullong gpu_records;
    if (knobs.drop_every == 0 || w->kind > CT_WORK_MEMSET)
        return false;
    return (atomic_fetch_add(&gpu_records, 1) + 1) % knobs.drop_every == 0;
}

static bool never_completes(const struct ct_gpu_work *w)
{
    static atomic_ullong kernels;
    return knobs.lose_kernel && w->kind == CT_WORK_KERNEL &&
           atomic_fetch_add(&kernels, 1) + 1 == knobs.lose_kernel;
}

static bool untimed(const struct ct_gpu_work *w)
{
    static atomic_ullong kernels;
    return knobs.untimed_every && w->kind == CT_WORK_KERNEL &&
           (atomic_fetch_add(&kernels, 1) + 1) % knobs.untimed_every == 0;
}

/* When a record of `w` is complete: the work's end, since its timestamps are known only then,
 * UINT64_MAX for work that never ends (whose end is then that too, never handed over). */
static uint64_t done_at(const struct ct_gpu_work *w, union record *r)
{
    if (never_completes(w)) {
        r->kernel.end = r->kernel.completed = UINT64_MAX;
        return UINT64_MAX;
    }
    if (untimed(w)) {
        r->kernel.start = r->kernel.end = r->kernel.completed = 0;
        atomic_fetch_add(&stats.untimed, 1);
    }
    return w->end;
}

/* CUpti_ActivityGraphTrace2 "represents execution for a graph without giving visibility about
 * the execution of its nodes. This is intended to reduce overheads in tracing each node": while
 * it is enabled, a graph launch's kernels, copies and sets have no records of their own. */
static bool hidden_in_graph_trace(const struct ct_gpu_work *w)
{
    return w->graph_id && w->kind <= CT_WORK_MEMSET &&
           atomic_load(&kind_on[CUPTI_ACTIVITY_KIND_GRAPH_TRACE]);
}

static void on_work(const struct ct_gpu_work *w)
{
    if (!atomic_load(&kind_on[kind_of_work[w->kind]]) || hidden_in_graph_trace(w))
        return;
    if (drop_this(w)) {
        count_drop();
        return;
    }
    union record r;
    struct ct_gpu_work stamped = *w;
    uint64_t offset = clock_offset();
    stamped.start = w->start + offset, stamped.end = w->end + offset;
    size_t size = lay_record(&stamped, &r);
    if (!write_record(&r, size, done_at(w, &r)))
        return;
    atomic_fetch_add(&stats.written[stat_of_work[w->kind]], 1);
    if (w->graph_id && w->kind != CT_WORK_GRAPH)
        atomic_fetch_add(&stats.replayed[w->kind], 1);
    if (w->kind == CT_WORK_KERNEL) {
        count_kernel_name(w->kernel.name);
        maybe_step_clock();
    }
}

/* ---- callbacks from the driver's API calls --------------------------------------------- */

/* A subscriber: its callback (NULL: the slot is free), its user data (written before the callback
 * is published) and which callbacks it enabled. */
static struct CUpti_Subscriber_st {
    _Atomic(CUpti_CallbackFunc) callback;
    void *userdata;
    atomic_bool runtime_on[CUPTI_RUNTIME_TRACE_CBID_SIZE];
    atomic_bool driver_on[CUPTI_DRIVER_TRACE_CBID_SIZE];
    atomic_bool resource_on[CUPTI_CBID_RESOURCE_SIZE];
} subscribers[MAX_SUBSCRIBERS];

static pthread_mutex_t subscribing = PTHREAD_MUTEX_INITIALIZER;

/* The subscriber a handle names, or NULL for any other pointer or a free slot. */
static struct CUpti_Subscriber_st *subscriber_of(CUpti_SubscriberHandle handle)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        if (handle == &subscribers[i] && atomic_load(&handle->callback))
            return handle;
    return NULL;
}

/* The enable switch of (domain, cbid) for a subscriber; NULL for a domain or id the double does not
 * trace. */
static atomic_bool *switch_for(struct CUpti_Subscriber_st *s, CUpti_CallbackDomain domain,
                               CUpti_CallbackId cbid)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
        return &s->runtime_on[cbid];
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
        return &s->driver_on[cbid];
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid < CUPTI_CBID_RESOURCE_SIZE)
        return &s->resource_on[cbid];
    return NULL;
}

/* CUPTI Python 13.5 release notes: "Each subscriber created with cupti.cupti.subscribe() or
 * cupti.cupti.subscribe_v2() receives only the callbacks and user data that it registered." */
static void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData *data)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++) {
        struct CUpti_Subscriber_st *s = &subscribers[i];
        CUpti_CallbackFunc callback = atomic_load(&s->callback);
        atomic_bool *on = callback ? switch_for(s, domain, cbid) : NULL;
        if (!on || !atomic_load(on))
            continue;
        atomic_fetch_add(&stats.callbacks[domain == CUPTI_CB_DOMAIN_DRIVER_API], 1);
        callback(s->userdata, domain, cbid, data);
    }
}

/* Resource callbacks reach the subscribers that enabled them, as API callbacks do. */
static void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *data)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++) {
        struct CUpti_Subscriber_st *s = &subscribers[i];
        CUpti_CallbackFunc callback = atomic_load(&s->callback);
        if (!callback || cbid >= CUPTI_CBID_RESOURCE_SIZE || !atomic_load(&s->resource_on[cbid]))
            continue;
        atomic_fetch_add(&stats.resource[cbid], 1);
        callback(s->userdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, data);
    }
}

/* ---- the driver ------------------------------------------------------------------------ */

static const struct ct_gpu_tool tool = {
    .callback = on_api, .record = on_work, .resource = on_resource};

static struct {
    pthread_mutex_t lock;
    const struct ct_gpu_table *table; /* NULL until attached */
} driver = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Attaches to the driver once; false when there is no driver (or another tool holds it), which
 * the real CUPTI reports as CUPTI_ERROR_UNKNOWN. */
static bool connect_driver(void)
{
    pthread_mutex_lock(&driver.lock);
    if (!driver.table) {
        const struct ct_gpu_table *table =
            ct_gpu_table_of(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL));
        if (table && table->attach(&tool))
            driver.table = table;
    }
    bool connected = driver.table != NULL;
    pthread_mutex_unlock(&driver.lock);
    return connected;
}

static void disconnect_driver(void)
{
    pthread_mutex_lock(&driver.lock);
    if (driver.table)
        driver.table->detach();
    driver.table = NULL;
    pthread_mutex_unlock(&driver.lock);
}

/* ---- exports: versions, errors, names, time -------------------------------------------- */

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    if (!version)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    *version = CUPTI_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult r, const char **str)
{
    if (!str)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    switch (r) {
#define AS_CASE(code)                                                                              \
    case code:                                                                                     \
        *str = #code;                                                                              \
        return CUPTI_SUCCESS;
        RESULTS(AS_CASE)
#undef AS_CASE
    default:
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    }
}

CUptiResult CUPTIAPI cuptiGetLastError(void)
{
    CUptiResult rc = last_error;
    last_error = CUPTI_SUCCESS;
    return rc;
}

static const char *runtime_callback_name(CUpti_CallbackId cbid)
{
    switch (cbid) {
#define AS_CASE(name, cb)                                                                          \
    case CUPTI_RUNTIME_TRACE_CBID_##cb:                                                            \
        return #cb;
        CT_DOUBLE_APIS(AS_CASE)
#undef AS_CASE
    default:
        return NULL;
    }
}

static const char *driver_callback_name(CUpti_CallbackId cbid)
{
    switch (cbid) {
#define AS_CASE(name)                                                                              \
    case CUPTI_DRIVER_TRACE_CBID_##name:                                                           \
        return #name;
        CT_DRIVER_CALLBACKS(AS_CASE)
#undef AS_CASE
    default:
        return NULL;
    }
}

/* Names for the callbacks the doubles can emit; other ids are refused. */
CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char **name)
{
    const char *found = NULL;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        found = runtime_callback_name(cbid);
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        found = driver_callback_name(cbid);
    if (!name || !found)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    *name = found;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    /* "Returns a timestamp normalized to correspond with the start and end timestamps
     * reported in the CUPTI activity records." */
    *timestamp = cupti_now();
    return CUPTI_SUCCESS;
}

/* "This function registers a callback function to obtain timestamp of user's choice instead
 * of using CUPTI provided timestamp"; records laid before keep the clock they were laid on. */
CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc func)
{
    if (!func)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    atomic_store(&stamp_offset, func() - realtime_ns());
    atomic_store(&stamp_callback, true);
    return CUPTI_SUCCESS;
}

/* ---- exports: subscription and callbacks ----------------------------------------------- */

static bool subscribed(void)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        if (atomic_load(&subscribers[i].callback))
            return true;
    return false;
}

/* A free slot; NULL when there is none. */
static struct CUpti_Subscriber_st *free_slot(void)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        if (!atomic_load(&subscribers[i].callback))
            return &subscribers[i];
    return NULL;
}

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                             void *userdata)
{
    if (!subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    /* cupti_callbacks.h: "Only a single subscriber can be registered at a time. ... In case
     * profiling session is already started by another CUPTI client, this function returns the
     * error code CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", and "the same error when
     * application is launched using NVIDIA tools like Nsight Systems" (CT_DOUBLE_CUPTI_TAKEN).
     * CUPTI's documentation, Legacy Initialization: that holds "For applications running on
     * CUDA 13.2 or older, or with drivers older than r610"; "On systems meeting the CUDA 13.3
     * and driver r610 requirements, this error will no longer be triggered by concurrent tool
     * usage" (CT_DOUBLE_CUPTI_MULTIPLE_SUBSCRIBERS=1). */
    if (knobs.taken || (!knobs.multiple_subscribers && subscribed()))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (!callback)
        return CUPTI_ERROR_INVALID_PARAMETER;
    struct CUpti_Subscriber_st *slot = free_slot();
    if (!slot)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    if (!connect_driver())
        return CUPTI_ERROR_UNKNOWN;
    slot->userdata = userdata;
    atomic_store(&slot->callback, callback);
    *subscriber = slot;
    return CUPTI_SUCCESS;
}

/* Both subscription calls, serialised; neither calls the other's export, so a client's hook of
 * one never sees the other's calls. */
static CUptiResult subscribe_once(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    pthread_mutex_lock(&subscribing);
    CUptiResult rc = subscribe(subscriber, callback, userdata);
    pthread_mutex_unlock(&subscribing);
    return result(rc);
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                    void *userdata)
{
    return subscribe_once(subscriber, callback, userdata);
}

/* cupti_callbacks.h: pParams "Can be NULL"; CUPTI_ERROR_INVALID_PARAMETER "if pParams.structSize
 * is not filled with the size of the structure". Otherwise it subscribes as cuptiSubscribe does;
 * the names in pParams are not kept (nothing here reads them back). */
CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                       CUpti_CallbackFunc callback, void *userdata,
                                       CUpti_SubscriberParams *pParams)
{
    if (pParams && pParams->structSize == 0)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    return subscribe_once(subscriber, callback, userdata);
}

static void enable_all(atomic_bool *switches, size_t count, bool on)
{
    for (size_t i = 0; i < count; i++)
        atomic_store(&switches[i], on);
}

static void unsubscribe(struct CUpti_Subscriber_st *s)
{
    atomic_store(&s->callback, NULL);
    enable_all(s->runtime_on, CUPTI_RUNTIME_TRACE_CBID_SIZE, false);
    enable_all(s->driver_on, CUPTI_DRIVER_TRACE_CBID_SIZE, false);
    enable_all(s->resource_on, CUPTI_CBID_RESOURCE_SIZE, false);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    struct CUpti_Subscriber_st *s = subscriber_of(subscriber);
    if (!s)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    unsubscribe(s);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    struct CUpti_Subscriber_st *s = subscriber_of(subscriber);
    atomic_bool *on = s ? switch_for(s, domain, cbid) : NULL;
    if (!on)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    atomic_store(on, enable != 0);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain)
{
    struct CUpti_Subscriber_st *s = subscriber_of(subscriber);
    if (!s)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        enable_all(s->runtime_on, CUPTI_RUNTIME_TRACE_CBID_SIZE, enable != 0);
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        enable_all(s->driver_on, CUPTI_DRIVER_TRACE_CBID_SIZE, enable != 0);
    else if (domain == CUPTI_CB_DOMAIN_RESOURCE)
        enable_all(s->resource_on, CUPTI_CBID_RESOURCE_SIZE, enable != 0);
    else
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    return CUPTI_SUCCESS;
}

/* ---- exports: activity ----------------------------------------------------------------- */

/* Kinds other than the double's records are accepted and simply never produced. */
static CUptiResult switch_kind(CUpti_ActivityKind kind, bool on)
{
    if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return result(CUPTI_ERROR_INVALID_KIND);
    if (on && !connect_driver())
        return result(CUPTI_ERROR_UNKNOWN);
    atomic_store(&kind_on[kind], on);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    return switch_kind(kind, true);
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    return switch_kind(kind, false);
}

CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    if (!funcBufferRequested || !funcBufferCompleted)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    pthread_mutex_lock(&activity.lock);
    struct buffer *lent = NULL;
    CUpti_BuffersCallbackCompleteFunc lender = activity.complete;
    if (knobs.lent_returned && lender && funcBufferCompleted != lender && activity.current) {
        lent = activity.current;
        activity.current = NULL;
    }
    pthread_mutex_unlock(&activity.lock);
    if (lent)
        deliver(lent, lender, true);
    pthread_mutex_lock(&activity.lock);
    activity.request = funcBufferRequested;
    activity.complete = funcBufferCompleted;
    bool start = !activity.worker_running;
    activity.worker_running = true;
    pthread_mutex_unlock(&activity.lock);
    if (start && pthread_create(&activity.worker, NULL, worker_main, NULL) != 0) {
        activity.worker_running = false;
        return result(CUPTI_ERROR_UNKNOWN);
    }
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    flush_all(flag);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time)
{
    pthread_mutex_lock(&activity.lock);
    activity.period_ms = time;
    pthread_cond_signal(&activity.wake);
    pthread_mutex_unlock(&activity.lock);
    return CUPTI_SUCCESS;
}

/* The size of a record the double writes, by its kind; 0 for any other kind. */
static size_t record_size(const CUpti_Activity *record)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        return sizeof(CUpti_ActivityGraphTrace2);
    default:
        return 0;
    }
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record)
{
    if (!buffer || !record)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    size_t used = 0;
    if (*record) {
        size_t size = record_size(*record);
        if (size == 0)
            return result(CUPTI_ERROR_INVALID_KIND);
        used = (size_t)((uint8_t *)*record - buffer) + size;
    }
    size_t at = next_offset(buffer, used);
    if (at + sizeof(CUpti_Activity) > validBufferSizeBytes)
        return result(CUPTI_ERROR_MAX_LIMIT_REACHED);
    /* "CUPTI_ERROR_INVALID_KIND if activity record is either incomplete or invalid" */
    if (record_size((CUpti_Activity *)(buffer + at)) == 0)
        return result(CUPTI_ERROR_INVALID_KIND);
    *record = (CUpti_Activity *)(buffer + at);
    return CUPTI_SUCCESS;
}

/* cupti_activity.h: cuptiGetGraphNodeId "Returns the unique ID of the CUDA graph node",
 * cuptiGetGraphId "the unique ID of CUDA graph", cuptiGetGraphExecId "the unique ID of
 * executable CUDA graph"; each CUPTI_ERROR_INVALID_PARAMETER "if node is NULL" (graph). */
CUptiResult CUPTIAPI cuptiGetGraphNodeId(CUgraphNode node, uint64_t *nodeId)
{
    if (!node || !nodeId)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    *nodeId = node->id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t *pId)
{
    if (!graph || !pId)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    *pId = graph->id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetGraphExecId(CUgraphExec graphExec, uint32_t *pId)
{
    if (!graphExec || !pId)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    *pId = graphExec->id;
    return CUPTI_SUCCESS;
}

/* One count for all contexts and streams: what was dropped since the previous call. */
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                       size_t *dropped)
{
    (void)context;
    (void)streamId;
    if (!dropped)
        return result(CUPTI_ERROR_INVALID_PARAMETER);
    *dropped = (size_t)atomic_exchange(&stats.dropped_since, 0);
    return CUPTI_SUCCESS;
}

/* Hands back what is pending, lets go of the driver and forgets the client, as a process that
 * detaches its profiler would see; the statistics are written now as well as at exit. */
CUptiResult CUPTIAPI cuptiFinalize(void)
{
    flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    stop_worker();
    disconnect_driver();
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        unsubscribe(&subscribers[i]);
    enable_all(kind_on, CUPTI_ACTIVITY_KIND_COUNT, false);
    pthread_mutex_lock(&activity.lock);
    activity.request = NULL;
    activity.complete = NULL;
    pthread_mutex_unlock(&activity.lock);
    write_stats();
    return CUPTI_SUCCESS;
}

__attribute__((destructor)) static void write_stats_at_exit(void)
{
    write_stats();
}
