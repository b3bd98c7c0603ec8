/*
 * Opens NVML for the sampler: dlopen of libnvidia-ml.so.1 by its soname, as
 * the driver installs it (the unversioned name belongs to the development
 * package), then every entry point the collector uses, then nvmlInit. An
 * entry point the driver is too old to have stays NULL; those no driver
 * can lack make the load fail. Newer drivers name the throttle reasons
 * "clock events"; an older one's name stands in for the new one.
 */
#include "collector/gpu_state/nvml_loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define NVML_SONAME "libnvidia-ml.so.1"

static void resolve(struct ct_nvml *nvml)
{
#define CT_NVML_RESOLVE(name, parameters) *(void **)&nvml->name = dlsym(nvml->library, #name);
    CT_FOR_EACH_NVML_CALL(CT_NVML_RESOLVE)
#undef CT_NVML_RESOLVE
    if (!nvml->nvmlDeviceGetCurrentClocksEventReasons)
        nvml->nvmlDeviceGetCurrentClocksEventReasons =
            nvml->nvmlDeviceGetCurrentClocksThrottleReasons;
}

static void unload(struct ct_nvml *nvml)
{
    dlclose(nvml->library);
    memset(nvml, 0, sizeof *nvml);
}

int ct_nvml_open(struct ct_nvml *nvml, int *absent, char *error, size_t error_size)
{
    memset(nvml, 0, sizeof *nvml);
    *absent = 0;
    nvml->library = dlopen(NVML_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!nvml->library) {
        *absent = 1;
        snprintf(error, error_size, "%s", dlerror());
        return -1;
    }
    resolve(nvml);
    if (!nvml->nvmlInit_v2 || !nvml->nvmlShutdown || !nvml->nvmlDeviceGetCount_v2 ||
        !nvml->nvmlDeviceGetHandleByIndex_v2) {
        snprintf(error, error_size, "%s lacks nvmlInit_v2 or the device calls", NVML_SONAME);
        unload(nvml);
        return -1;
    }
    nvmlReturn_t r = nvml->nvmlInit_v2();
    if (r != NVML_SUCCESS) {
        snprintf(error, error_size, "nvmlInit_v2 failed with NVML error %d", (int)r);
        unload(nvml);
        return -1;
    }
    return 0;
}

void ct_nvml_close(struct ct_nvml *nvml)
{
    if (!nvml->library)
        return;
    nvml->nvmlShutdown();
    unload(nvml);
}
