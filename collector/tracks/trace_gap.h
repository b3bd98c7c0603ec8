/*
 * The marked gap of a bounded trace, and what of the dropped middle must
 * stay whole (trace_gap.c).
 */
#ifndef CT_COLLECTOR_TRACE_GAP_H
#define CT_COLLECTOR_TRACE_GAP_H

#include "collector/perfetto/writer.h"
#include "cudatrace/shm_layout.h"

/* The gap marker of the trace `w` writes. */
void ct_trace_gap_start(struct ct_writer *w);
/* A thread's totals, written as it ended, into `chunk`, the one they are
 * written in. */
void ct_trace_gap_thread_totals(const struct ct_call_stats *stats, uint32_t chunk);

#endif
