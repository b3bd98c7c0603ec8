/*
 * The records the preload (producer, inside the traced process) writes and
 * the collector (consumer, a separate process) reads: their kinds, what each
 * field holds per kind, and how arguments that share a field are packed,
 * as inline functions both sides call, so a layout is written down once.
 * Every record has one fixed size so the producer's hot path is a bounds
 * check, a 64-byte store and a release of the head index. Where records
 * live (the rings in shared memory) is shm_layout.h; CT_RECORD_VERSION
 * covers both, and both sides check it before reading anything.
 */
#ifndef CUDATRACE_RECORD_H
#define CUDATRACE_RECORD_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cudatrace/functions.h"

#define CT_RECORD_VERSION 17u

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
    CT_REC_CAPTURE = 11,     /* a capture window opened (func 1) or closed (0)  */
    CT_REC_GRAPH = 12,       /* a CUDA graph's node or executable, see below    */
};

/* Whether a record's begin is the program's clock, the same on every ring
 * (records of other kinds carry a key or CUPTI's clock there). */
static inline int ct_record_on_program_clock(uint16_t type)
{
    return type == CT_REC_CALL || type == CT_REC_CUPTI_CALL || type == CT_REC_NVTX ||
           type == CT_REC_LIBRARY || type == CT_REC_CORRELATION || type == CT_REC_CAPTURE ||
           type == CT_REC_GRAPH;
}

/* CT_REC_GRAPH: func the event, begin the begin clock of the API call it
 * happened in (the call's record, when it has one, comes after it on the
 * same ring, and so does the call's site, keyed by that clock), from
 * CUPTI's resource callbacks; ids are CUPTI's (cuptiGetGraphNodeId,
 * cuptiGetGraphId, cuptiGetGraphExecId):
 *   NODE_MADE:   arg[0] the node, arg[1] its graph, arg[2] its
 *                CUgraphNodeType; the call captured it (a launch, copy,
 *                set, allocation or free on a capturing stream) or added it;
 *   NODE_CLONED: arg[0] the clone, arg[1] the node it is a copy of,
 *                arg[2] the clone's graph, arg[3] the CUgraphNodeType;
 *                instantiation clones each node of the graph, ahead of
 *                the EXEC_MADE that closes it on the same ring;
 *   GRAPH_MADE:  arg[0] the graph (a capture begun, cudaGraphCreate);
 *   GRAPH_CLONED: arg[0] the clone, arg[1] the graph it is a copy of;
 *   EXEC_MADE:   arg[0] the executable graph, arg[1] the graph it was made
 *                from, arg[2] its handle (what a launch names);
 *   EXEC_GONE:   arg[0] the executable graph, arg[2] its handle;
 *   MEMORY:      what the graphs' allocator holds on device arg[0], as the
 *                preload read it after a call that may change it (begin:
 *                then): arg[1] reserved, arg[2] in use (the runtime's
 *                cudaGraphMemAttrReservedMemCurrent, UsedMemCurrent). */
enum ct_graph_event {
    CT_GRAPH_NODE_MADE = 1,
    CT_GRAPH_NODE_CLONED = 2,
    CT_GRAPH_GRAPH_MADE = 3,
    CT_GRAPH_GRAPH_CLONED = 4,
    CT_GRAPH_EXEC_MADE = 5,
    CT_GRAPH_EXEC_GONE = 6,
    CT_GRAPH_MEMORY = 7,
};

/* CT_REC_CAPTURE: begin the clock when the preload opened or closed the
 * capture window, result what opened it: CT_CAPTURE_PROFILER or
 * CT_CAPTURE_NVTX (enum ct_capture_kind, shm_layout.h). */

/* CT_REC_CORRELATION: begin is the begin clock of the call record that
 * follows it on the same ring, arg[0] CUPTI's correlation id for that call,
 * arg[1..3] (0 when none) the ids of calls made inside it that CUPTI gave ids
 * of their own: the GPU work the call caused carries one of them. */

