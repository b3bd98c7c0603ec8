/*
 * What became of CUPTI in a process, as the trace's "cudatrace.cupti" and
 * "cudatrace.gpu" instants say (cupti.c).
 */
#ifndef CT_VIEWER_MODEL_CUPTI_H
#define CT_VIEWER_MODEL_CUPTI_H

#include <stdint.h>

#include "viewer-export/read/trace_decode.h"

/* What became of CUPTI in a process (the "cudatrace.cupti" and
 * "cudatrace.gpu" instants); state is NULL when the trace does not say. */
struct ct_cupti_report {
    const char *state;   /* "active", "unavailable", "no_gpu" or "yielded" */
    const char *library; /* the libcupti used, or NULL */
    const char *reason;  /* why not, or why no longer; NULL while active */
    uint64_t reason_ns;  /* when it said so */
    int64_t version, result;
    int finished; /* the totals were written */
    uint64_t kernels, memcpys, memsets, dropped, unmapped;
    /* Records that gave no time: buffers whose reading stopped at an
     * incomplete record, and records without timestamps. */
    uint64_t incomplete, untimed;
    uint64_t clock_samples, clock_reading_error_ns, clock_drift_ns;
    uint64_t delivery_median_ns, delivery_max_ns; /* GPU work's end to the collector */
};

/* Notes a CUPTI instant of the trace; 0 when `e` is none. */
int ct_cupti_instant(struct ct_cupti_report *c, const struct ct_event *e);
/* Where GPU timings end: where the program took CUPTI over, else `end`. */
uint64_t ct_cupti_gpu_end(const struct ct_cupti_report *c, uint64_t end);

#endif
