/*
 * The GPU measures the collector samples through NVML and the report reads
 * back: each with the counter track (trace_names.h) it goes on, one per
 * device, so both sides number them alike.
 */
#ifndef CUDATRACE_GPU_MEASURES_H
#define CUDATRACE_GPU_MEASURES_H

/* X(id, track) */
#define CT_FOR_EACH_GPU_MEASURE(X)                                                                 \
    X(UTILIZATION, gpu_utilization)                                                                \
    X(MEMORY_UTILIZATION, gpu_memory_utilization)                                                  \
    X(SM_CLOCK, gpu_sm_clock)                                                                      \
    X(MEMORY_CLOCK, gpu_memory_clock)                                                              \
    X(POWER, gpu_power)                                                                            \
    X(POWER_LIMIT, gpu_power_limit)                                                                \
    X(TEMPERATURE, gpu_temperature)                                                                \
    X(POWER_VIOLATION, gpu_power_violation)                                                        \
    X(THERMAL_VIOLATION, gpu_thermal_violation)                                                    \
    X(PCIE_GENERATION, gpu_pcie_generation)                                                        \
    X(PCIE_WIDTH, gpu_pcie_width)                                                                  \
    X(PCIE_REPLAYS, gpu_pcie_replays)                                                              \
    X(ECC_CORRECTED, gpu_ecc_corrected)                                                            \
    X(ECC_UNCORRECTED, gpu_ecc_uncorrected)                                                        \
    X(COMPUTE_MODE, gpu_compute_mode)                                                              \
    X(PERSISTENCE, gpu_persistence)                                                                \
    X(MEMORY_USED, gpu_memory_used)

enum ct_gpu_measure {
#define CT_GPU_MEASURE_ENUM(id, track) CT_GPU_##id,
    CT_FOR_EACH_GPU_MEASURE(CT_GPU_MEASURE_ENUM)
#undef CT_GPU_MEASURE_ENUM
        CT_GPU_MEASURES
};

/* The clock-event reasons the report tells apart (nvml.h's
 * nvmlClocksEventReason* bits, as the `reasons` annotation carries them). */
#define CT_GPU_REASON_IDLE 0x1ull
#define CT_GPU_REASON_SW_POWER_CAP 0x4ull
#define CT_GPU_REASON_HW_SLOWDOWN 0x8ull
#define CT_GPU_REASON_SW_THERMAL 0x20ull
#define CT_GPU_REASON_HW_THERMAL 0x40ull
#define CT_GPU_REASON_HW_POWER_BRAKE 0x80ull

#endif
