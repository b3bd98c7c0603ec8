/*
 * What a bounded trace's gap says of the GPU's work in its dropped middle,
 * so that gpu-idle stays whole across it (gap_gpu.c, struct ct_gap_gpu,
 * which the builder holds).
 */
#ifndef CT_COLLECTOR_GAP_GPU_H
#define CT_COLLECTOR_GAP_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "collector/perfetto/writer.h"
#include "collector/tracks/chunk_keeper.h"

#define CT_GAP_GPU_GAPS 8 /* idle gaps the gap keeps, longest first */

/* Busy time from start to end: `busy` of it, when blocks were joined. */
struct ct_gap_gpu_block {
    uint64_t start, end, busy;
};

struct ct_gap_gpu {
    struct ct_chunk_keeper chunks; /* each chunk's work */
    /* The dropped chunks' work, joined across all but the longest gaps. */
    struct ct_gap_gpu_block dropped[CT_GAP_GPU_GAPS + 1];
    size_t dropped_count;
};

void ct_gap_gpu_start(struct ct_gap_gpu *g);
/* GPU work (a kernel, copy or memset) from `begin` to `end`, written into
 * chunk `chunk`. */
void ct_gap_gpu_work(struct ct_gap_gpu *g, uint64_t begin, uint64_t end, uint32_t chunk);
/* Writes, at `ts`, the work of the chunks before `first_kept` (and of those
 * dropped before) as busy blocks split at its longest idle gaps. */
void ct_gap_gpu_write(struct ct_gap_gpu *g, struct ct_sequence *seq, uint32_t first_kept,
                      uint64_t ts);

#endif
