/*
 * Calls so far, for status: a thread's totals live in its ring while it
 * runs (written by it alone, read here as they stand) and are handed to the
 * builder when it ends, after which its ring is cleared for another thread;
 * so the sum is the ended threads' plus every ring still in use. Both are
 * read on the collector's one thread, between drains, so none is counted
 * twice.
 */
#include "collector/control/totals.h"

#include <string.h>

static struct ct_call_stats ended[CT_FN_COUNT];

void ct_control_totals_ended(const struct ct_call_stats *stats)
{
    ct_call_stats_add(ended, stats);
}

void ct_control_totals_now(struct ct_shm_header *shm, struct ct_call_stats *out)
{
    memcpy(out, ended, sizeof ended);
    for (uint32_t i = 0, n = ct_shm_rings_in_use(shm); i < n; i++) {
        struct ct_ring *ring = ct_shm_ring(shm, i);
        if (atomic_load(&ring->state) != CT_RING_FREE)
            ct_call_stats_add(out, ring->stats);
    }
}
