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

#endif
