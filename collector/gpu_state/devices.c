/*
 * Chooses the devices to sample and reads their fixed facts. The process
 * sees the devices CUDA_VISIBLE_DEVICES names, in that order, as ordinals
 * 0, 1, ...: an entry is an index into CUDA's order or a UUID (or its
 * prefix), and CUDA stops at the first entry it cannot match, so this does
 * too; unset, it sees them all. A UUID is known before the program makes a
 * context, and holds in a container whose pids NVML does not share, which
 * the device's list of compute processes would not; which of them the
 * process really used the trace tells by its pid among their processes
 * (gpu.process.start). An index is not NVML's ("The NVML index may not
 * correlate with other APIs, such as the CUDA device index": CUDA puts the
 * fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID), so where an index or
 * no list decides among several devices, the choice waits for CUDA's own
 * account of each ordinal's UUID, which the preload sends once the program
 * has initialised CUDA, and follows the NVML device with that UUID. An
 * entry "MIG-<uuid>" names
 * a MIG instance, matched whole against each instance NVML lists: the
 * instance is then sampled for what is its own, its GPU for the rest (the
 * older "MIG-GPU-<uuid>/<gi>/<ci>" form is not matched). Unset, a GPU in
 * MIG mode is followed as what CUDA's UUID names: the instance the process
 * runs on, whose memory and processes are its own (the GPU's aggregate
 * ones need privileges). nvmlDeviceGetCount_v2 counts devices
 * NVML may not open: such a device keeps its place, with what
 * nvmlDeviceGetHandleByIndex_v2 answered, and no facts.
 */
#include "collector/gpu_state/devices.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The fixed facts of one device; each stays 0 or empty when unreadable. */
static void read_facts(const struct ct_nvml *n, nvmlDevice_t d, struct ct_gpu_device *out)
{
    nvmlPciInfo_t pci;
    if (n->nvmlDeviceGetUUID)
        n->nvmlDeviceGetUUID(d, out->uuid, sizeof out->uuid);
    if (n->nvmlDeviceGetName)
        n->nvmlDeviceGetName(d, out->name, sizeof out->name);
    if (n->nvmlDeviceGetPciInfo_v3 && n->nvmlDeviceGetPciInfo_v3(d, &pci) == NVML_SUCCESS)
        memcpy(out->pci_bus_id, pci.busId, sizeof out->pci_bus_id);
    if (n->nvmlDeviceGetMaxClockInfo) {
        n->nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &out->sm_clock_max);
        n->nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &out->memory_clock_max);
    }
    if (n->nvmlDeviceGetPowerManagementDefaultLimit)
        n->nvmlDeviceGetPowerManagementDefaultLimit(d, &out->power_default_limit);
    if (n->nvmlDeviceGetMaxPcieLinkGeneration)
        n->nvmlDeviceGetMaxPcieLinkGeneration(d, &out->pcie_generation_max);
    if (n->nvmlDeviceGetMaxPcieLinkWidth)
        n->nvmlDeviceGetMaxPcieLinkWidth(d, &out->pcie_width_max);
}

/* The NVML index an entry of CUDA_VISIBLE_DEVICES names, or -1: an index,
 * or a UUID or a prefix of it, with or without "GPU-", that names one
 * device only. */
static int index_of(const char *entry, size_t len, const struct ct_gpu_device *all, uint32_t count)
{
    char *end;
    long index = strtol(entry, &end, 10);
    if (len && (size_t)(end - entry) == len)
        return index >= 0 && index < (long)count ? (int)index : -1;
    size_t skip = strncmp(entry, "GPU-", 4) == 0 ? 0 : 4;
    int found = -1;
    for (uint32_t i = 0; len && i < count; i++) {
        if (strlen(all[i].uuid) < skip || strncmp(all[i].uuid + skip, entry, len) != 0)
            continue;
        if (found >= 0)
            return -1;
        found = (int)i;
    }
    return found;
}

/* The instance, of a GPU among `all`, whose UUID is the `len` bytes of
 * `entry`: its facts are its GPU's but for its UUID and name. */
static int mig_instance(const struct ct_nvml *n, const char *entry, size_t len,
                        const struct ct_gpu_device *all, const nvmlDevice_t *gpus, uint32_t count,
                        struct ct_gpu_device *out, struct ct_gpu_handles *handles)
{
    if (!n->nvmlDeviceGetMaxMigDeviceCount || !n->nvmlDeviceGetMigDeviceHandleByIndex ||
        !n->nvmlDeviceGetUUID)
        return 0;
    for (uint32_t i = 0; i < count; i++) {
        unsigned int max = 0;
        if (!gpus[i] || n->nvmlDeviceGetMaxMigDeviceCount(gpus[i], &max) != NVML_SUCCESS)
            continue;
        for (unsigned int m = 0; m < max; m++) {
            nvmlDevice_t mig;
            char uuid[sizeof out->uuid] = "";
            if (n->nvmlDeviceGetMigDeviceHandleByIndex(gpus[i], m, &mig) != NVML_SUCCESS ||
                n->nvmlDeviceGetUUID(mig, uuid, sizeof uuid) != NVML_SUCCESS ||
                strlen(uuid) != len || strncmp(uuid, entry, len) != 0)
                continue;
            *out = all[i];
            memcpy(out->gpu_uuid, all[i].uuid, sizeof out->gpu_uuid);
            memcpy(out->uuid, uuid, sizeof out->uuid);
            if (n->nvmlDeviceGetName)
                n->nvmlDeviceGetName(mig, out->name, sizeof out->name);
            *handles = (struct ct_gpu_handles){mig, gpus[i]};
            return 1;
        }
    }
    return 0;
}

