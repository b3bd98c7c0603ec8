/*
 * The memory pools' reserve (pools.c): what cudaMallocAsync's pools held
 * of the device, as the runtime reported it when the program asked.
 */
#ifndef CT_VIEWER_MODEL_POOLS_H
#define CT_VIEWER_MODEL_POOLS_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"
#include "viewer-export/read/trace_decode.h"

struct ct_pool_reserve {
    struct ct_u64_map pools_read; /* pool -> 1 */
    uint64_t readings, trims;
    double peak_bytes, final_bytes; /* the collector's counter of them */
    uint64_t final_ts;
    struct ct_pool_point {
        uint64_t ts;
        double bytes;
    } * points; /* the counter's values, as read */
    size_t point_count;
};

/* Notes a call slice of `fn` (only a pool attribute read or a trim counts). */
void ct_pool_reserve_slice(struct ct_pool_reserve *r, int fn, const struct ct_event *e);
/* Notes a value of the pools' reserve counter (collector/tracks/pool_reserve.c). */
void ct_pool_reserve_counter(struct ct_pool_reserve *r, uint64_t ts, double bytes);
/* The counter's latest value at or before `ts` into *bytes; 0 when the
 * pools had not been asked by then. */
int ct_pool_reserve_at(const struct ct_pool_reserve *r, uint64_t ts, double *bytes);
void ct_pool_reserve_free(struct ct_pool_reserve *r);

#endif
