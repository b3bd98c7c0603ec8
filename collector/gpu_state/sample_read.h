/*
 * One reading of a device's changing state through NVML.
 */
#ifndef CT_COLLECTOR_GPU_SAMPLE_READ_H
#define CT_COLLECTOR_GPU_SAMPLE_READ_H

#include "collector/gpu_state/gpu_sample.h"
#include "collector/gpu_state/nvml_loader.h"

/* What a device is read through: `own`, what the process uses (a MIG
 * instance, or the GPU), and `gpu`, the GPU itself, which alone answers
 * for its clocks, power, heat, link and modes, shared by its instances. */
struct ct_gpu_handles {
    nvmlDevice_t own, gpu;
};

/* Reads every measure of `device` into `out` (its `have` bits say which
 * came); NVML_ERROR_GPU_IS_LOST when the device has gone, else
 * NVML_SUCCESS, with the calls that failed for another reason added to
 * `*failed`. */
nvmlReturn_t ct_gpu_sample_read(const struct ct_nvml *nvml, struct ct_gpu_handles device,
                                struct ct_gpu_sample *out, uint64_t *failed);

#endif
