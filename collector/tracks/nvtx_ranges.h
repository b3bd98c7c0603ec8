/*
 * NVTX ranges and marks on their thread's track (nvtx_ranges.c, struct
 * ct_nvtx_ranges, which the builder holds).
 */
#ifndef CT_COLLECTOR_NVTX_RANGES_H
#define CT_COLLECTOR_NVTX_RANGES_H

#include <stdint.h>

#include "cudatrace/record.h"
#include "collector/perfetto/writer.h"
#include "collector/tracks/usage_tally.h"
#include "common/u64_map.h"

struct ct_nvtx_ring;

struct ct_nvtx_ranges {
    struct ct_usage_tally *usage; /* told of each range that says step */
    struct ct_nvtx_ring *rings;   /* what each ring's thread has open */
    uint32_t category, continued; /* the string ids of the annotations' "nvtx" and key */
    struct ct_u64_map says_step;  /* name id + 1 -> 2 when it says step, 1 when not */
};

/* The ranges of `rings` rings, whose steps `usage` tallies. */
void ct_nvtx_start(struct ct_nvtx_ranges *n, uint32_t rings, struct ct_usage_tally *usage);
/* The name of the push or mark at `key` on ring `index` arrived. */
void ct_nvtx_name(struct ct_nvtx_ranges *n, uint32_t index, uint64_t key, uint32_t name);
/* A CT_REC_NVTX of ring `index`, at `ts_ns`, onto the thread's sequence. */
void ct_nvtx_record(struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                    const struct ct_record *r, uint64_t ts_ns);
/* Ends the ranges open on ring `index` at `ts_ns`, as a chunk of a
 * bounded trace ends, and begins them again at `ts_ns` in the next. */
void ct_nvtx_suspend(const struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                     uint64_t ts_ns);
void ct_nvtx_resume(const struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                    uint64_t ts_ns);
/* Ends the ranges still open on ring `index` at `end_ns` (the thread or
 * the process ended inside them). */
void ct_nvtx_close(struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                   uint64_t end_ns);

#endif
