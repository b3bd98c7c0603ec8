/*
 * What a bounded trace's gap says of live device memory, so that the
 * report's live blocks and low points stay whole across it (gap_memory.c).
 */
#ifndef CT_COLLECTOR_GAP_MEMORY_H
#define CT_COLLECTOR_GAP_MEMORY_H

#include <stdint.h>

#include "collector/perfetto/writer.h"
#include "collector/tracks/call_sites.h"

/* A device allocation (or a virtual-memory handle's memory, `is_handle`)
 * made at `ts` by a call whose slice went into chunk `chunk` from `site`. */
void ct_gap_memory_made(uint64_t key, int is_handle, uint64_t bytes, uint64_t ts,
                        struct ct_call_site site, uint32_t chunk);
/* Its memory went at `ts`, by a call whose slice went into chunk `chunk`. */
void ct_gap_memory_gone(uint64_t key, int is_handle, uint64_t ts, uint32_t chunk);
/* The live device bytes (allocations and the virtual-memory API's) are
 * `bytes` at `ts`, after a call whose slice went into chunk `chunk`. */
void ct_gap_memory_level(uint64_t bytes, uint64_t ts, uint32_t chunk);
/* Writes, at `ts`, the blocks made in the chunks before `first_kept` and
 * live at its start, and the lowest and highest live bytes in those chunks. */
void ct_gap_memory_write(struct ct_sequence *seq, uint32_t first_kept, uint64_t ts);

#endif
