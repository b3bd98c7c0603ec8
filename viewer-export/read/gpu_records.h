/*
 * Perfetto's typed GPU records read back as the slices and tracks the
 * default GPU tracks hold (gpu_records.c).
 */
#ifndef CT_GPU_RECORDS_H
#define CT_GPU_RECORDS_H

#include <stdint.h>

#include "common/u64_map.h"
#include "perfetto_trace.pb-c.h"
#include "viewer-export/read/trace_decode.h"

/* What one sequence interned for its GpuRenderStageEvents, beside the
 * event names and string values the track events share. */
struct ct_gpu_interned {
    struct ct_u64_map specifications; /* hardware queues and stages: iid -> name */
    struct ct_u64_map arg_names;      /* iid -> name */
    struct ct_u64_map context_pids;   /* iid -> pid + 1 */
};
void ct_gpu_interned_learn(struct ct_gpu_interned *t, const CtPb__InternedData *data);
void ct_gpu_interned_clear(struct ct_gpu_interned *t);

/* The hardware queues met so far, each a track under its process's. */
struct ct_gpu_queues {
    struct ct_u64_map tracks;       /* pid << 32 | queue name's string id -> track uuid */
    struct ct_u64_map process_uuid; /* pid + 1 -> the process track's uuid */
};
void ct_gpu_queues_note_process(struct ct_gpu_queues *q, int32_t pid, uint64_t uuid);
void ct_gpu_queues_free(struct ct_gpu_queues *q);

/* The names and values a sequence interned, for ct_gpu_record_slice. */
struct ct_gpu_sequence_tables {
    const struct ct_gpu_interned *gpu;
    const struct ct_u64_map *event_names, *string_values;
};

/* The slice a GpuRenderStageEvent stands for, as the default GPU track
 * would hold it: its hardware queue's track (described to `track` the
 * first time it is met), its name, its launch arguments as annotations,
 * and the flow its host call's gpu_correlation begins as flow_in. */
void ct_gpu_record_slice(struct ct_gpu_queues *q, const struct ct_gpu_sequence_tables *tables,
                         const CtPb__TracePacket *p, struct ct_event *slice,
                         void (*track)(void *ctx, const struct ct_track_info *track), void *ctx);

/* The render stage event a host call's gpu_correlation names first; 0: none. */
uint64_t ct_gpu_record_submission(const CtPb__TrackEvent *te);

#endif
