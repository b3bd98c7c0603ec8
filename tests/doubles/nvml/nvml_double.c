/*
 * The NVML double: a libnvidia-ml.so.1 with the real entry points and the
 * real structs and enums of NVIDIA's nvml.h, whose devices say what a test
 * scripts over time, so the collector's NVML sampling and the report's GPU
 * health are tested without a GPU. CT_DOUBLE_NVML_SCRIPT names the script:
 * one step a line, "T_MS DEVICE WHAT ARGS", in effect from T_MS after
 * nvmlInit (DEVICE is an index, or "-" for the whole library):
 *   T - devices N          the device count (default 1)
 *   T - driver TEXT        the driver version
 *   T D FIELD VALUE        a measure from then on (fields[] below)
 *   T D process PID BYTES  a compute process appears ("parent": the pid of
 *                          the process that loaded NVML's parent, the traced
 *                          program when the collector loaded it)
 *   T D process_end PID    it goes
 *   T D lost 1             the device has fallen off the bus: every call on
 *                          it fails with NVML_ERROR_GPU_IS_LOST
 *   T D handle_error CODE  nvmlDeviceGetHandleByIndex_v2 refuses the device
 *                          with that nvmlReturn_t (4 NO_PERMISSION, 8
 *                          INSUFFICIENT_POWER, 11 IRQ_ISSUE), which
 *                          nvmlDeviceGetCount_v2 still counts
 *   T - fail FUNCTION      that function fails with NVML_ERROR_UNKNOWN
 *   T - block FUNCTION MS  each call of it sleeps MS first
 *   T D mig N              the device is in MIG mode with N instances
 *   T - unprivileged 1     the caller lacks the privileges a GPU in MIG mode
 *                          asks for its aggregate memory and processes:
 *                          those answer NVML_ERROR_NO_PERMISSION
 * A line it cannot read fails nvmlInit, so a broken script cannot pass for
 * a healthy GPU. Unscripted, a device is a healthy, busy GPU (defaults[]).
 * A MIG instance's handle answers, as the real library's does, only for
 * what is the instance's own: its UUID ("MIG-..."), name, PCI info, memory
 * (an eighth of the GPU's, here) and compute processes (the GPU's, here);
 * the rest is NOT_SUPPORTED and read from the GPU, whose utilization is
 * NOT_SUPPORTED too while it is in MIG mode.
 */
#include <nvml.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/doubles/shared/double_node.h"

#define STEPS_MAX 4096
#define DEVICES_MAX 16
#define MIG_MAX 7 /* instances a GPU can be split into */

enum field {
    UTIL_GPU,
    UTIL_MEM,
    SM_CLOCK,
    MEM_CLOCK,
    SM_CLOCK_MAX,
    MEM_CLOCK_MAX,
    POWER_MW,
    POWER_LIMIT_MW,
    POWER_DEFAULT_MW,
    TEMP_C,
    REASONS,
    VIOLATION_POWER_NS,
    VIOLATION_THERMAL_NS,
    PCIE_GEN,
    PCIE_WIDTH,
    PCIE_GEN_MAX,
    PCIE_WIDTH_MAX,
    REPLAYS,
    ECC_CORRECTED,
    ECC_UNCORRECTED,
    COMPUTE_MODE,
    PERSISTENCE,
    MEM_USED,
    MEM_TOTAL,
    MIG_INSTANCES,
    LOST,
    HANDLE_ERROR,
    FIELD_COUNT,
    /* steps that are not measures */
    DEVICES = FIELD_COUNT,
    PROCESS,
    PROCESS_END,
    FAIL,
    BLOCK,
    DRIVER,
    UNPRIVILEGED,
};

static const char *const fields[FIELD_COUNT] = {
    "util_gpu",
    "util_mem",
    "sm_clock",
    "mem_clock",
    "sm_clock_max",
    "mem_clock_max",
    "power_mw",
    "power_limit_mw",
    "power_default_mw",
    "temp_c",
    "reasons",
    "violation_power_ns",
    "violation_thermal_ns",
    "pcie_gen",
    "pcie_width",
    "pcie_gen_max",
    "pcie_width_max",
    "replays",
    "ecc_corrected",
    "ecc_uncorrected",
    "compute_mode",
    "persistence",
    "mem_used",
    "mem_total",
    "mig",
    "lost",
    "handle_error",
};

