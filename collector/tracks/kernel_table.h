/*
 * Kernel names and the files that hold them, by the key the preload gave
 * each kernel.
 */
#ifndef CT_COLLECTOR_KERNEL_TABLE_H
#define CT_COLLECTOR_KERNEL_TABLE_H

#include <stdint.h>

void ct_kernel_table_name_is(uint64_t key, uint32_t name);
void ct_kernel_table_library_is(uint64_t key, uint32_t path);
/* The kernel's name as a string id; "kernel@0x..." when none arrived. */
uint32_t ct_kernel_table_name(uint64_t key);
/* A launch of `key` failed with cudaErrorNoKernelImageForDevice at `ts`. */
void ct_kernel_table_no_image(uint64_t key, uint64_t ts);

#endif
