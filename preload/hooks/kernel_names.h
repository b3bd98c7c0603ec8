/*
 * Kernel names for launch records.
 */
#ifndef CT_PRELOAD_KERNEL_NAMES_H
#define CT_PRELOAD_KERNEL_NAMES_H

#include <stdint.h>

#include "preload/core/ring.h"

uint64_t ct_kernel_key_slow(struct ct_ring *ring, const void *func, int by_handle, int launch_ok);

/* Makes sure the collector knows the name of `func` before the launch record
 * that uses it, and returns the key that record carries. `by_handle` says
 * `func` is a cudaKernel_t (from __cudaGetKernel), not a host function.
 * Launch loops repeat one kernel, so the last one named costs one compare. */
static inline uint64_t ct_kernel_key(const void *func, int by_handle, int launch_ok)
{
    struct ct_ring *ring = ct_ring_current();
    if (__builtin_expect(ring && ring->last_kernel == (uint64_t)(uintptr_t)func, 1))
        return ring->last_kernel;
    return ct_kernel_key_slow(ring, func, by_handle, launch_ok);
}

/* Sends `name` as the string of `kind` for `key`, unless this ring did. */
void ct_kernel_name_once(struct ct_ring *ring, uint16_t kind, uint64_t key, const char *name);

/* Remembers which host function a cudaKernel_t handle stands for. */
void ct_kernel_handle_note(const void *handle, const void *host_func);
/* Remembers the device function name nvcc registered for a host stub (the
 * string lives in the module's own data, so it is kept by pointer). */
void ct_kernel_register_name(const void *host_func, const char *device_name);

int ct_kernel_names_init(uint32_t rings);

#endif