static const unsigned long long defaults[FIELD_COUNT] = {
    [UTIL_GPU] = 100,
    [UTIL_MEM] = 40,
    [SM_CLOCK] = 1980,
    [MEM_CLOCK] = 2619,
    [SM_CLOCK_MAX] = 1980,
    [MEM_CLOCK_MAX] = 2619,
    [POWER_MW] = 300000,
    [POWER_LIMIT_MW] = 700000,
    [POWER_DEFAULT_MW] = 700000,
    [TEMP_C] = 60,
    [PCIE_GEN] = 5,
    [PCIE_WIDTH] = 16,
    [PCIE_GEN_MAX] = 5,
    [PCIE_WIDTH_MAX] = 16,
    [PERSISTENCE] = 1,
    [MEM_USED] = 512ull << 20,
    [MEM_TOTAL] = 141ull << 30,
};

struct step {
    unsigned long long at_ms, value, extra;
    int device, what;
    char text[64];
};

struct nvmlDevice_st {
    unsigned int index; /* the GPU's; a MIG instance's is its GPU's */
    unsigned int mig;   /* 0: the GPU; n: its instance n - 1 */
};

static struct step steps[STEPS_MAX];
static int step_count, initialized;
static struct timespec init_time;
static struct nvmlDevice_st devices[DEVICES_MAX], migs[DEVICES_MAX][MIG_MAX];

static unsigned long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    /* signed: the nanoseconds part of the difference is negative half the time */
    long long ms = (long long)(t.tv_sec - init_time.tv_sec) * 1000 +
                   ((long long)t.tv_nsec - (long long)init_time.tv_nsec) / 1000000;
    return ms > 0 ? (unsigned long long)ms : 0;
}

static int what_of(const char *word)
{
    static const char *const others[] = {"devices", "process", "process_end", "fail",
                                         "block",   "driver",  "unprivileged"};
    for (int i = 0; i < FIELD_COUNT; i++)
        if (strcmp(word, fields[i]) == 0)
            return i;
    for (int i = 0; i < (int)(sizeof others / sizeof others[0]); i++)
        if (strcmp(word, others[i]) == 0)
            return DEVICES + i;
    return -1;
}

static unsigned long long number(const char *text)
{
    if (strcmp(text, "parent") == 0)
        return (unsigned long long)getppid() == 1 ? 0 : (unsigned long long)getppid();
    return strtoull(text, NULL, 0);
}

/* One line into a step; 0 when it cannot be read. */
static int parse_step(const char *line, struct step *s)
{
    char device[16], what[32], a[64] = "", b[64] = "0";
    int n = sscanf(line, "%llu %15s %31s %63s %63s", &s->at_ms, device, what, a, b);
    if (n < 4 || (s->what = what_of(what)) < 0)
        return 0;
    s->device = strcmp(device, "-") == 0 ? -1 : atoi(device);
    if (s->device >= DEVICES_MAX)
        return 0;
    snprintf(s->text, sizeof s->text, "%s", a);
    s->value = number(a);
    s->extra = number(b);
    return 1;
}

static int load_script(void)
{
    const char *path = getenv("CT_DOUBLE_NVML_SCRIPT");
    FILE *f = path ? fopen(path, "re") : NULL;
    if (!path)
        return 1;
    char line[256];
    int ok = f != NULL;
    step_count = 0;
    while (ok && fgets(line, sizeof line, f))
        if (line[0] != '#' && line[0] != '\n')
            ok = step_count < STEPS_MAX && parse_step(line, &steps[step_count++]);
    if (f)
        fclose(f);
    return ok;
}

/* The latest step of `what` for `device` in effect now, or NULL. */
static const struct step *latest(int device, int what, const char *text)
{
    const struct step *found = NULL;
    unsigned long long now = now_ms();
    for (int i = 0; i < step_count; i++)
        if (steps[i].what == what && steps[i].device == device && steps[i].at_ms <= now &&
            (!text || strcmp(steps[i].text, text) == 0))
            found = &steps[i];
    return found;
}

static unsigned long long value(const nvmlDevice_t d, enum field f)
{
    const struct step *s = latest((int)d->index, f, NULL);
    return s ? s->value : defaults[f];
}

static unsigned int device_count(void)
{
    const struct step *s = latest(-1, DEVICES, NULL);
    unsigned long long n = s ? s->value : 1;
    return n < DEVICES_MAX ? (unsigned int)n : DEVICES_MAX;
}

