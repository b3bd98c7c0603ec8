/*
 * Kernel names for launch records.
 */
#ifndef CT_PRELOAD_KERNEL_NAMES_H
#define CT_PRELOAD_KERNEL_NAMES_H

#include <stdint.h>

/* Makes sure the collector knows the name of `func` before the launch record
 * that uses it, and returns the key that record carries. `by_handle` says
 * `func` is a cudaKernel_t (from __cudaGetKernel), not a host function. */
uint64_t ct_kernel_key(const void *func, int by_handle, int launch_ok);

/* Remembers which host function a cudaKernel_t handle stands for. */
void ct_kernel_handle_note(const void *handle, const void *host_func);

int ct_kernel_names_init(uint32_t rings);

#endif
