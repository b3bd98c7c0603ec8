/*
 * Reads a device's state: each measure through the one NVML call that
 * gives it. A call that fails leaves its measure out of the sample and is
 * counted (one refused for want of privileges is noted instead: a GPU in
 * MIG mode gives its aggregate memory and processes only to a privileged
 * caller); one that says the GPU is lost ends the reading, since every
 * later call on the device would say so too. A MIG instance gives its own
 * memory, processes and utilization (which NVML does not report in MIG
 * mode); the rest is its GPU's. The PCIe throughput query is
 * left out: it waits about 20 ms for its own sample window. What the calls
 * cost is in docs/performance.md.
 */
#include "collector/gpu_state/sample_read.h"

#include <stdlib.h>

/* The most compute processes one device is asked for: a bound on what a
 * count NVML gives can make the sampler allocate. */
#define PROCESSES_ASKED_MAX 65536u

struct reading {
    struct ct_gpu_sample *sample;
    uint64_t *failed;
    int lost;
};

/* Takes one call's result for what `bit` (of ct_gpu_sample.denied) stands
 * for; whether it gave its value. A refusal for want of privileges is
 * noted, not counted as failed: it says the same every time. */
static int took(struct reading *r, nvmlReturn_t result, unsigned bit)
{
    if (result == NVML_ERROR_GPU_IS_LOST)
        r->lost = 1;
    else if (result == NVML_ERROR_NO_PERMISSION)
        r->sample->denied |= 1u << bit;
    else if (result != NVML_SUCCESS && result != NVML_ERROR_NOT_SUPPORTED)
        (*r->failed)++;
    return result == NVML_SUCCESS;
}

static void keep(struct reading *r, enum ct_gpu_measure m, uint64_t value)
{
    r->sample->value[m] = value;
    r->sample->have |= 1u << m;
}

/* A measure an NVML call gives as one unsigned int. */
static void read_uint(struct reading *r, nvmlReturn_t (*call)(nvmlDevice_t, unsigned int *),
                      nvmlDevice_t d, enum ct_gpu_measure m)
{
    unsigned int v;
    if (call && !r->lost && took(r, call(d, &v), m))
        keep(r, m, v);
}

static void read_clocks(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    unsigned int sm, memory;
    if (!n->nvmlDeviceGetClockInfo || r->lost)
        return;
    if (took(r, n->nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &sm), CT_GPU_SM_CLOCK))
        keep(r, CT_GPU_SM_CLOCK, sm);
    if (!r->lost &&
        took(r, n->nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &memory), CT_GPU_MEMORY_CLOCK))
        keep(r, CT_GPU_MEMORY_CLOCK, memory);
}

static void read_utilization(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    nvmlUtilization_t u;
    if (n->nvmlDeviceGetUtilizationRates && !r->lost &&
        took(r, n->nvmlDeviceGetUtilizationRates(d, &u), CT_GPU_UTILIZATION)) {
        keep(r, CT_GPU_UTILIZATION, u.gpu);
        keep(r, CT_GPU_MEMORY_UTILIZATION, u.memory);
    }
}

/* The device's memory in use, by every process and the driver: what the
 * report holds the tracer's own total against. */
static void read_memory(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    nvmlMemory_t memory;
    if (n->nvmlDeviceGetMemoryInfo && !r->lost &&
        took(r, n->nvmlDeviceGetMemoryInfo(d, &memory), CT_GPU_MEMORY_USED))
        keep(r, CT_GPU_MEMORY_USED, memory.used);
}

static void read_violations(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    nvmlViolationTime_t power, thermal;
    if (!n->nvmlDeviceGetViolationStatus || r->lost)
        return;
    if (took(r, n->nvmlDeviceGetViolationStatus(d, NVML_PERF_POLICY_POWER, &power),
             CT_GPU_POWER_VIOLATION))
        keep(r, CT_GPU_POWER_VIOLATION, power.violationTime);
    if (!r->lost && took(r, n->nvmlDeviceGetViolationStatus(d, NVML_PERF_POLICY_THERMAL, &thermal),
                         CT_GPU_THERMAL_VIOLATION))
        keep(r, CT_GPU_THERMAL_VIOLATION, thermal.violationTime);
}

static void read_ecc(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    unsigned long long corrected, uncorrected;
    if (!n->nvmlDeviceGetTotalEccErrors || r->lost)
        return;
    if (took(r,
             n->nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
                                            &corrected),
             CT_GPU_ECC_CORRECTED))
        keep(r, CT_GPU_ECC_CORRECTED, corrected);
    if (!r->lost && took(r,
                         n->nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                                        NVML_VOLATILE_ECC, &uncorrected),
                         CT_GPU_ECC_UNCORRECTED))
        keep(r, CT_GPU_ECC_UNCORRECTED, uncorrected);
}

