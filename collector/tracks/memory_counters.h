/*
 * Live device and pinned host bytes, followed from the allocation and free
 * records and written as counter values.
 */
#ifndef CT_COLLECTOR_MEMORY_COUNTERS_H
#define CT_COLLECTOR_MEMORY_COUNTERS_H

#include <stdint.h>

#include "cudatrace/record.h"

/* Follows one call of `family` (enum ct_family) that ended at `ts`. */
void ct_memory_counters_note(uint8_t family, const struct ct_record *r, uint64_t ts);

#endif
