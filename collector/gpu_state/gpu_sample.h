/*
 * What the NVML sampler hands the trace writer: the devices it chose with
 * their fixed facts, one sample per device and interval with every measure
 * it could read, and how NVML fared. The sampler's thread makes them, the
 * collector's main thread writes them (sampler.c passes them across).
 */
#ifndef CT_COLLECTOR_GPU_SAMPLE_H
#define CT_COLLECTOR_GPU_SAMPLE_H

#include <stdint.h>

#define CT_GPU_DEVICES_MAX 16
#define CT_GPU_PROCESSES_MAX 32

/* X(id, track): each measure sampled, and the counter track it goes on
 * (trace_names.h). */
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
    X(PERSISTENCE, gpu_persistence)

enum ct_gpu_measure {
#define CT_GPU_MEASURE_ENUM(id, track) CT_GPU_##id,
    CT_FOR_EACH_GPU_MEASURE(CT_GPU_MEASURE_ENUM)
#undef CT_GPU_MEASURE_ENUM
        CT_GPU_MEASURES
};

/* A device the sampler follows: `slot` is its place in the sampler's list,
 * `ordinal` the CUDA device number the traced process knows it by. */
struct ct_gpu_device {
    uint32_t slot, nvml_index, ordinal;
    char uuid[96], pci_bus_id[32], name[96];
    uint32_t sm_clock_max, memory_clock_max, power_default_limit, pcie_generation_max,
        pcie_width_max; /* 0: unknown */
};

struct ct_gpu_process {
    uint32_t pid;
    uint64_t bytes;
};

struct ct_gpu_sample {
    uint64_t ts_ns; /* CLOCK_BOOTTIME, the trace's clock */
    uint32_t slot;
    uint32_t have; /* a bit per measure read */
    uint64_t value[CT_GPU_MEASURES];
    int have_reasons, have_processes;
    uint64_t reasons; /* nvmlClocksEventReason* bits */
    uint32_t process_count;
    struct ct_gpu_process processes[CT_GPU_PROCESSES_MAX];
};

enum ct_gpu_event_kind {
    CT_GPU_EVENT_DEVICE, /* a device the sampler chose */
    CT_GPU_EVENT_SAMPLE,
    CT_GPU_EVENT_LOST, /* the device fell off the bus: no more samples of it */
};

struct ct_gpu_event {
    enum ct_gpu_event_kind kind;
    uint64_t ts_ns;
    union {
        struct ct_gpu_device device;
        struct ct_gpu_sample sample;
        uint32_t lost_slot;
    };
};

#endif
