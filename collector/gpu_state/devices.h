/*
 * Which GPUs the sampler follows: the ones the traced process can use.
 */
#ifndef CT_COLLECTOR_GPU_DEVICES_H
#define CT_COLLECTOR_GPU_DEVICES_H

#include "collector/gpu_state/gpu_sample.h"
#include "collector/gpu_state/nvml_loader.h"
#include "collector/gpu_state/sample_read.h"

/* A UUID as CUDA gives it, without NVML's "GPU-" or "MIG-", and its NUL. */
#define CT_GPU_UUID_MAX 48

/* Fills `out` and `handles` with the devices CUDA_VISIBLE_DEVICES (as the
 * process started with it; NULL when unset) names, in its order, else with
 * every device NVML has; returns how many. None, with `*by_cuda` set, when
 * which they are depends on CUDA's order of devices: they are matched
 * later, by UUID (ct_gpu_devices_match). */
uint32_t ct_gpu_devices_choose(const struct ct_nvml *nvml, const char *visible,
                               struct ct_gpu_device out[CT_GPU_DEVICES_MAX],
                               struct ct_gpu_handles handles[CT_GPU_DEVICES_MAX], int *by_cuda);
/* The same from CUDA's own account: `uuids` by CUDA ordinal, each matched
 * to the NVML GPU or MIG instance with that UUID; one no readable device
 * has is the device NVML would not open, when there is one, and else not
 * followed. Returns how many. */
uint32_t ct_gpu_devices_match(const struct ct_nvml *nvml, const char uuids[][CT_GPU_UUID_MAX],
                              uint32_t count, struct ct_gpu_device out[CT_GPU_DEVICES_MAX],
                              struct ct_gpu_handles handles[CT_GPU_DEVICES_MAX]);

#endif
