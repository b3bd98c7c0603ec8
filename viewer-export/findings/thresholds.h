/*
 * The thresholds of the usage, GPU health and host findings, with their defaults; `cudatrace
 * report --threshold NAME=VALUE` changes them before any trace is read
 * (docs/findings.md says what each one means).
 */
#ifndef CT_THRESHOLDS_H
#define CT_THRESHOLDS_H

#include <stddef.h>
#include <stdint.h>

struct ct_thresholds {
    double launch_share;       /* launch-overhead: share of wall time in launch calls  */
    double launch_rate;        /* ... and launches per second                          */
    double sync_share;         /* sync-stall: share of wall time blocked               */
    double sync_calls;         /* ... in at least this many calls                      */
    double pageable_copies;    /* pageable-memcpy: at least this many async copies     */
    double small_copy_bytes;   /* small-copy-storm: a copy smaller than this is small  */
    double small_copy_rate;    /* ... more of them per second than this                */
    double small_copy_count;   /* ... and at least this many                           */
    double growth_bytes;       /* memory-growth: the low points rose by this much      */
    double growth_share;       /* ... and by this share of the peak                    */
    double slow_alloc_ns;      /* slow-alloc: a call at least this long                */
    double slow_alloc_factor;  /* ... and this many times the process's median         */
    double slow_alloc_calls;   /* ... in at least this many calls                      */
    double gpu_idle_share;     /* gpu-idle: share of the run with no GPU work          */
    double gpu_bound_share;    /* sync-stall: none when the GPU was busy this share    */
    double power_cap_share;    /* power-capped: share of busy samples at the power cap */
    double thermal_share;      /* thermal-throttle: share of busy samples slowed by heat */
    double clocks_low_ratio;   /* clocks-low: median SM clock under this share of max  */
    double pcie_low_share;     /* pcie-downgraded: share of copy samples on a slow link */
    double input_wait_share;   /* input-bound: launching thread asleep outside CUDA calls */
    double workers_busy_share; /* ... workers busy (on a CPU or waiting) this share: CPU-bound */
    double workers_idle_share; /* ... at most this share: they wait on I/O             */
    double host_busy_share;    /* host-bound: launching thread on a CPU outside CUDA calls */
    double hang_ns;            /* hang: a call still running this long at the end      */
    double slow_step_factor;   /* slow-steps: a step this many times the median is slow */
    double slow_step_lost_ns;  /* ... and the slow steps lost this much over the median */
    double step_period_spread; /* periodic-slowdown: slow steps' spacing within this share */
    double step_drift; /* step-drift: the last tenth's median over the first's, by this share */
    double recapture_graphs;   /* re-capture: graphs captured at one line, at least    */
    double recapture_launches; /* ... each launched at most this many times           */
};

extern struct ct_thresholds ct_thresholds;

/* Sets one threshold from "name=value"; 0, or -1 (with the reason in
 * `error`) for an unknown name or a value that is not a number >= 0. */
int ct_thresholds_set(const char *assignment, char *error, size_t error_size);

/* Every threshold as NAME=VALUE,...: findings made under other thresholds
 * are not merged with these (job/summary.h). */
void ct_thresholds_describe(char *out, size_t size);

#endif
