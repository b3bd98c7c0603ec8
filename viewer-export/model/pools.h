/*
 * The memory pools' reserve (pools.c): what cudaMallocAsync's pools held
 * of the device, as the runtime reported it when the program asked.
 */
#ifndef CT_VIEWER_MODEL_POOLS_H
#define CT_VIEWER_MODEL_POOLS_H

#include <stddef.h>
#include <stdint.h>

#include "viewer-export/read/trace_decode.h"

struct ct_pool_reading {
    uint64_t ts, pool, bytes;
};

struct ct_pool_reserve {
    struct ct_pool_reading *readings;
    size_t count;
    uint64_t trims;
};

/* The pools' reserve summed over them in time order: each pool counts
 * with its latest reading. */
struct ct_pool_summary {
    uint64_t readings, pools, trims, peak_bytes, final_bytes;
};

/* Notes a call slice of `fn` (only a pool attribute read or a trim counts). */
void ct_pool_reserve_slice(struct ct_pool_reserve *r, int fn, const struct ct_event *e);
void ct_pool_reserve_summarise(const struct ct_pool_reserve *r, struct ct_pool_summary *out);
void ct_pool_reserve_free(struct ct_pool_reserve *r);

#endif
