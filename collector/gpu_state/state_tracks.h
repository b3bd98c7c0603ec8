/*
 * The GPU's own state in the trace: what the NVML sampler read, written as
 * counter tracks, a clock-events track and a processes track per device.
 */
#ifndef CT_COLLECTOR_GPU_STATE_TRACKS_H
#define CT_COLLECTOR_GPU_STATE_TRACKS_H

#include <stdint.h>

#include "collector/perfetto/writer.h"
#include "cudatrace/shm_layout.h"

/* Starts the sampler at the interval the process set (CUDATRACE_NVML_MS);
 * its readings go to `w`. */
void ct_gpu_state_start(const struct ct_shm_header *shm, struct ct_writer *w);
/* A device the process uses, as CUDA names it: its ordinal and UUID
 * (CT_STR_DEVICE_UUID); then how many CUDA devices it has (-1: CUDA would
 * not say), once all have come. */
void ct_gpu_state_cuda_device(uint64_t ordinal, const char *uuid);
void ct_gpu_state_cuda_devices(int64_t count);
/* Writes what the sampler has handed over; once per drain cycle. */
void ct_gpu_state_write(void);
/* Stops the sampler (a bounded wait), writes the rest and closes the spans
 * still open at `end_ns`, then the one instant that says how NVML fared. */
void ct_gpu_state_finish(uint64_t end_ns);

#endif
