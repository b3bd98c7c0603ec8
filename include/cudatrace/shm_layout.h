/*
 * The shared-memory layout both sides map: a header, one single-producer
 * single-consumer ring of records (record.h) per traced thread, and the pool
 * full rings spill into, all in one memfd. Both sides check CT_SHM_MAGIC and
 * CT_RECORD_VERSION before touching anything else, so a preload and a
 * collector from different builds refuse each other instead of misreading
 * records.
 */
#ifndef CUDATRACE_SHM_LAYOUT_H
#define CUDATRACE_SHM_LAYOUT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cudatrace/functions.h"
#include "cudatrace/record.h"

#define CT_SHM_MAGIC 0x43545243u /* "CRTC" */
/* The memfd's name: the collector tells from the process's maps whether it
 * still maps the rings (it does not once it has exec'd). */
#define CT_SHM_NAME "cudatrace-rings"
/* collector_error when the output names something that is there and is not
 * a file (a device, a FIFO, a folder): never a new file beside it. */
#define CT_ERROR_NOT_A_FILE 0x10000u

enum ct_clock_kind {
    CT_CLOCK_TSC = 1,      /* raw rdtsc ticks, mapped to BOOTTIME by the collector */
    CT_CLOCK_BOOTTIME = 2, /* CLOCK_BOOTTIME nanoseconds                           */
};

enum ct_ring_state {
    CT_RING_FREE = 0,    /* claimable by a thread                               */
    CT_RING_ACTIVE = 1,  /* owned by a live thread                              */
    CT_RING_RETIRED = 2, /* its thread ended; the collector drains, then frees  */
};

/* A thread's calls of one function, counted whatever became of their
 * records: the report's counts stand on these, the records give detail. */
struct ct_call_stats {
    uint64_t calls, errors;
    uint64_t ticks; /* summed durations, in the record clock */
};

/* Adds one set of per-function totals (CT_FN_COUNT entries) to another. */
static inline void ct_call_stats_add(struct ct_call_stats *to, const struct ct_call_stats *from)
{
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        to[fn].calls += from[fn].calls;
        to[fn].errors += from[fn].errors;
        to[fn].ticks += from[fn].ticks;
    }
}

/* A ring that fills spills into segments of a pool shared by all rings, in
 * the same memfd, so a burst gets more room before anything is dropped. The
 * producer writes to the spill chain from the moment the ring is full until
 * the consumer has read everything spilled and the ring has room again; the
 * consumer reads the ring before the chain, so records keep their order.
 * The pool is sparse: a segment's pages exist only while it holds records
 * (the collector gives them back once read). */
#define CT_SPILL_SEGMENT_RECORDS 16384u /* 1 MiB */
/* Threads' rings at most (CUDATRACE_RINGS); the loader's ring is one more. */
#define CT_RINGS_MAX 4096u
#define CT_SPILL_CHAIN 128u          /* segments in the pool, and in one ring's chain */
#define CT_SPILL_TICKET (1ull << 63) /* a reserved slot in the chain, not the ring */

/* One single-producer single-consumer ring. The producer owns the first cache
 * line, the consumer the second, so neither side's stores bounce the other's
 * line on every record. */
struct ct_ring {
    _Atomic uint32_t state;
    uint32_t index; /* position in the ring array, fixed at creation */
    int32_t tid;
    char thread_name[16];
    _Atomic uint64_t head;    /* next slot the producer writes                */
    uint64_t cached_tail;     /* producer's last view of tail                 */
    uint64_t last_kernel;     /* producer's: the kernel key last named here   */
    _Atomic uint64_t dropped; /* records lost because the ring was full       */
    /* The call the thread is inside, for a process that dies mid-call: read by
     * the collector only once the process has ended. */
    uint64_t inflight_begin;           /* clock at the call's entry, 0 when none        */
    uint64_t inflight_caller;          /* the hook's return address: the caller's line,
                                          not kept by launches (functions.h)            */
    uint32_t inflight_func;            /* enum ct_function                              */
    volatile uint32_t busy;            /* a record is being written: a signal handler's
                                          call must not write into the same slot        */
    uint32_t spilling;                 /* producer's: records go to the spill chain     */
    _Atomic uint64_t spill_head;       /* next spill position the producer writes       */
    alignas(64) _Atomic uint64_t tail; /* next slot the consumer reads    */
    _Atomic uint64_t spill_tail;       /* next spill position the consumer reads */
    /* The pool segment that holds spill positions [k, k + 1) * segment size,
     * at k % CT_SPILL_CHAIN: written by the producer before it publishes the
     * first record there, freed by the consumer once it read the last. */
    alignas(64) _Atomic uint32_t spill_segments[CT_SPILL_CHAIN];
    /* The producer's; the collector reads them once the thread or the
     * process has ended, and clears them before the ring is reused. */
    alignas(64) struct ct_call_stats stats[CT_FN_COUNT];
    alignas(64) struct ct_record records[];
};