/* CT_REC_GPU: func is the kind, result the device, begin and end CUPTI's
 * timestamps (mapped through the CT_REC_GPU_CLOCK readings), arg[0] the
 * correlation and stream ids (ct_pack_gpu_ids), and then per kind:
 *   KERNEL: arg[1] the name's key (a CT_STR_GPU_KERNEL_NAME), arg[2] grid
 *           and arg[3] block (ct_pack_dim3), arg[4] registers and shared
 *           memory (ct_pack_kernel_resources);
 *   MEMCPY: arg[1] bytes, arg[2] CUPTI's copy kind and the memory kinds of
 *           source and destination (ct_pack_copy_kinds), arg[3] the copies
 *           the record stands for (CUPTI's copyCount: a batch's, else 1);
 *   MEMSET: arg[1] bytes, arg[2] the value;
 *   SYNC:   arg[2] CUPTI's synchronization type;
 *   MEMORY: arg[1] bytes, arg[2] 1 for an allocation, 2 for a release,
 *           arg[3] the address (begin == end: the moment it happened);
 *   OVERHEAD: arg[2] CUPTI's overhead kind;
 *   GRAPH_IDS: not work but what the next record of this ring, a kernel,
 *           copy or set a graph launch ran, carries besides: arg[1] its
 *           graphNodeId, arg[2] its graphId (begin and end 0);
 *   GRAPH:  a whole graph launch, under graph-level tracing
 *           (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): arg[2] its graphId. */
enum ct_gpu_kind {
    CT_GPU_KERNEL = 1,
    CT_GPU_MEMCPY = 2,
    CT_GPU_MEMSET = 3,
    CT_GPU_SYNC = 4,
    CT_GPU_MEMORY = 5,
    CT_GPU_OVERHEAD = 6,
    CT_GPU_GRAPH_IDS = 7,
    CT_GPU_GRAPH = 8,
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
    CT_CUPTI_UNREAD = 6,      /* arg[1..2]: ct_cupti_unread's counts so far  */
};

/* CT_CUPTI_UNREAD: the activity records CUPTI handed over that give no time,
 * so far. arg[1]: buffers whose reading stopped at a record "either
 * incomplete or invalid" (cuptiActivityGetNextRecord), each at least one
 * record, and whatever followed it in that buffer; arg[2]: records whose
 * start or end is 0, "timestamp information could not be collected". */

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
 * load address, arg[4] how many identical attempts failed (CT_LIB_FAILED).
 * The strings that go with it come first, on the same ring. */
enum ct_library_event {
    CT_LIB_LOADED = 1,
    CT_LIB_FAILED = 2,
    CT_LIB_UNLOADED = 3,
    CT_LIB_QUERIED = 4, /* an RTLD_NOLOAD dlopen of a name not loaded: loads nothing */
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
    CT_STR_DEVICE_NAME = 2,     /* key: ct_pack_device_key                        */
    CT_STR_LIBRARY_VERSION = 3, /* key: version its own API reports; text: path  */
    CT_STR_KERNEL_LIBRARY = 4,  /* key: as CT_STR_KERNEL_NAME; text: the file   */
    /* key: a CT_REC_LIBRARY event's key */
    CT_STR_LIB_NAME = 5,         /* the name asked for                             */
    CT_STR_LIB_REQUESTER = 6,    /* the object that asked (dlopen caller, DT_NEEDED) */
    CT_STR_LIB_PATH = 7,         /* the file mapped                                */
    CT_STR_LIB_ERROR = 8,        /* what dlerror() told the program                */
    CT_STR_LIB_VIA = 9,          /* a failed dependency: the name that was dlopen'ed */
    CT_STR_LIB_PYTHON = 10,      /* the Python line that asked: "file:line in function" */
    CT_STR_CALL_SITE = 11,       /* key: the call's begin clock; bytes: call_site.h */
    CT_STR_NVTX_NAME = 12,       /* key: the CT_REC_NVTX's clock; text: its message */
    CT_STR_GPU_KERNEL_NAME = 13, /* key: as CT_REC_GPU's; text: the kernel's name  */
    CT_STR_CUPTI_TEXT = 14,      /* key: a CT_REC_CUPTI_STATE's begin              */
    /* key: the device ordinal; text: its UUID as the runtime gives it, in
     * NVML's hex form without "GPU-" or "MIG-" ("c0ffee01-0000-...") */
    CT_STR_DEVICE_UUID = 15,
};

#define CT_RECORD_ARGS 5
#define CT_STRING_CHUNK (CT_RECORD_ARGS * 8)
#define CT_STRING_MAX 4096

/* Copy kind for cudaMemcpyPeer*: not a cudaMemcpyKind, so it cannot collide. */
#define CT_COPY_KIND_PEER 100

