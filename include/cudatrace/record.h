/*
 * The record format and shared-memory ring layout: the one interface between
 * libcudatrace.so (producer, inside the traced process) and the collector
 * (consumer, a separate process). Both sides map the same memfd and check
 * CT_SHM_MAGIC and CT_RECORD_VERSION before touching anything else, so a
 * preload and a collector from different builds refuse each other instead of
 * misreading records. Every record has one fixed size so the producer's hot
 * path is a bounds check, a 64-byte store and a release of the head index.
 */
#ifndef CUDATRACE_RECORD_H
#define CUDATRACE_RECORD_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cudatrace/functions.h"

#define CT_SHM_MAGIC 0x43545243u /* "CRTC" */
#define CT_RECORD_VERSION 5u

enum ct_record_type {
    CT_REC_CALL = 1,         /* one CUDA runtime call, see functions.h         */
    CT_REC_STRING = 2,       /* a chunk of a string the collector interns       */
    CT_REC_PROCESS_INFO = 3, /* arg: runtime version, driver version, devices   */
    CT_REC_LIBRARY = 4,      /* a CUDA-stack library event, on the loader ring  */
    CT_REC_NVTX = 5,         /* an NVTX range or mark, see enum ct_nvtx_event   */
    CT_REC_CUPTI_CALL = 6,   /* a call only CUPTI saw, laid out as CT_REC_CALL  */
    CT_REC_CORRELATION = 7,  /* CUPTI's id for the next call record, see below  */
    CT_REC_GPU = 8,          /* GPU work as the GPU ran it, see enum ct_gpu_kind */
    CT_REC_GPU_CLOCK = 9,    /* CUPTI's clock read between two of ours          */
    CT_REC_CUPTI_STATE = 10, /* what became of CUPTI, see enum ct_cupti_state   */
};

/* CT_REC_CORRELATION: begin is the begin clock of the call record that
 * follows it on the same ring, arg[0] CUPTI's correlation id for that call,
 * which the GPU work it caused carries too. */

/* CT_REC_GPU: func is the kind, result the device, begin and end CUPTI's
 * timestamps (mapped through the CT_REC_GPU_CLOCK readings), arg[0] the
 * correlation id | the CUPTI stream id << 32, and then per kind:
 *   KERNEL: arg[1] the name's key (a CT_STR_GPU_KERNEL_NAME), arg[2] grid
 *           and arg[3] block (CT_PACK_DIM3), arg[4] registers per thread |
 *           static shared memory << 16 | dynamic shared memory << 40;
 *   MEMCPY: arg[1] bytes, arg[2] CUPTI's copy kind | source memory kind << 8
 *           | destination memory kind << 16;
 *   MEMSET: arg[1] bytes, arg[2] the value;
 *   SYNC:   arg[2] CUPTI's synchronization type;
 *   MEMORY: arg[1] bytes, arg[2] 1 for an allocation, 2 for a release,
 *           arg[3] the address (begin == end: the moment it happened);
 *   OVERHEAD: arg[2] CUPTI's overhead kind. */
enum ct_gpu_kind {
    CT_GPU_KERNEL = 1,
    CT_GPU_MEMCPY = 2,
    CT_GPU_MEMSET = 3,
    CT_GPU_SYNC = 4,
    CT_GPU_MEMORY = 5,
    CT_GPU_OVERHEAD = 6,
};

/* CT_REC_GPU_CLOCK: begin and end our clock around arg[0], CUPTI's. */

/* CT_REC_CUPTI_STATE: func the state, result CUPTI's result code (0 when
 * not CUPTI's answer), arg[0] CUPTI's version, arg[1] activity records
 * CUPTI dropped so far; a CT_STR_CUPTI_TEXT keyed by the record's begin
 * comes first: the library's path when active, else why not. */
