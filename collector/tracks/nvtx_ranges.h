/*
 * NVTX ranges and marks on their thread's track (nvtx_ranges.c).
 */
#ifndef CT_COLLECTOR_NVTX_RANGES_H
#define CT_COLLECTOR_NVTX_RANGES_H

#include <stdint.h>

#include "cudatrace/record.h"
#include "collector/perfetto/writer.h"

void ct_nvtx_start(uint32_t rings);
/* The name of the push or mark at `key` on ring `index` arrived. */
void ct_nvtx_name(uint32_t index, uint64_t key, uint32_t name);
/* A CT_REC_NVTX of ring `index`, at `ts_ns`, onto the thread's sequence. */
void ct_nvtx_record(uint32_t index, struct ct_sequence *seq, const struct ct_record *r,
                    uint64_t ts_ns);
/* Ends the ranges open on ring `index` at `ts_ns`, as a chunk of a
 * bounded trace ends, and begins them again at `ts_ns` in the next. */
void ct_nvtx_suspend(uint32_t index, struct ct_sequence *seq, uint64_t ts_ns);
void ct_nvtx_resume(uint32_t index, struct ct_sequence *seq, uint64_t ts_ns);
/* Ends the ranges still open on ring `index` at `end_ns` (the thread or
 * the process ended inside them). */
void ct_nvtx_close(uint32_t index, struct ct_sequence *seq, uint64_t end_ns);

#endif
