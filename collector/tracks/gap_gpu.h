/*
 * What a bounded trace's gap says of the GPU's work in its dropped middle,
 * so that gpu-idle stays whole across it (gap_gpu.c).
 */
#ifndef CT_COLLECTOR_GAP_GPU_H
#define CT_COLLECTOR_GAP_GPU_H

#include <stdint.h>

#include "collector/perfetto/writer.h"

/* GPU work (a kernel, copy or memset) from `begin` to `end`, written into
 * chunk `chunk`. */
void ct_gap_gpu_work(uint64_t begin, uint64_t end, uint32_t chunk);
/* Writes, at `ts`, the work of the chunks before `first_kept` (and of those
 * dropped before) as busy blocks split at its longest idle gaps. */
void ct_gap_gpu_write(struct ct_sequence *seq, uint32_t first_kept, uint64_t ts);

#endif