/* What every entry point does first: the scripted block and failure. */
static nvmlReturn_t enter(const char *function)
{
    const struct step *block = latest(-1, BLOCK, function);
    if (block) {
        struct timespec pause = {(time_t)(block->extra / 1000),
                                 (long)(block->extra % 1000) * 1000000};
        nanosleep(&pause, NULL);
    }
    if (!initialized && strcmp(function, "nvmlInit_v2") != 0)
        return NVML_ERROR_UNINITIALIZED;
    return latest(-1, FAIL, function) ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
}

static nvmlReturn_t enter_device(const char *function, nvmlDevice_t d, const void *out)
{
    nvmlReturn_t r = enter(function);
    if (r != NVML_SUCCESS)
        return r;
    if (!d || d->index >= device_count() || !out || d->mig > value(d, MIG_INSTANCES))
        return NVML_ERROR_INVALID_ARGUMENT;
    return value(d, LOST) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
}

/* "In MIG mode, if device handle is provided, the API returns aggregate information, only if the
 * caller has appropriate privileges": a script says whether it has them. */
#define AGGREGATE(d)                                                                               \
    do {                                                                                           \
        if (!(d)->mig && value(d, MIG_INSTANCES) && latest(-1, UNPRIVILEGED, NULL))                \
            return NVML_ERROR_NO_PERMISSION;                                                       \
    } while (0)

/* What only the GPU answers, not a MIG instance of it. */
#define GPU_ONLY(d)                                                                                \
    do {                                                                                           \
        if ((d) && (d)->mig)                                                                       \
            return NVML_ERROR_NOT_SUPPORTED;                                                       \
    } while (0)

#define ENTER(d, out)                                                                              \
    do {                                                                                           \
        nvmlReturn_t r_ = enter_device(__func__, d, out);                                          \
        if (r_ != NVML_SUCCESS)                                                                    \
            return r_;                                                                             \
    } while (0)

/* A measure as an unsigned int out parameter. */
#define GET_UINT(d, out, f)                                                                        \
    do {                                                                                           \
        ENTER(d, out);                                                                             \
        GPU_ONLY(d);                                                                               \
        *(out) = (unsigned int)value(d, f);                                                        \
        return NVML_SUCCESS;                                                                       \
    } while (0)

nvmlReturn_t nvmlInit_v2(void)
{
    clock_gettime(CLOCK_MONOTONIC, &init_time);
    if (!load_script())
        return NVML_ERROR_UNKNOWN;
    nvmlReturn_t r = enter(__func__);
    initialized = r == NVML_SUCCESS;
    for (unsigned int i = 0; i < DEVICES_MAX; i++) {
        devices[i].index = i;
        for (unsigned int m = 0; m < MIG_MAX; m++)
            migs[i][m] = (struct nvmlDevice_st){i, m + 1};
    }
    return r;
}

nvmlReturn_t nvmlShutdown(void)
{
    nvmlReturn_t r = enter(__func__);
    initialized = 0;
    return r;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    default:
        return "Unknown Error";
    }
}

