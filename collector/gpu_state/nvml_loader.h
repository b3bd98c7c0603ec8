/*
 * NVML as the collector sees it: libnvidia-ml.so.1, opened at run time (the
 * collector is never linked against it, so a machine without a driver runs
 * it as before), and the entry points the sampler calls, typed from
 * NVIDIA's nvml.h. Only the collector ever loads it: nvmlInit costs tens of
 * milliseconds and some queries block, which the traced program must never
 * pay for.
 */
#ifndef CT_COLLECTOR_NVML_LOADER_H
#define CT_COLLECTOR_NVML_LOADER_H

#include <nvml.h>
#include <stddef.h>

/* X(name, parameters): every entry point the collector uses. */
#define CT_FOR_EACH_NVML_CALL(X)                                                                   \
    X(nvmlInit_v2, (void))                                                                         \
    X(nvmlShutdown, (void))                                                                        \
    X(nvmlSystemGetDriverVersion, (char *, unsigned int))                                          \
    X(nvmlDeviceGetCount_v2, (unsigned int *))                                                     \
    X(nvmlDeviceGetHandleByIndex_v2, (unsigned int, nvmlDevice_t *))                               \
    X(nvmlDeviceGetUUID, (nvmlDevice_t, char *, unsigned int))                                     \
    X(nvmlDeviceGetName, (nvmlDevice_t, char *, unsigned int))                                     \
    X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t, nvmlPciInfo_t *))                                    \
    X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t, nvmlUtilization_t *))                          \
    X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t, nvmlMemory_t *))                                     \
    X(nvmlDeviceGetClockInfo, (nvmlDevice_t, nvmlClockType_t, unsigned int *))                     \
    X(nvmlDeviceGetMaxClockInfo, (nvmlDevice_t, nvmlClockType_t, unsigned int *))                  \
    X(nvmlDeviceGetPowerUsage, (nvmlDevice_t, unsigned int *))                                     \
    X(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t, unsigned int *))                             \
    X(nvmlDeviceGetPowerManagementDefaultLimit, (nvmlDevice_t, unsigned int *))                    \
    X(nvmlDeviceGetTemperature, (nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *))          \
    X(nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t, unsigned long long *))                \
    X(nvmlDeviceGetCurrentClocksThrottleReasons, (nvmlDevice_t, unsigned long long *))             \
    X(nvmlDeviceGetViolationStatus, (nvmlDevice_t, nvmlPerfPolicyType_t, nvmlViolationTime_t *))   \
    X(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t, unsigned int *))                         \
    X(nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t, unsigned int *))                              \
    X(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t, unsigned int *))                          \
    X(nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t, unsigned int *))                               \
    X(nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t, unsigned int *))                              \
    X(nvmlDeviceGetTotalEccErrors,                                                                 \
      (nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, unsigned long long *))           \
    X(nvmlDeviceGetComputeMode, (nvmlDevice_t, nvmlComputeMode_t *))                               \
    X(nvmlDeviceGetPersistenceMode, (nvmlDevice_t, nvmlEnableState_t *))                           \
    X(nvmlDeviceGetComputeRunningProcesses_v3,                                                     \
      (nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *))                                         \
    X(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t, unsigned int *))                              \
    X(nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t, unsigned int, nvmlDevice_t *))

/* The library and its entry points; an entry point this driver lacks is
 * NULL, and what it measures goes unsampled. */
struct ct_nvml {
    void *library;
#define CT_NVML_POINTER(name, parameters) nvmlReturn_t(*name) parameters;
    CT_FOR_EACH_NVML_CALL(CT_NVML_POINTER)
#undef CT_NVML_POINTER
};

/* Opens libnvidia-ml.so.1 and initialises it; 0, or -1 with why in
 * `error` (absent is 1 when there is no NVML to load at all). */
int ct_nvml_open(struct ct_nvml *nvml, int *absent, char *error, size_t error_size);
void ct_nvml_close(struct ct_nvml *nvml);

#endif
