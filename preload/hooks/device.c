/*
 * Hooks for the calls that decide whether CUDA works at all: device discovery
 * and selection, the runtime and driver versions, free memory, device reset
 * and the sticky last error. torch.cuda.is_available() makes only one of
 * them (cudaGetDeviceCount), so without these a failing setup left no trace.
 * The preload's own queries of the same functions go to the real runtime
 * through ct_real_function and never reach these hooks.
 */
#include "preload/hooks/hook.h"

#define HOOK_GET_INT(name, type, what)                                                             \
    CT_HOOK(name, (type * out), (out), CT_OUT(out), what, 0, 0, 0)
HOOK_GET_INT(cudaGetDeviceCount, int, CT_WROTE_COUNT)
HOOK_GET_INT(cudaGetDevice, int, CT_WROTE_DEVICE)
HOOK_GET_INT(cudaGetDeviceFlags, unsigned int, CT_WROTE_FLAGS)
HOOK_GET_INT(cudaRuntimeGetVersion, int, CT_WROTE_VERSION)
HOOK_GET_INT(cudaDriverGetVersion, int, CT_WROTE_VERSION)

CT_HOOK(cudaSetDevice, (int device), (device), device, 0, 0, 0, 0)
CT_HOOK(cudaGetDeviceProperties, (struct cudaDeviceProp * prop, int device), (prop, device), device,
        0, 0, 0, 0)
CT_HOOK(cudaDeviceGetAttribute, (int *value, enum cudaDeviceAttr attr, int device),
        (value, attr, device), device, attr, CT_OUT(value), 0, 0)
CT_HOOK(cudaSetDeviceFlags, (unsigned int flags), (flags), CT_NO_DEVICE, 0, 0, flags, 0)
CT_HOOK(cudaInitDevice, (int device, unsigned int device_flags, unsigned int flags),
        (device, device_flags, flags), device, 0, 0, device_flags, 0)

CT_HOOK(cudaMemGetInfo, (size_t * free_bytes, size_t *total_bytes), (free_bytes, total_bytes),
        CT_OUT(free_bytes), CT_OUT(total_bytes), 0, 0, 0)

CT_HOOK(cudaDeviceReset, (void), (), 0, 0, 0, 0, 0)
CT_HOOK(cudaGetLastError, (void), (), 0, 0, 0, 0, 0)
CT_HOOK(cudaPeekAtLastError, (void), (), 0, 0, 0, 0, 0)
