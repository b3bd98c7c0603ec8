/*
 * What the usage findings read, tallied over every call record so that a
 * bounded trace's dropped middle still counts (usage_tally.c, struct
 * ct_usage_tally, which the builder holds).
 */
#ifndef CT_COLLECTOR_USAGE_TALLY_H
#define CT_COLLECTOR_USAGE_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "collector/perfetto/writer.h"
#include "collector/tracks/chunk_keeper.h"
#include "common/call_cost.h"
#include "common/u64_map.h"
#include "cudatrace/record.h"

struct ct_tally_entry;

/* Calls, time and bytes by cost and site (or by thread). */
struct ct_tally {
    struct ct_u64_map index; /* key -> index + 1 */
    struct ct_tally_entry *entries;
    size_t count, last; /* last: the entry added to last */
};

struct ct_usage_tally {
    struct ct_chunk_keeper chunks; /* each chunk's struct ct_tally */
    struct ct_tally dropped;       /* the dropped middle's */
    struct ct_pinned_memory pinned;
};

void ct_usage_tally_start(struct ct_usage_tally *u);
/* A call record of thread `tid` at its site (a string id, 0: none) that
 * took `ns`, into `chunk`, the one its slice is in. */
void ct_usage_tally_call(struct ct_usage_tally *u, const struct ct_record *r, int32_t tid,
                         uint32_t site, uint64_t ns, uint32_t chunk);
/* An NVTX range named `name` (a string id) that says step, which lasted
 * `ns`, into `chunk`, the one its end is in. */
void ct_usage_tally_step_range(struct ct_usage_tally *u, uint32_t name, uint64_t ns,
                               uint32_t chunk);
/* Moves the tallies of the chunks before `first_kept` into those of the
 * dropped middle, and writes all of these as instants at `ts`. */
void ct_usage_tally_write_dropped(struct ct_usage_tally *u, struct ct_sequence *seq,
                                  uint32_t first_kept, uint64_t ts);

#endif
