/*
 * The GPU's work on GPU tracks, and what became of CUPTI (gpu_tracks.c).
 */
#ifndef CT_COLLECTOR_GPU_TRACKS_H
#define CT_COLLECTOR_GPU_TRACKS_H

#include <stdint.h>

#include "cudatrace/record.h"
#include "collector/perfetto/writer.h"
#include "collector/tracks/gap_gpu.h"

/* Written by `w`, the work told to `gap` too; `records`: how GPU work is
 * written (enum ct_gpu_records); `graph_level`: CUPTI gives a graph launch
 * one record, not one per node. */
void ct_gpu_tracks_start(struct ct_writer *w, struct ct_gap_gpu *gap, uint32_t rings,
                         uint32_t records, uint32_t graph_level);
/* The link a host call with CUPTI's `correlation` id makes to its GPU
 * work: a flow, or with typed records a gpu_correlation. A graph launch
 * that runs `count` nodes (the nodes they were made as, `nodes`) starts a
 * flow to each on GPU tracks, their ids written to ids[0..count). */
struct ct_flow ct_gpu_call_flow(uint32_t correlation, const uint64_t *nodes, uint32_t count,
                                uint64_t *ids);
/* GPU work that carries `id`, that of a call made inside the call whose own
 * id is `call`, is that call's (0 ids are ignored). */
void ct_gpu_correlation_alias(uint32_t id, uint32_t call);
/* A CT_STR_GPU_KERNEL_NAME arrived. */
void ct_gpu_kernel_name(uint64_t key, uint32_t name);
/* A CT_REC_GPU record from ring `index`. */
void ct_gpu_record(uint32_t index, const struct ct_record *r);
/* A CT_STR_CUPTI_TEXT of ring `index`, then the CT_REC_CUPTI_STATE it goes with. */
void ct_gpu_cupti_text(uint32_t index, uint64_t key, uint32_t id);
void ct_gpu_cupti_state(uint32_t index, const struct ct_record *r, uint64_t ts);
/* The totals and the clock mapping's error, when CUPTI ran. */
void ct_gpu_tracks_finish(uint64_t end_ns);

#endif