enum ct_cupti_state {
    CT_CUPTI_ACTIVE = 1,      /* subscribed, GPU activity recorded          */
    CT_CUPTI_UNAVAILABLE = 2, /* not used: the text says why                */
    CT_CUPTI_DROPPED = 3,     /* arg[1]: CUPTI's dropped count went up to it */
    CT_CUPTI_NO_GPU = 4,      /* not tried: no driver or no device to trace  */
    CT_CUPTI_YIELDED = 5,     /* handed over to the program's own CUPTI use  */
};

/* CT_REC_NVTX: func is the event, begin the clock, result the nesting depth
 * the push or pop left (NVTX's own return value); a push or a mark is
 * preceded by its CT_STR_NVTX_NAME, keyed by the same clock. */
enum ct_nvtx_event {
    CT_NVTX_PUSH = 1,
    CT_NVTX_POP = 2,
    CT_NVTX_MARK = 3,
};

/* CT_REC_LIBRARY: func is the event, result the dlopen mode (or -1), begin
 * the clock when the load was requested, end when it was seen done; arg[0]
 * the event's key (its strings carry it), arg[1] the requesting thread,
 * arg[2] how it was requested (enum ct_library_request), arg[3] the object's
 * load address, arg[4] how many identical attempts failed (CT_LIB_FAILED). The strings that go with
 * it come first, on the same ring. */
enum ct_library_event {
    CT_LIB_LOADED = 1,
    CT_LIB_FAILED = 2,
    CT_LIB_UNLOADED = 3,
};

enum ct_library_request {
    CT_LIB_BY_DLOPEN = 1, /* a dlopen of that name                       */
    CT_LIB_BY_NEEDED = 2, /* a DT_NEEDED entry of an object being loaded */
    CT_LIB_AT_START = 3,  /* mapped before the program started           */
    CT_LIB_ALREADY = 4,   /* a dlopen of an object that was loaded before */
    CT_LIB_INHERITED = 5, /* mapped before this process forked           */
};

/* What a CT_REC_STRING names; `key` says which one of that kind. */
enum ct_string_kind {
    CT_STR_KERNEL_NAME = 1,     /* key: the host function pointer that was launched */
    CT_STR_DEVICE_NAME = 2,     /* key: device ordinal | compute capability << 32 (90) */
    CT_STR_LIBRARY_VERSION = 3, /* key: version its own API reports; text: path  */
    CT_STR_KERNEL_LIBRARY = 4,  /* key: as CT_STR_KERNEL_NAME; text: the file   */
    /* key: a CT_REC_LIBRARY event's key */
    CT_STR_LIB_NAME = 5,         /* the name asked for                             */
    CT_STR_LIB_REQUESTER = 6,    /* the object that asked (dlopen caller, DT_NEEDED) */
    CT_STR_LIB_PATH = 7,         /* the file mapped                                */
    CT_STR_LIB_ERROR = 8,        /* what dlerror() told the program                */
    CT_STR_LIB_VIA = 9,          /* a failed dependency: the name that was dlopen'ed */
    CT_STR_CALL_SITE = 10,       /* key: the call's begin clock; bytes: call_site.h */
    CT_STR_NVTX_NAME = 11,       /* key: the CT_REC_NVTX's clock; text: its message */
    CT_STR_GPU_KERNEL_NAME = 12, /* key: as CT_REC_GPU's; text: the kernel's name  */
    CT_STR_CUPTI_TEXT = 13,      /* key: a CT_REC_CUPTI_STATE's begin              */
};

#define CT_RECORD_ARGS 5
#define CT_STRING_CHUNK (CT_RECORD_ARGS * 8)
#define CT_STRING_MAX 4096

/* Grid and block dimensions packed into one argument each: x keeps 32 bits,
 * y and z 16 bits (CUDA's own limits for grids; blocks are smaller still). */
#define CT_PACK_DIM3(x, y, z)                                                                      \
    ((uint64_t)(uint32_t)(x) | ((uint64_t)(uint16_t)(y) << 32) | ((uint64_t)(uint16_t)(z) << 48))
