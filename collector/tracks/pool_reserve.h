/*
 * The memory pools' and the CUDA graphs' reserve as counters (pool_reserve.c).
 */
#ifndef CT_COLLECTOR_POOL_RESERVE_H
#define CT_COLLECTOR_POOL_RESERVE_H

#include <stdint.h>

#include "cudatrace/record.h"

/* A call record; only a successful read of a pool's or the graphs' reserved
 * memory counts. */
void ct_pool_reserve_note(const struct ct_record *r, uint64_t end_ns);
/* The graphs' reserve on `device` as the preload read it at `ns`. */
void ct_pool_reserve_graphs_read(uint32_t device, uint64_t reserved, uint64_t ns);

#endif
