/*
 * What each NVML call the collector's sampler makes costs: nvmlInit once,
 * then each call on device 0, timed over ROUNDS calls, the median printed
 * in microseconds, one call a line. It loads NVML the way the collector
 * does (collector/gpu_state/nvml_loader.c), so it measures whatever
 * libnvidia-ml.so.1 the library path gives: the real one on a GPU machine,
 * the double's (tests/doubles/nvml/) elsewhere, which shows only the
 * overhead of a call through the loaded library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "collector/gpu_state/nvml_loader.h"

#define ROUNDS 201

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The calls, each as one statement on `n` and device `d`. */
#define CT_FOR_EACH_TIMED_CALL(X)                                                                  \
    X(nvmlDeviceGetUtilizationRates, n->nvmlDeviceGetUtilizationRates(d, &u))                      \
    X(nvmlDeviceGetClockInfo, n->nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &v))                     \
    X(nvmlDeviceGetPowerUsage, n->nvmlDeviceGetPowerUsage(d, &v))                                  \
    X(nvmlDeviceGetEnforcedPowerLimit, n->nvmlDeviceGetEnforcedPowerLimit(d, &v))                  \
    X(nvmlDeviceGetTemperature, n->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &v))          \
    X(nvmlDeviceGetViolationStatus,                                                                \
      n->nvmlDeviceGetViolationStatus(d, NVML_PERF_POLICY_POWER, &violation))                      \
    X(nvmlDeviceGetCurrPcieLinkGeneration, n->nvmlDeviceGetCurrPcieLinkGeneration(d, &v))          \
    X(nvmlDeviceGetCurrPcieLinkWidth, n->nvmlDeviceGetCurrPcieLinkWidth(d, &v))                    \
    X(nvmlDeviceGetPcieReplayCounter, n->nvmlDeviceGetPcieReplayCounter(d, &v))                    \
    X(nvmlDeviceGetTotalEccErrors,                                                                 \
      n->nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,       \
                                     &ull))                                                        \
    X(nvmlDeviceGetComputeMode, n->nvmlDeviceGetComputeMode(d, &mode))                             \
    X(nvmlDeviceGetPersistenceMode, n->nvmlDeviceGetPersistenceMode(d, &state))                    \
    X(nvmlDeviceGetCurrentClocksEventReasons, n->nvmlDeviceGetCurrentClocksEventReasons(d, &ull))  \
    X(nvmlDeviceGetComputeRunningProcesses_v3,                                                     \
      n->nvmlDeviceGetComputeRunningProcesses_v3(d, &count, processes))

static void time_calls(const struct ct_nvml *n, nvmlDevice_t d)
{
    static double us[ROUNDS];
    nvmlUtilization_t u;
    unsigned int v, count;
    unsigned long long ull;
    nvmlViolationTime_t violation;
    nvmlComputeMode_t mode;
    nvmlEnableState_t state;
    nvmlProcessInfo_t processes[32];
#define TIME_CALL(name, call)                                                                      \
    if (n->name) {                                                                                 \
        for (int i = 0; i < ROUNDS; i++) {                                                         \
            count = 32;                                                                            \
            double start = now_us();                                                               \
            (void)(call);                                                                          \
            us[i] = now_us() - start;                                                              \
        }                                                                                          \
        qsort(us, ROUNDS, sizeof us[0], by_value);                                                 \
        printf("%-42s %10.2f us median, %10.2f max\n", #name, us[ROUNDS / 2], us[ROUNDS - 1]);     \
    }
    CT_FOR_EACH_TIMED_CALL(TIME_CALL)
#undef TIME_CALL
}

int main(void)
{
    struct ct_nvml n;
    char error[256];
    int absent;
    double start = now_us();
    if (ct_nvml_open(&n, &absent, error, sizeof error)) {
        fprintf(stderr, "nvml_cost: %s\n", error);
        return 1;
    }
    printf("%-42s %10.2f us, once\n", "dlopen + nvmlInit_v2", now_us() - start);
    nvmlDevice_t d;
    if (n.nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS) {
        fprintf(stderr, "nvml_cost: no device 0\n");
        return 1;
    }
    time_calls(&n, d);
    ct_nvml_close(&n);
    return 0;
}
