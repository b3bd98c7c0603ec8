/*
 * The host sampler's readings in the trace: per thread of the traced
 * process a state track (a span per run of samples in one state, with what
 * it slept in) and counters of its CPU and run-queue shares, per worker a
 * CPU counter, and one cudatrace.host instant that says how sampling fared.
 */
#ifndef CT_COLLECTOR_HOST_TRACKS_H
#define CT_COLLECTOR_HOST_TRACKS_H

#include <stdint.h>

#include "collector/perfetto/writer.h"
#include "cudatrace/shm_layout.h"

/* Starts the sampler at the rate the process set (CUDATRACE_SAMPLE_HZ); its
 * readings go to `w`. */
void ct_host_state_start(struct ct_shm_header *shm, struct ct_writer *w);
/* Writes what the sampler has handed over; once per drain cycle. */
void ct_host_state_write(void);
/* Stops the sampler, writes the rest, closes the spans still open and
 * writes the instant that says how sampling fared, at `end_ns`. */
void ct_host_state_finish(uint64_t end_ns);

#endif
