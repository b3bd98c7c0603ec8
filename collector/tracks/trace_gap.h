/*
 * The marked gap of a bounded trace, and what of the dropped middle must
 * stay whole (trace_gap.c).
 */
#ifndef CT_COLLECTOR_TRACE_GAP_H
#define CT_COLLECTOR_TRACE_GAP_H

#include "cudatrace/shm_layout.h"

void ct_trace_gap_start(void);
/* A thread's totals, written as it ended, into the chunk being written. */
void ct_trace_gap_thread_totals(const struct ct_call_stats *stats);

#endif