static nvmlReturn_t copy_text(const char *text, char *out, unsigned int length)
{
    if (strlen(text) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, text, strlen(text) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    nvmlReturn_t r = enter(__func__);
    if (r != NVML_SUCCESS)
        return r;
    const struct step *s = latest(-1, DRIVER, NULL);
    return copy_text(s ? s->text : "580.65.06", version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    nvmlReturn_t r = enter(__func__);
    if (r == NVML_SUCCESS)
        *count = device_count();
    return r;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t r = enter(__func__);
    if (r != NVML_SUCCESS)
        return r;
    if (index >= device_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    /* "returns count of all devices in the system even if nvmlDeviceGetHandleByIndex_v2 returns
     * NVML_ERROR_NO_PERMISSION for such device"; INSUFFICIENT_POWER and IRQ_ISSUE are listed too */
    if (value(&devices[index], HANDLE_ERROR))
        return (nvmlReturn_t)value(&devices[index], HANDLE_ERROR);
    *device = &devices[index];
    return value(*device, LOST) ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    ENTER(device, uuid);
    char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    ct_double_node_uuid(device->index, device->mig, text, sizeof text);
    return copy_text(text, uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    ENTER(device, name);
    return copy_text(device->mig ? "NVIDIA H100 80GB HBM3 MIG 1g.10gb (double)"
                                 : "NVIDIA H100 80GB HBM3 (double)",
                     name, length);
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    ENTER(device, count);
    GPU_ONLY(device);
    *count = value(device, MIG_INSTANCES) ? MIG_MAX : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *mig)
{
    ENTER(device, mig);
    GPU_ONLY(device);
    if (index >= value(device, MIG_INSTANCES))
        return NVML_ERROR_NOT_FOUND;
    *mig = &migs[device->index][index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    ENTER(device, pci);
    memset(pci, 0, sizeof *pci);
    pci->bus = CT_DOUBLE_NODE_BUS(device->index);
    pci->pciDeviceId = 0x233010de;
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    ENTER(device, utilization);
    GPU_ONLY(device);
    if (value(device, MIG_INSTANCES))
        return NVML_ERROR_NOT_SUPPORTED;
    /* "Percent of time over the past sample period during which one or more kernels was
     * executing": a script gives it as NVML would, lagging a burst by up to its period */
    utilization->gpu = (unsigned int)value(device, UTIL_GPU);
    utilization->memory = (unsigned int)value(device, UTIL_MEM);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    GET_UINT(device, clock, type == NVML_CLOCK_MEM ? MEM_CLOCK : SM_CLOCK);
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int *clock)
{
    GET_UINT(device, clock, type == NVML_CLOCK_MEM ? MEM_CLOCK_MAX : SM_CLOCK_MAX);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    ENTER(device, memory);
    AGGREGATE(device);
    unsigned int share = device->mig ? 3 : 0; /* an instance has an eighth */
    memory->total = value(device, MEM_TOTAL) >> share;
    memory->used = value(device, MEM_USED) >> share;
    memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    GET_UINT(device, power, POWER_MW);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    GET_UINT(device, limit, POWER_LIMIT_MW);
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int *limit)
{
    GET_UINT(device, limit, POWER_DEFAULT_MW);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                      unsigned int *temp)
{
    (void)sensor;
    GET_UINT(device, temp, TEMP_C);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons)
{
    ENTER(device, reasons);
    GPU_ONLY(device);
    *reasons = value(device, REASONS);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t policy,
                                          nvmlViolationTime_t *violation)
{
    ENTER(device, violation);
    GPU_ONLY(device);
    if (policy != NVML_PERF_POLICY_POWER && policy != NVML_PERF_POLICY_THERMAL)
        return NVML_ERROR_NOT_SUPPORTED;
    violation->referenceTime = now_ms() * 1000;
    violation->violationTime =
        value(device, policy == NVML_PERF_POLICY_POWER ? VIOLATION_POWER_NS : VIOLATION_THERMAL_NS);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *gen)
{
    GET_UINT(device, gen, PCIE_GEN);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *width)
{
    GET_UINT(device, width, PCIE_WIDTH);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *gen)
{
    GET_UINT(device, gen, PCIE_GEN_MAX);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *width)
{
    GET_UINT(device, width, PCIE_WIDTH_MAX);
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *replays)
{
    GET_UINT(device, replays, REPLAYS);
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t type,
                                         nvmlEccCounterType_t counter, unsigned long long *count)
{
    ENTER(device, count);
    GPU_ONLY(device);
    (void)counter;
    *count =
        value(device, type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED ? ECC_UNCORRECTED : ECC_CORRECTED);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode)
{
    ENTER(device, mode);
    GPU_ONLY(device);
    *mode = (nvmlComputeMode_t)value(device, COMPUTE_MODE);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
    ENTER(device, mode);
    GPU_ONLY(device);
    *mode = value(device, PERSISTENCE) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

/* Whether the process step `s` is in effect now: no later process_end. */
static int process_running(const struct step *s)
{
    unsigned long long now = now_ms();
    for (int i = 0; i < step_count; i++)
        if (steps[i].what == PROCESS_END && steps[i].device == s->device &&
            steps[i].value == s->value && steps[i].at_ms >= s->at_ms && steps[i].at_ms <= now)
            return 0;
    return s->at_ms <= now;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos)
{
    ENTER(device, count);
    AGGREGATE(device);
    unsigned int n = 0, room = infos ? *count : 0;
    for (int i = 0; i < step_count; i++) {
        const struct step *s = &steps[i];
        n += s->what == PROCESS && s->device == (int)device->index && process_running(s);
    }
    /* "infoCount will contain minimal amount of space necessary for the call to complete" */
    if (n > room) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    /* "NVML_SUCCESS if infoCount and infos have been populated": only then */
    n = 0;
    for (int i = 0; i < step_count; i++) {
        const struct step *s = &steps[i];
        if (s->what == PROCESS && s->device == (int)device->index && process_running(s) && n < room)
            infos[n++] =
                (nvmlProcessInfo_t){(unsigned int)s->value, s->extra, 0xFFFFFFFFu, 0xFFFFFFFFu};
    }
    *count = n;
    return NVML_SUCCESS;
}
