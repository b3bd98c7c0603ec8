/*
 * The GPU's own state in the trace: what the NVML sampler read, written as
 * counter tracks, a clock-events track and a processes track per device.
 */
#ifndef CT_COLLECTOR_GPU_STATE_TRACKS_H
#define CT_COLLECTOR_GPU_STATE_TRACKS_H

#include <stdint.h>

#include "cudatrace/shm_layout.h"

/* Starts the sampler at the interval the process set (CUDATRACE_NVML_MS). */
void ct_gpu_state_start(const struct ct_shm_header *shm);
/* Writes what the sampler has handed over; once per drain cycle. */
void ct_gpu_state_write(void);
/* Stops the sampler (a bounded wait), writes the rest and closes the spans
 * still open at `end_ns`, then the one instant that says how NVML fared. */
void ct_gpu_state_finish(uint64_t end_ns);

#endif
