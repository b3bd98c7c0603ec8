/*
 * What a bounded trace's gap says of live device memory, so that the
 * report's live blocks and low points stay whole across it (gap_memory.c,
 * struct ct_gap_memory, which the builder holds).
 */
#ifndef CT_COLLECTOR_GAP_MEMORY_H
#define CT_COLLECTOR_GAP_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "collector/perfetto/writer.h"
#include "collector/tracks/call_sites.h"
#include "collector/tracks/chunk_keeper.h"
#include "common/u64_map.h"

struct ct_gap_block;

/* The lowest and highest live bytes seen, and when; seen 0: none yet. */
struct ct_gap_levels {
    int seen;
    uint64_t low, low_ns, high, high_ns;
};

struct ct_gap_memory {
    struct ct_gap_block *blocks; /* made outside the head, live or gone since */
    size_t block_count, block_capacity;
    struct ct_u64_map live;        /* key -> index + 1 in blocks, while live */
    struct ct_chunk_keeper levels; /* each chunk's struct ct_gap_levels */
    struct ct_gap_levels dropped_levels;
};

void ct_gap_memory_start(struct ct_gap_memory *g);
/* A device allocation (or a virtual-memory handle's memory, `is_handle`)
 * made at `ts` by a call whose slice went into chunk `chunk` from `site`. */
void ct_gap_memory_made(struct ct_gap_memory *g, uint64_t key, int is_handle, uint64_t bytes,
                        uint64_t ts, struct ct_call_site site, uint32_t chunk);
/* Its memory went at `ts`, by a call whose slice went into chunk `chunk`. */
void ct_gap_memory_gone(struct ct_gap_memory *g, uint64_t key, int is_handle, uint64_t ts,
                        uint32_t chunk);
/* The live device bytes (allocations and the virtual-memory API's) are
 * `bytes` at `ts`, after a call whose slice went into chunk `chunk`. */
void ct_gap_memory_level(struct ct_gap_memory *g, uint64_t bytes, uint64_t ts, uint32_t chunk);
/* Writes, at `ts`, the blocks made in the chunks before `first_kept` and
 * live at its start, and the lowest and highest live bytes in those chunks. */
void ct_gap_memory_write(struct ct_gap_memory *g, struct ct_sequence *seq, uint32_t first_kept,
                         uint64_t ts);

#endif
