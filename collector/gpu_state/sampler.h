/*
 * The NVML sampler: a thread of the collector's own that opens NVML,
 * chooses the devices and reads them every interval, so that no NVML call,
 * however slow, delays the draining of the rings or the collector's end.
 */
#ifndef CT_COLLECTOR_GPU_SAMPLER_H
#define CT_COLLECTOR_GPU_SAMPLER_H

#include <stdint.h>

#include "collector/gpu_state/gpu_sample.h"

enum ct_gpu_state {
    CT_GPU_STATE_OFF,      /* CUDATRACE_NVML_MS=0 */
    CT_GPU_STATE_ABSENT,   /* no libnvidia-ml.so.1 to load */
    CT_GPU_STATE_FAILED,   /* it loaded, and would not start */
    CT_GPU_STATE_SAMPLING, /* it sampled until the end */
    CT_GPU_STATE_STUCK,    /* an NVML call had not returned when the trace ended */
};

struct ct_gpu_status {
    enum ct_gpu_state state;
    char reason[256];
    char driver[80];
    uint64_t failed_calls, dropped_events;
};

/* Starts sampling every `interval_ms` (0: not at all) the devices that
 * `visible` (CUDA_VISIBLE_DEVICES, or NULL) names. */
void ct_gpu_sampler_start(uint32_t interval_ms, const char *visible);
/* What CUDA says of the process's devices: each one's UUID by ordinal,
 * then how many there are; the sampler matches them to NVML's when
 * CUDA_VISIBLE_DEVICES alone cannot say which they are. */
void ct_gpu_sampler_cuda_device(uint32_t ordinal, const char *uuid);
void ct_gpu_sampler_cuda_devices(uint32_t count);
/* Takes the oldest event the sampler made; 0 when there is none. */
int ct_gpu_sampler_next(struct ct_gpu_event *out);
/* Stops the sampler, waiting for it at most `bound_ms`: a thread still
 * inside NVML then is left behind, and the state says so. */
void ct_gpu_sampler_stop(uint32_t bound_ms, struct ct_gpu_status *out);

#endif
