/*
 * The process's calls per function so far, for `cudatrace ctl PID status`
 * (totals.c): the totals of the threads that ended, and those the live
 * threads' rings hold now.
 */
#ifndef CT_COLLECTOR_CONTROL_TOTALS_H
#define CT_COLLECTOR_CONTROL_TOTALS_H

#include "cudatrace/shm_layout.h"

/* A thread ended with these totals. */
void ct_control_totals_ended(const struct ct_call_stats *stats);
/* The whole process's so far, into `out` (CT_FN_COUNT entries). */
void ct_control_totals_now(struct ct_shm_header *shm, struct ct_call_stats *out);

#endif
