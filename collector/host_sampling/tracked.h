/*
 * The threads or the workers the sampler has seen, each with its readings
 * of the round before, so that a round can say what each did since and
 * which have gone. One set for the threads, one for the workers.
 */
#ifndef CT_COLLECTOR_HOST_TRACKED_H
#define CT_COLLECTOR_HOST_TRACKED_H

#include <stdint.h>

#include "collector/host_sampling/proc_read.h"
#include "common/u64_map.h"

struct ct_tracked {
    int32_t id;
    uint32_t round; /* the last round that saw it */
    uint64_t ts_ns, cpu_ns, wait_ns;
    struct ct_proc_files files;
};

struct ct_tracked_set {
    struct ct_u64_map index; /* id + 1 -> place + 1 */
    struct ct_tracked *items;
    uint32_t count, capacity;
};

/* `id`'s entry, made (with ts_ns 0) if new; NULL when the set is full. */
struct ct_tracked *ct_tracked_get(struct ct_tracked_set *s, int32_t id);
/* Removes every entry `round` did not see, calling `gone` on each first
 * and closing its files. */
void ct_tracked_sweep(struct ct_tracked_set *s, uint32_t round,
                      void (*gone)(const struct ct_tracked *t, void *ctx), void *ctx);

#endif
