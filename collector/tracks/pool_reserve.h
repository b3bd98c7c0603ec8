/*
 * The memory pools' and the CUDA graphs' reserve as counters (pool_reserve.c,
 * struct ct_pool_reserve, which the builder holds).
 */
#ifndef CT_COLLECTOR_POOL_RESERVE_H
#define CT_COLLECTOR_POOL_RESERVE_H

#include <stdint.h>

#include "collector/perfetto/process_tracks.h"
#include "common/u64_map.h"
#include "cudatrace/record.h"

/* The latest reserve read of each pool (or device), and their sum. */
struct ct_reserve {
    struct ct_u64_map latest; /* pool, or device + 1 -> its latest answer + 1 */
    uint64_t sum;
};

struct ct_pool_reserve {
    struct ct_process *process; /* on whose counters */
    struct ct_reserve pools, graphs;
};

/* The reserves of `process`, none read yet. */
void ct_pool_reserve_start(struct ct_pool_reserve *p, struct ct_process *process);
/* A call record; only a successful read of a pool's or the graphs' reserved
 * memory counts. */
void ct_pool_reserve_note(struct ct_pool_reserve *p, const struct ct_record *r, uint64_t end_ns);
/* The graphs' reserve on `device` as the preload read it at `ns`. */
void ct_pool_reserve_graphs_read(struct ct_pool_reserve *p, uint32_t device, uint64_t reserved,
                                 uint64_t ns);

#endif
