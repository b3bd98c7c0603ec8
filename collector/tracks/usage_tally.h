/*
 * What the usage findings read, tallied over every call record so that a
 * bounded trace's dropped middle still counts (usage_tally.c).
 */
#ifndef CT_COLLECTOR_USAGE_TALLY_H
#define CT_COLLECTOR_USAGE_TALLY_H

#include <stdint.h>

#include "collector/perfetto/writer.h"
#include "cudatrace/record.h"

/* A call record of thread `tid` at its site (a string id, 0: none) that
 * took `ns`, into `chunk`, the one its slice is in. */
void ct_usage_tally_call(const struct ct_record *r, int32_t tid, uint32_t site, uint64_t ns,
                         uint32_t chunk);
/* An NVTX range named `name` (a string id) that says step, which lasted
 * `ns`, into `chunk`, the one its end is in. */
void ct_usage_tally_step_range(uint32_t name, uint64_t ns, uint32_t chunk);
/* Moves the tallies of the chunks before `first_kept` into those of the
 * dropped middle, and writes all of these as instants at `ts`. */
void ct_usage_tally_write_dropped(struct ct_sequence *seq, uint32_t first_kept, uint64_t ts);

#endif