/* The device one entry of CUDA_VISIBLE_DEVICES names, into `out`. */
static int chosen_by(const struct ct_nvml *n, const char *entry, size_t len,
                     const struct ct_gpu_device *all, const nvmlDevice_t *gpus, uint32_t count,
                     struct ct_gpu_device *out, struct ct_gpu_handles *handles)
{
    if (strncmp(entry, "MIG-", 4) == 0)
        return mig_instance(n, entry, len, all, gpus, count, out, handles);
    int index = index_of(entry, len, all, count);
    if (index < 0)
        return 0;
    *out = all[index];
    *handles = (struct ct_gpu_handles){gpus[index], gpus[index]};
    return 1;
}

static struct ct_gpu_device all[CT_GPU_DEVICES_MAX];
static nvmlDevice_t all_handles[CT_GPU_DEVICES_MAX];

/* Every device NVML counts, into `all`; how many. */
static uint32_t list_all(const struct ct_nvml *nvml)
{
    unsigned int count = 0;
    if (nvml->nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS)
        return 0;
    uint32_t known = 0;
    for (unsigned int i = 0; i < count && known < CT_GPU_DEVICES_MAX; i++, known++) {
        memset(&all[known], 0, sizeof all[known]);
        all[known].nvml_index = i;
        all[known].opened = nvml->nvmlDeviceGetHandleByIndex_v2(i, &all_handles[known]);
        if (all[known].opened == NVML_SUCCESS)
            read_facts(nvml, all_handles[known], &all[known]);
        else
            all_handles[known] = NULL;
    }
    return known;
}

/* Whether CUDA's order decides what `visible` names: unset, or an entry is
 * an index; it does not when NVML has one device at most. */
static int by_cuda_order(const char *visible, uint32_t known)
{
    if (known <= 1)
        return 0;
    for (const char *entry = visible; entry;
         entry = strchr(entry, ',') ? strchr(entry, ',') + 1 : NULL)
        if (strspn(entry, "0123456789") == strcspn(entry, ","))
            return 1;
    return !visible;
}

/* Whether a GPU has a MIG instance: CUDA then runs the process on one of
 * them, which only CUDA's account of the UUID names. */
static int in_mig_mode(const struct ct_nvml *n, uint32_t known)
{
    nvmlDevice_t mig;
    for (uint32_t i = 0; n->nvmlDeviceGetMigDeviceHandleByIndex && i < known; i++)
        if (all_handles[i] &&
            n->nvmlDeviceGetMigDeviceHandleByIndex(all_handles[i], 0, &mig) == NVML_SUCCESS)
            return 1;
    return 0;
}

uint32_t ct_gpu_devices_choose(const struct ct_nvml *nvml, const char *visible,
                               struct ct_gpu_device out[CT_GPU_DEVICES_MAX],
                               struct ct_gpu_handles handles[CT_GPU_DEVICES_MAX], int *by_cuda)
{
    uint32_t known = list_all(nvml);
    *by_cuda = by_cuda_order(visible, known) || (!visible && in_mig_mode(nvml, known));
    uint32_t chosen = 0;
    for (const char *entry = visible ? visible : "";
         visible && !*by_cuda && chosen < CT_GPU_DEVICES_MAX;) {
        size_t len = strcspn(entry, ",");
        if (!chosen_by(nvml, entry, len, all, all_handles, known, &out[chosen], &handles[chosen]))
            break;
        chosen++;
        if (!entry[len])
            break;
        entry += len + 1;
    }
    for (uint32_t i = 0; !visible && !*by_cuda && i < known; i++) {
        out[chosen] = all[i];
        handles[chosen++] = (struct ct_gpu_handles){all_handles[i], all_handles[i]};
    }
    for (uint32_t i = 0; i < chosen; i++)
        out[i].slot = out[i].ordinal = i;
    return chosen;
}

/* The first device NVML would not open, or -1: the one a CUDA device no
 * readable one matches must be, when there is one only. */
static int first_unreadable(uint32_t known)
{
    for (uint32_t i = 0; i < known; i++)
        if (all[i].opened != NVML_SUCCESS)
            return (int)i;
    return -1;
}

uint32_t ct_gpu_devices_match(const struct ct_nvml *nvml, const char uuids[][CT_GPU_UUID_MAX],
                              uint32_t count, struct ct_gpu_device out[CT_GPU_DEVICES_MAX],
                              struct ct_gpu_handles handles[CT_GPU_DEVICES_MAX])
{
    uint32_t known = list_all(nvml), chosen = 0;
    for (uint32_t ordinal = 0; ordinal < count && chosen < CT_GPU_DEVICES_MAX; ordinal++) {
        char entry[CT_GPU_UUID_MAX + 8];
        int found = 0;
        for (int mig = 0; mig < 2 && !found && *uuids[ordinal]; mig++) {
            snprintf(entry, sizeof entry, "%s-%s", mig ? "MIG" : "GPU", uuids[ordinal]);
            found = chosen_by(nvml, entry, strlen(entry), all, all_handles, known, &out[chosen],
                              &handles[chosen]);
        }
        int unreadable = found ? -1 : first_unreadable(known);
        if (unreadable >= 0) {
            out[chosen] = all[unreadable];
            handles[chosen] = (struct ct_gpu_handles){NULL, NULL};
        }
        if (found || unreadable >= 0) {
            out[chosen].slot = chosen;
            out[chosen++].ordinal = ordinal;
        }
    }
    return chosen;
}
