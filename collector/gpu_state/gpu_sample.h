/*
 * What the NVML sampler hands the trace writer: the devices it chose with
 * their fixed facts, one sample per device and interval with every measure
 * it could read, and how NVML fared. The sampler's thread makes them, the
 * collector's main thread writes them (sampler.c passes them across).
 */
#ifndef CT_COLLECTOR_GPU_SAMPLE_H
#define CT_COLLECTOR_GPU_SAMPLE_H

#include <stdint.h>

#include "cudatrace/gpu_measures.h"

#define CT_GPU_DEVICES_MAX 16
#define CT_GPU_PROCESSES_MAX 32

/* A device the sampler follows: `slot` is its place in the sampler's list,
 * `ordinal` the CUDA device number the traced process knows it by. */
struct ct_gpu_device {
    uint32_t slot, nvml_index, ordinal;
    char uuid[96], pci_bus_id[32], name[96];
    char gpu_uuid[96]; /* for a MIG instance, the GPU it is part of; else empty */
    uint32_t sm_clock_max, memory_clock_max, power_default_limit, pcie_generation_max,
        pcie_width_max; /* 0: unknown */
    /* What nvmlDeviceGetHandleByIndex_v2 answered (an nvmlReturn_t): other
     * than NVML_SUCCESS, the device is counted but cannot be read. */
    int32_t opened;
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
    uint32_t denied; /* refused with NVML_ERROR_NO_PERMISSION: a bit per measure, and these */
};

enum { CT_GPU_DENIED_REASONS = CT_GPU_MEASURES, CT_GPU_DENIED_PROCESSES };

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
