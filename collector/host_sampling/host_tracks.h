/*
 * The host sampler's readings in the trace: per thread of the traced
 * process a state track (a span per run of samples in one state, with what
 * it slept in) and counters of its CPU and run-queue shares, per worker a
 * CPU counter, and one cudatrace.host instant that says how sampling fared
 * (host_tracks.c, struct ct_host_tracks, which the builder holds).
 */
#ifndef CT_COLLECTOR_HOST_TRACKS_H
#define CT_COLLECTOR_HOST_TRACKS_H

#include <stddef.h>
#include <stdint.h>

#include "collector/host_sampling/python_samples.h"
#include "collector/perfetto/writer.h"
#include "common/u64_map.h"
#include "cudatrace/shm_layout.h"

struct ct_host_view;

struct ct_host_tracks {
    struct ct_sequence seq;
    struct ct_u64_map view_index; /* is worker << 32 | id, + 1 -> place + 1 */
    struct ct_host_view *views;   /* each thread's and worker's, in the order first seen */
    size_t view_count;
    uint32_t sample_hz;
    struct ct_python_samples python;
};

/* Starts the sampler at the rate the process set (CUDATRACE_SAMPLE_HZ); its
 * readings go to `w`. */
void ct_host_state_start(struct ct_host_tracks *h, struct ct_shm_header *shm, struct ct_writer *w);
/* Writes what the sampler has handed over; once per drain cycle. */
void ct_host_state_write(struct ct_host_tracks *h);
/* Stops the sampler, writes the rest, closes the spans still open and
 * writes the instant that says how sampling fared, at `end_ns`. */
void ct_host_state_finish(struct ct_host_tracks *h, uint64_t end_ns);

#endif