enum ct_capture_kind {
    CT_CAPTURE_ALL = 0,      /* unset: everything is recorded         */
    CT_CAPTURE_PROFILER = 1, /* between cudaProfilerStart and Stop    */
    CT_CAPTURE_NVTX = 2,     /* while an NVTX range of that name is open */
    CT_CAPTURE_TIME = 3,     /* from a delay after start, for a duration */
};

enum ct_gpu_records {
    CT_GPU_RECORDS_TRACKS = 0, /* slices on GPU tracks, flows from the host calls */
    CT_GPU_RECORDS_TYPED = 1,  /* Perfetto's GpuRenderStageEvent, gpu_correlation */
};

struct ct_shm_header {
    uint32_t magic;
    uint32_t version;
    uint32_t ring_count;    /* at most CT_RINGS_MAX + 1 */
    uint32_t ring_capacity; /* records per ring, a power of two */
    uint32_t clock;         /* enum ct_clock_kind               */
    int32_t pid;
    uint32_t loader_ring; /* the ring of library events, written under a lock */
    /* One past the highest ring a thread ever claimed (threads take the
     * first free one): the collector looks at these rings only, so that a
     * pass, every millisecond when idle, does not touch a page of each of
     * the 257 rings there are by default. */
    _Atomic uint32_t rings_claimed;
    /* Written by the collector before it says it is ready: 1 when it
     * watches the process through a pidfd, so that the process need not
     * hold the lifeline; 0 when it relies on the lifeline pipe. */
    uint32_t collector_watches_pid;
    /* One reading of both clocks at process start: the collector's anchor for
     * mapping ticks to nanoseconds, and the process start time in the trace. */
    uint64_t start_ticks;
    uint64_t start_boot_ns;
    _Atomic uint64_t exit_ticks;      /* 0 until the process exits normally   */
    _Atomic uint64_t dropped_no_ring; /* records of threads that found no ring */
    /* Written by the collector as it finishes, read by the preload's summary. */
    _Atomic uint32_t collector_done;
    uint32_t collector_error; /* errno of the failed output, CT_ERROR_NOT_A_FILE, or 0 */
    _Atomic uint64_t collector_records;
    _Atomic uint64_t collector_bytes;
    uint32_t spill_count; /* segments in the pool; 0: none */
    /* How often the collector samples the GPU through NVML (CUDATRACE_NVML_MS,
     * read with the other settings by the preload); 0: never. */
    uint32_t nvml_ms;
    /* The trace file's bound in MiB (CUDATRACE_MAX_MB); 0: unbounded. */
    uint32_t max_trace_mb;
    /* How often a second the collector samples the process's threads and
     * workers from /proc (CUDATRACE_SAMPLE_HZ); 0: never. */
    uint32_t sample_hz;
    /* How the collector writes the GPU's work (CUDATRACE_GPU_RECORDS). */
    uint32_t gpu_records; /* enum ct_gpu_records */
    /* 1: CUPTI gives a record per graph launch, none per node
     * (CUDATRACE_GPU_GRAPHS=graphs), so a launch starts one flow. */
    uint32_t gpu_graph_level;
    /* Capture windows (CUDATRACE_CAPTURE): while capture_open is 0 the hooks
     * count calls in the totals and write no record. The preload opens and
     * closes it for the profiler API and NVTX ranges, the collector for the
     * time window and `cudatrace ctl`; 1 all run long when capture is unset. */
    _Atomic uint32_t capture_open;
    uint32_t capture_kind;        /* enum ct_capture_kind                  */
    uint64_t capture_delay_ns;    /* CT_CAPTURE_TIME: opens this long after start */
    uint64_t capture_duration_ns; /* and closes this much later; 0: never  */
    char capture_setting[64];     /* CUDATRACE_CAPTURE as given, for the trace */
    _Atomic uint64_t spill_free[CT_SPILL_CHAIN / 64]; /* a set bit: that segment is free */
    /* The collector asks the preload to hand over what CUPTI holds (before a
     * snapshot or a `ctl status`) by adding 1 to gpu_flush_asked, after
     * setting gpu_flush_forced for a flush that hands over incomplete records
     * too, and waking it (a futex on gpu_flush_asked); the preload stores the
     * count it served in gpu_flush_done once the records are on its ring.
     * gpu_flusher is 1 while the preload's thread that serves them runs. */
    _Atomic uint32_t gpu_flusher;
    _Atomic uint32_t gpu_flush_asked;
    _Atomic uint32_t gpu_flush_forced;
    _Atomic uint32_t gpu_flush_done;
    char output_path[4096];
};