struct ct_record {
    uint16_t type;  /* enum ct_record_type                                 */
    uint16_t func;  /* CALL: enum ct_function; STRING: enum ct_string_kind */
    int32_t result; /* CALL: cudaError_t; STRING: bytes in this chunk      */
    uint64_t begin; /* CALL: clock at entry; STRING: key                   */
    uint64_t end;   /* CALL: clock at return; STRING: ct_pack_string_span  */
    union {
        uint64_t arg[CT_RECORD_ARGS];
        char text[CT_STRING_CHUNK];
    };
};
_Static_assert(sizeof(struct ct_record) == 64, "records are one cache line");

/* Arguments that share one field, packed by the preload and unpacked by the
 * collector through these and nothing else. */

/* Grid and block dimensions (launches, GPU kernels): x keeps 32 bits, y and
 * z 16 bits (CUDA's own limits for grids; blocks are smaller still). */
struct ct_dim3 {
    uint32_t x, y, z;
};

static inline uint64_t ct_pack_dim3(uint32_t x, uint32_t y, uint32_t z)
{
    return (uint64_t)x | (uint64_t)(uint16_t)y << 32 | (uint64_t)(uint16_t)z << 48;
}

static inline struct ct_dim3 ct_unpack_dim3(uint64_t v)
{
    return (struct ct_dim3){(uint32_t)v, (uint32_t)(v >> 32) & 0xffff, (uint32_t)(v >> 48)};
}

/* Two 32-bit halves of one field: the low one first. */
struct ct_halves {
    uint32_t low, high;
};

static inline uint64_t ct_pack_halves(uint32_t low, uint32_t high)
{
    return (uint64_t)low | (uint64_t)high << 32;
}

static inline struct ct_halves ct_unpack_halves(uint64_t v)
{
    return (struct ct_halves){(uint32_t)v, (uint32_t)(v >> 32)};
}

/* CT_REC_GPU arg[0]: CUPTI's correlation id (low) and stream id (high). */
static inline uint64_t ct_pack_gpu_ids(uint32_t correlation, uint32_t stream)
{
    return ct_pack_halves(correlation, stream);
}

/* CT_GPU_KERNEL arg[4]: registers per thread (16 bits), static and dynamic
 * shared memory (24 bits each). */
struct ct_kernel_resources {
    uint32_t registers, static_smem, dynamic_smem;
};

static inline uint64_t ct_pack_kernel_resources(uint32_t registers, uint32_t static_smem,
                                                uint32_t dynamic_smem)
{
    return (uint64_t)(registers & 0xffff) | (uint64_t)(static_smem & 0xffffff) << 16 |
           (uint64_t)(dynamic_smem & 0xffffff) << 40;
}

static inline struct ct_kernel_resources ct_unpack_kernel_resources(uint64_t v)
{
    return (struct ct_kernel_resources){(uint32_t)v & 0xffff, (uint32_t)(v >> 16) & 0xffffff,
                                        (uint32_t)(v >> 40) & 0xffffff};
}

/* CT_GPU_MEMCPY arg[2]: CUPTI's copy kind and the source's and the
 * destination's memory kinds, a byte each. */
struct ct_copy_kinds {
    uint32_t copy, src, dst;
};

static inline uint64_t ct_pack_copy_kinds(uint32_t copy, uint32_t src, uint32_t dst)
{
    return (uint64_t)(copy & 0xff) | (uint64_t)(src & 0xff) << 8 | (uint64_t)(dst & 0xff) << 16;
}

static inline struct ct_copy_kinds ct_unpack_copy_kinds(uint64_t v)
{
    return (struct ct_copy_kinds){(uint32_t)v & 0xff, (uint32_t)(v >> 8) & 0xff,
                                  (uint32_t)(v >> 16) & 0xff};
}

/* CT_REC_STRING end: where this chunk starts in the string (low), and the
 * string's whole length (high). */
static inline uint64_t ct_pack_string_span(uint32_t offset, uint32_t total)
{
    return ct_pack_halves(offset, total);
}

/* CT_STR_DEVICE_NAME key: the device ordinal (low) and its compute
 * capability as major * 10 + minor (high; 90 for 9.0, 0 when unknown). */
static inline uint64_t ct_pack_device_key(uint32_t ordinal, uint32_t capability)
{
    return ct_pack_halves(ordinal, capability);
}

#endif
