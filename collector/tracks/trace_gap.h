/*
 * The marked gap of a bounded trace, and what of the dropped middle must
 * stay whole (trace_gap.c, struct ct_trace_gap, which the builder holds).
 */
#ifndef CT_COLLECTOR_TRACE_GAP_H
#define CT_COLLECTOR_TRACE_GAP_H

#include "collector/perfetto/writer.h"
#include "collector/tracks/chunk_keeper.h"
#include "collector/tracks/gap_gpu.h"
#include "collector/tracks/memory_counters.h"
#include "collector/tracks/usage_tally.h"
#include "cudatrace/functions.h"
#include "cudatrace/shm_layout.h"

struct ct_trace_gap {
    const struct ct_memory_counters *memory; /* whose peaks the gap carries */
    struct ct_gap_memory *live_memory;       /* the dropped chunks' live blocks */
    struct ct_gap_gpu *gpu;                  /* and GPU work */
    struct ct_usage_tally *usage;            /* and what the usage findings read of them */
    struct ct_chunk_keeper chunks;           /* the totals of each chunk's ended threads */
    struct ct_call_stats dropped[CT_FN_COUNT];
};

/* The gap marker of the trace `w` writes, with the peaks of `memory`, the
 * live blocks of `live_memory`, the GPU work of `gpu` and the tallies of
 * `usage`. */
void ct_trace_gap_start(struct ct_trace_gap *g, struct ct_writer *w,
                        const struct ct_memory_counters *memory, struct ct_gap_memory *live_memory,
                        struct ct_gap_gpu *gpu, struct ct_usage_tally *usage);
/* A thread's totals, written as it ended, into `chunk`, the one they are
 * written in. */
void ct_trace_gap_thread_totals(struct ct_trace_gap *g, const struct ct_call_stats *stats,
                                uint32_t chunk);

#endif
