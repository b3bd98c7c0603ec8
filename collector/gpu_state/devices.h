/*
 * Which GPUs the sampler follows: the ones the traced process can use.
 */
#ifndef CT_COLLECTOR_GPU_DEVICES_H
#define CT_COLLECTOR_GPU_DEVICES_H

#include "collector/gpu_state/gpu_sample.h"
#include "collector/gpu_state/nvml_loader.h"
#include "collector/gpu_state/sample_read.h"

/* Fills `out` and `handles` with the devices CUDA_VISIBLE_DEVICES (as the
 * process started with it; NULL when unset) names, in its order, else with
 * every device NVML has; returns how many. */
uint32_t ct_gpu_devices_choose(const struct ct_nvml *nvml, const char *visible,
                               struct ct_gpu_device out[CT_GPU_DEVICES_MAX],
                               struct ct_gpu_handles handles[CT_GPU_DEVICES_MAX]);

#endif