#define CT_DIM3_X(v) ((uint32_t)(v))
#define CT_DIM3_Y(v) ((uint32_t)(((v) >> 32) & 0xffff))
#define CT_DIM3_Z(v) ((uint32_t)((v) >> 48))

/* Copy kind for cudaMemcpyPeer*: not a cudaMemcpyKind, so it cannot collide. */
#define CT_COPY_KIND_PEER 100

struct ct_record {
    uint16_t type;  /* enum ct_record_type                                 */
    uint16_t func;  /* CALL: enum ct_function; STRING: enum ct_string_kind */
    int32_t result; /* CALL: cudaError_t; STRING: bytes in this chunk      */
    uint64_t begin; /* CALL: clock at entry; STRING: key                   */
    uint64_t end;   /* CALL: clock at return; STRING: offset, total << 32  */
    union {
        uint64_t arg[CT_RECORD_ARGS];
        char text[CT_STRING_CHUNK];
    };
};
_Static_assert(sizeof(struct ct_record) == 64, "records are one cache line");

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

/* A ring that fills spills into segments of a pool shared by all rings, in
 * the same memfd, so a burst gets more room before anything is dropped. The
 * producer writes to the spill chain from the moment the ring is full until
 * the consumer has read everything spilled and the ring has room again; the
 * consumer reads the ring before the chain, so records keep their order.
 * The pool is sparse: a segment's pages exist only while it holds records
 * (the collector gives them back once read). */
#define CT_SPILL_SEGMENT_RECORDS 16384u /* 1 MiB */
#define CT_SPILL_CHAIN 128u             /* segments in the pool, and in one ring's chain */
#define CT_SPILL_TICKET (1ull << 63)    /* a reserved slot in the chain, not the ring */

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

struct ct_shm_header {
    uint32_t magic;
    uint32_t version;
    uint32_t ring_count;
    uint32_t ring_capacity; /* records per ring, a power of two */
    uint32_t clock;         /* enum ct_clock_kind               */
    int32_t pid;
    uint32_t loader_ring;  /* the ring of library events, written under a lock */
    int32_t collector_pid; /* written by the collector as it starts */
    /* One reading of both clocks at process start: the collector's anchor for
     * mapping ticks to nanoseconds, and the process start time in the trace. */
    uint64_t start_ticks;
    uint64_t start_boot_ns;
    _Atomic uint64_t exit_ticks;      /* 0 until the process exits normally   */
    _Atomic uint64_t dropped_no_ring; /* records of threads that found no ring */
    /* Written by the collector as it finishes, read by the preload's summary. */
    _Atomic uint32_t collector_done;
    uint32_t collector_error; /* errno of the failed output, or 0 */
    _Atomic uint64_t collector_records;
    _Atomic uint64_t collector_bytes;
    uint32_t spill_count;                             /* segments in the pool; 0: none */
    _Atomic uint64_t spill_free[CT_SPILL_CHAIN / 64]; /* a set bit: that segment is free */
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

/* Numbers the rings and reserves ring 0 for library events: it belongs to
 * no thread, is written by whichever thread looks at the link map (one at a
 * time), and stays active for the whole session, so no thread claims it. */
static inline void ct_shm_init_rings(struct ct_shm_header *shm)
{
    for (uint32_t i = 0; i < shm->ring_count; i++)
        ct_shm_ring(shm, i)->index = i;
    shm->loader_ring = 0;
    atomic_store(&ct_shm_ring(shm, 0)->state, CT_RING_ACTIVE);
    for (uint32_t i = 0; i < shm->spill_count && i < CT_SPILL_CHAIN; i++)
        atomic_fetch_or(&shm->spill_free[i / 64], 1ull << (i % 64));
}

/* Records lost so far: full rings plus threads that found no free ring. */
static inline uint64_t ct_shm_dropped(struct ct_shm_header *shm)
{
    uint64_t dropped = atomic_load(&shm->dropped_no_ring);
    for (uint32_t i = 0; i < shm->ring_count; i++)
        dropped += atomic_load(&ct_shm_ring(shm, i)->dropped);
    return dropped;
}

#endif
