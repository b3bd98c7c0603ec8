/*
 * The GPU's own state as the collector sampled it through NVML (gpu_health.c):
 * per device its fixed facts, its samples, its clock-event spans and the
 * compute processes seen on it, and how NVML fared; the times copies ran,
 * which the link is judged by; and the summary over the CUDA part of the
 * run, while busy, that the report prints and the findings read.
 */
#ifndef CT_GPU_HEALTH_MODEL_H
#define CT_GPU_HEALTH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"
#include "cudatrace/gpu_measures.h"
#include "viewer-export/model/gpu.h"
#include "viewer-export/read/trace_decode.h"

#define CT_HEALTH_DEVICES 16
#define CT_HEALTH_PROCESSES 16

/* One sampling round: every measure read at `ts` (`have`, a bit each). */
struct ct_health_row {
    uint64_t ts;
    uint32_t have;
    int64_t value[CT_GPU_MEASURES];
};

struct ct_health_span {
    uint64_t start, end, reasons;
};

struct ct_health_process {
    uint32_t pid;
    const char *name; /* "" when /proc did not say */
    uint64_t bytes, first_ns, last_ns;
};

struct ct_health_device {
    int known;
    uint32_t ordinal, nvml_index, interval_ms;
    const char *uuid, *name, *pci_bus_id;
    const char *gpu_uuid; /* a MIG instance's GPU; "" for a GPU */
    uint64_t sm_clock_max, memory_clock_max, power_default_limit, pcie_generation_max,
        pcie_width_max;
    struct ct_health_row *rows;
    size_t row_count;
    struct ct_health_span *spans;
    size_t span_count;
    struct ct_health_process processes[CT_HEALTH_PROCESSES];
    int process_count;
    uint64_t lost_ns;       /* 0: never lost */
    const char *unreadable; /* why NVML would not open it; NULL when it did */
    const char *denied;     /* what NVML refused to read on it; NULL when nothing */
};

struct ct_gpu_health {
    struct ct_u64_map tracks; /* track uuid -> device << 8 | what, + 1 */
    struct ct_health_device devices[CT_HEALTH_DEVICES];
    const char *state, *reason, *driver; /* the cudatrace.nvml instant; NULL without one */
    uint64_t failed_calls;
    struct ct_gpu_interval *copies; /* host-to-device and back, as they ran */
    size_t copy_count;
    /* Of those, the ones CUPTI timed on the GPU: how many, what they moved
     * and the time they took, which give the bandwidth the link achieved. */
    uint64_t timed_copies, timed_copy_bytes, timed_copy_ns;
};

/* What a measure came to over the busy samples. */
struct ct_health_stat {
    uint64_t samples;
    int64_t median, min, max;
};

/* A device's summary over [from, to), over the samples that saw it busy
 * (utilization above 0): medians and extremes, the share of those samples
 * under each kind of clock event, and the link while copies ran; and the
 * SM clock over the samples busy for the whole of NVML's own sample
 * period (`full_samples`), the only ones whose clock is surely a busy
 * GPU's. `busy_ns` weights each busy sample's interval by its utilization. */
struct ct_health_summary {
    uint64_t samples, busy_samples, full_samples, busy_ns;
    struct ct_health_stat stat[CT_GPU_MEASURES];
    struct ct_health_stat sm_clock_full;
    uint64_t power_capped, thermal, hw_slowdown; /* busy samples under each */
    uint64_t other_reasons;                      /* the busy samples' reasons but idle's */
    uint64_t copy_samples, link_below;           /* samples while copies ran; of them, downgraded */
    int64_t copy_generation_min, copy_width_min;
    int64_t ecc_corrected_added, ecc_uncorrected;
    int64_t memory_used_peak; /* the device's, every process's and the driver's; -1 unknown */
    int64_t compute_mode;     /* the last one sampled; -1 unknown */
    int64_t persistence;
};

/* The trace's tracks, events and counters that are NVML's, and the copies;
 * each returns 0 when the event is not one of its. */
int ct_gpu_health_track(struct ct_gpu_health *h, const struct ct_track_info *t);
int ct_gpu_health_counter(struct ct_gpu_health *h, const struct ct_event *e);
int ct_gpu_health_slice(struct ct_gpu_health *h, const struct ct_event *e);
int ct_gpu_health_instant(struct ct_gpu_health *h, const struct ct_event *e);
/* A host call's copy slice, and a copy as the GPU ran it (a GPU track's). */
void ct_gpu_health_host_copy(struct ct_gpu_health *h, const struct ct_event *e);
void ct_gpu_health_gpu_copy(struct ct_gpu_health *h, const struct ct_event *e);
void ct_gpu_health_summarise(const struct ct_gpu_health *h, const struct ct_health_device *d,
                             uint64_t from, uint64_t to, struct ct_health_summary *out);
/* Measure `m` over a device's samples taken at the times `keep` says yes
 * to; with `full`, only over those busy for the whole of NVML's own sample
 * period (as a clock is judged: an idle GPU lowers its clocks). */
struct ct_health_stat ct_gpu_health_stat_when(const struct ct_health_device *d, int m, int full,
                                              int (*keep)(const void *ctx, uint64_t ts),
                                              const void *ctx);
void ct_gpu_health_free(struct ct_gpu_health *h);

#endif
