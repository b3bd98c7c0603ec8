/*
 * The usage findings' thresholds: defaults drawn from what the field reports
 * as trouble (../shared/SCENARIOS.md: over ~15% of host time in launches,
 * over ~100 small copies a second, milliseconds for a cudaMalloc that should
 * take ~100 us; a GPU slowed by its power cap or by heat for more than a
 * passing moment, an SM clock a fifth under its maximum; a minute inside one
 * CUDA call, which no healthy call takes and which PyTorch's collective
 * watchdog, ten minutes by default, outlasts; a training thread that waits
 * for its input or computes outside CUDA calls for a large share of the
 * run; a CUDA graph captured again at the same line and replayed a time or
 * two before the next capture, as torch.compile's CUDA graphs are when
 * shapes keep changing), settable by name.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer-export/findings/thresholds.h"
#include "common/call_cost.h"

struct ct_thresholds ct_thresholds = {
    .launch_share = 0.15,
    .launch_rate = 1000,
    .sync_share = 0.20,
    .sync_calls = 10,
    .pageable_copies = 10,
    .small_copy_bytes = CT_SMALL_COPY_BYTES,
    .small_copy_rate = 100,
    .small_copy_count = 100,
    .growth_bytes = 1 << 20,
    .growth_share = 0.05,
    .slow_alloc_ns = 1e6,
    .slow_alloc_factor = 10,
    .slow_alloc_calls = 3,
    .gpu_idle_share = 0.5,
    .gpu_bound_share = 0.8,
    .power_cap_share = 0.2,
    .thermal_share = 0.05,
    .clocks_low_ratio = 0.8,
    .pcie_low_share = 0.25,
    .hang_ns = 60e9,
    .input_wait_share = 0.4,
    .workers_busy_share = 0.7,
    .workers_idle_share = 0.2,
    .host_busy_share = 0.5,
    .slow_step_factor = 1.5,
    .slow_step_lost_ns = 50e6,
    .step_period_spread = 0.1,
    .step_drift = 0.2,
    .recapture_graphs = 3,
    .recapture_launches = 2,
};

static const struct {
    const char *name;
    size_t offset;
} names[] = {
#define THRESHOLD(field)                                                                           \
    {                                                                                              \
#field, offsetof(struct ct_thresholds, field)                                              \
    }
    THRESHOLD(launch_share),       THRESHOLD(launch_rate),       THRESHOLD(sync_share),
    THRESHOLD(sync_calls),         THRESHOLD(pageable_copies),   THRESHOLD(small_copy_bytes),
    THRESHOLD(small_copy_rate),    THRESHOLD(small_copy_count),  THRESHOLD(growth_bytes),
    THRESHOLD(growth_share),       THRESHOLD(slow_alloc_ns),     THRESHOLD(slow_alloc_factor),
    THRESHOLD(slow_alloc_calls),   THRESHOLD(gpu_idle_share),    THRESHOLD(gpu_bound_share),
    THRESHOLD(power_cap_share),    THRESHOLD(thermal_share),     THRESHOLD(clocks_low_ratio),
    THRESHOLD(pcie_low_share),     THRESHOLD(input_wait_share),  THRESHOLD(workers_busy_share),
    THRESHOLD(workers_idle_share), THRESHOLD(host_busy_share),   THRESHOLD(hang_ns),
    THRESHOLD(slow_step_factor),   THRESHOLD(slow_step_lost_ns), THRESHOLD(step_period_spread),
    THRESHOLD(step_drift),         THRESHOLD(recapture_graphs),  THRESHOLD(recapture_launches),
#undef THRESHOLD
};

int ct_thresholds_set(const char *assignment, char *error, size_t error_size)
{
    const char *equals = strchr(assignment, '=');
    size_t len = equals ? (size_t)(equals - assignment) : strlen(assignment);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i].name) != len || strncmp(names[i].name, assignment, len) != 0)
            continue;
        char *end;
        double value = equals ? strtod(equals + 1, &end) : -1;
        if (!equals || end == equals + 1 || *end || !(value >= 0)) {
            snprintf(error, error_size, "threshold %s needs a number >= 0, as in %s=0.5",
                     names[i].name, names[i].name);
            return -1;
        }
        *(double *)((char *)&ct_thresholds + names[i].offset) = value;
        return 0;
    }
    snprintf(error, error_size, "no threshold named %.*s", (int)len, assignment);
    return -1;
}

void ct_thresholds_describe(char *out, size_t size)
{
    size_t n = 0;
    if (size)
        *out = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0] && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%s=%.17g", i ? "," : "", names[i].name,
                              *(const double *)((const char *)&ct_thresholds + names[i].offset));
}