static void read_modes(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    nvmlComputeMode_t compute;
    nvmlEnableState_t persistence;
    unsigned int temperature;
    if (n->nvmlDeviceGetComputeMode && !r->lost &&
        took(r, n->nvmlDeviceGetComputeMode(d, &compute), CT_GPU_COMPUTE_MODE))
        keep(r, CT_GPU_COMPUTE_MODE, (uint64_t)compute);
    if (n->nvmlDeviceGetPersistenceMode && !r->lost &&
        took(r, n->nvmlDeviceGetPersistenceMode(d, &persistence), CT_GPU_PERSISTENCE))
        keep(r, CT_GPU_PERSISTENCE, persistence == NVML_FEATURE_ENABLED);
    if (n->nvmlDeviceGetTemperature && !r->lost &&
        took(r, n->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temperature),
             CT_GPU_TEMPERATURE))
        keep(r, CT_GPU_TEMPERATURE, temperature);
}

static void read_reasons(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    unsigned long long reasons;
    if (n->nvmlDeviceGetCurrentClocksEventReasons && !r->lost &&
        took(r, n->nvmlDeviceGetCurrentClocksEventReasons(d, &reasons), CT_GPU_DENIED_REASONS)) {
        r->sample->reasons = reasons;
        r->sample->have_reasons = 1;
    }
}

/* Only NVML_SUCCESS fills the array; NVML_ERROR_INSUFFICIENT_SIZE gives
 * the count it needs, which can grow before the next call: asked again
 * with that room and some to spare, and counted as failed if that is
 * still too little. The first CT_GPU_PROCESSES_MAX are kept. */
static void read_processes(struct reading *r, const struct ct_nvml *n, nvmlDevice_t d)
{
    nvmlProcessInfo_t few[CT_GPU_PROCESSES_MAX], *infos = few;
    unsigned int count = CT_GPU_PROCESSES_MAX;
    if (!n->nvmlDeviceGetComputeRunningProcesses_v3 || r->lost)
        return;
    nvmlReturn_t result = n->nvmlDeviceGetComputeRunningProcesses_v3(d, &count, infos);
    if (result == NVML_ERROR_INSUFFICIENT_SIZE && count <= PROCESSES_ASKED_MAX) {
        count += CT_GPU_PROCESSES_MAX;
        infos = malloc(count * sizeof *infos);
        result = infos ? n->nvmlDeviceGetComputeRunningProcesses_v3(d, &count, infos)
                       : NVML_ERROR_MEMORY;
    }
    if (took(r, result, CT_GPU_DENIED_PROCESSES)) {
        r->sample->have_processes = 1;
        r->sample->process_count = count < CT_GPU_PROCESSES_MAX ? count : CT_GPU_PROCESSES_MAX;
        for (unsigned int i = 0; i < r->sample->process_count; i++)
            r->sample->processes[i] = (struct ct_gpu_process){infos[i].pid, infos[i].usedGpuMemory};
    }
    if (infos != few)
        free(infos);
}

nvmlReturn_t ct_gpu_sample_read(const struct ct_nvml *n, struct ct_gpu_handles h,
                                struct ct_gpu_sample *out, uint64_t *failed)
{
    struct reading r = {out, failed, h.own == NULL || h.gpu == NULL};
    nvmlDevice_t d = h.gpu;
    read_utilization(&r, n, h.own);
    read_memory(&r, n, h.own);
    read_clocks(&r, n, d);
    read_uint(&r, n->nvmlDeviceGetPowerUsage, d, CT_GPU_POWER);
    read_uint(&r, n->nvmlDeviceGetEnforcedPowerLimit, d, CT_GPU_POWER_LIMIT);
    read_violations(&r, n, d);
    read_uint(&r, n->nvmlDeviceGetCurrPcieLinkGeneration, d, CT_GPU_PCIE_GENERATION);
    read_uint(&r, n->nvmlDeviceGetCurrPcieLinkWidth, d, CT_GPU_PCIE_WIDTH);
    read_uint(&r, n->nvmlDeviceGetPcieReplayCounter, d, CT_GPU_PCIE_REPLAYS);
    read_ecc(&r, n, d);
    read_modes(&r, n, d);
    read_reasons(&r, n, d);
    read_processes(&r, n, h.own);
    return r.lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
}