static inline size_t ct_ring_stride(uint32_t capacity)
{
    return sizeof(struct ct_ring) + (size_t)capacity * sizeof(struct ct_record);
}

#define CT_SHM_HEADER_SIZE ((sizeof(struct ct_shm_header) + 63) & ~(size_t)63)

#define CT_SPILL_SEGMENT_BYTES ((size_t)CT_SPILL_SEGMENT_RECORDS * sizeof(struct ct_record))

/* Where the spill pool starts: after the rings, on a page boundary. */
static inline size_t ct_shm_spill_offset(uint32_t ring_count, uint32_t capacity)
{
    return (CT_SHM_HEADER_SIZE + (size_t)ring_count * ct_ring_stride(capacity) + 4095) &
           ~(size_t)4095;
}

static inline size_t ct_shm_size(uint32_t ring_count, uint32_t capacity, uint32_t spill_count)
{
    return ct_shm_spill_offset(ring_count, capacity) + (size_t)spill_count * CT_SPILL_SEGMENT_BYTES;
}

static inline struct ct_record *ct_shm_spill_segment(struct ct_shm_header *shm, uint32_t segment)
{
    return (struct ct_record *)((char *)shm +
                                ct_shm_spill_offset(shm->ring_count, shm->ring_capacity) +
                                (size_t)segment * CT_SPILL_SEGMENT_BYTES);
}

static inline struct ct_ring *ct_shm_ring(struct ct_shm_header *shm, uint32_t index)
{
    return (struct ct_ring *)((char *)shm + CT_SHM_HEADER_SIZE +
                              (size_t)index * ct_ring_stride(shm->ring_capacity));
}

/* The rings any thread has written to so far (the loader's among them). */
static inline uint32_t ct_shm_rings_in_use(struct ct_shm_header *shm)
{
    uint32_t claimed = atomic_load_explicit(&shm->rings_claimed, memory_order_acquire);
    return claimed < shm->ring_count ? claimed : shm->ring_count;
}

/* Notes that ring `index` was claimed, before its thread writes to it. */
static inline void ct_shm_note_claimed(struct ct_shm_header *shm, uint32_t index)
{
    uint32_t seen = atomic_load_explicit(&shm->rings_claimed, memory_order_relaxed);
    while (seen <= index &&
           !atomic_compare_exchange_weak_explicit(&shm->rings_claimed, &seen, index + 1,
                                                  memory_order_release, memory_order_relaxed))
        ;
}

/* Numbers the rings and reserves ring 0 for library events: it belongs to
 * no thread, is written by whichever thread looks at the link map (one at a
 * time), and stays active for the whole session, so no thread claims it. */
static inline void ct_shm_init_rings(struct ct_shm_header *shm)
{
    for (uint32_t i = 0; i < shm->ring_count; i++)
        ct_shm_ring(shm, i)->index = i;
    shm->loader_ring = 0;
    atomic_store(&ct_shm_ring(shm, 0)->state, CT_RING_ACTIVE);
    ct_shm_note_claimed(shm, 0);
    for (uint32_t i = 0; i < shm->spill_count && i < CT_SPILL_CHAIN; i++)
        atomic_fetch_or(&shm->spill_free[i / 64], 1ull << (i % 64));
}

/* Records lost so far: full rings plus threads that found no free ring. */
static inline uint64_t ct_shm_dropped(struct ct_shm_header *shm)
{
    uint64_t dropped = atomic_load(&shm->dropped_no_ring);
    for (uint32_t i = 0, n = ct_shm_rings_in_use(shm); i < n; i++)
        dropped += atomic_load(&ct_shm_ring(shm, i)->dropped);
    return dropped;
}

#endif
