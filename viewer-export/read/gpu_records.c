/*
 * Owns reading Perfetto's typed GPU records (CUDATRACE_GPU_RECORDS=typed,
 * docs/gpu.md) back into what every command already takes: each
 * GpuRenderStageEvent becomes the slice its default GPU track would hold,
 * on a track per process and hardware queue ("GPU 0 stream 7") under the
 * process's track, with the same name and annotations (the collector puts
 * them in the launch's arguments), ending the flow whose id is its
 * event_id; a host call's gpu_correlation begins that flow. So the report,
 * the chrome-json and HTML exports give the same figures from either form.
 */
#include "viewer-export/read/gpu_records.h"

#include <string.h>

#include "common/string_table.h"
#include "cudatrace/trace_names.h"

/* Tracks made for hardware queues: a range no track of the collector's uses. */
#define QUEUE_TRACK_BASE (3ull << 62)

void ct_gpu_interned_learn(struct ct_gpu_interned *t, const CtPb__InternedData *data)
{
    for (size_t i = 0; i < data->n_gpu_specifications; i++)
        ct_u64_map_put(&t->specifications, data->gpu_specifications[i]->iid,
                       ct_intern_text(data->gpu_specifications[i]->name));
    for (size_t i = 0; i < data->n_compute_arg_names; i++)
        ct_u64_map_put(&t->arg_names, data->compute_arg_names[i]->iid,
                       ct_intern_text(data->compute_arg_names[i]->name));
    for (size_t i = 0; i < data->n_graphics_contexts; i++)
        ct_u64_map_put(&t->context_pids, data->graphics_contexts[i]->iid,
                       (uint64_t)(uint32_t)data->graphics_contexts[i]->pid + 1);
}

void ct_gpu_interned_clear(struct ct_gpu_interned *t)
{
    ct_u64_map_free(&t->specifications);
    ct_u64_map_free(&t->arg_names);
    ct_u64_map_free(&t->context_pids);
}

void ct_gpu_queues_note_process(struct ct_gpu_queues *q, int32_t pid, uint64_t uuid)
{
    ct_u64_map_put(&q->process_uuid, (uint64_t)(uint32_t)pid + 1, uuid);
}

void ct_gpu_queues_free(struct ct_gpu_queues *q)
{
    ct_u64_map_free(&q->tracks);
    ct_u64_map_free(&q->process_uuid);
}

static uint64_t queue_track(struct ct_gpu_queues *q, int32_t pid, const char *name,
                            void (*track)(void *ctx, const struct ct_track_info *track), void *ctx)
{
    uint32_t name_id = ct_intern_text(name);
    uint64_t key = (uint64_t)(uint32_t)pid << 32 | name_id;
    const uint64_t *uuid = ct_u64_map_find(&q->tracks, key);
    if (uuid)
        return *uuid;
    uint64_t made = QUEUE_TRACK_BASE + q->tracks.count + 1;
    ct_u64_map_put(&q->tracks, key, made);
    const uint64_t *parent = ct_u64_map_find(&q->process_uuid, (uint64_t)(uint32_t)pid + 1);
    struct ct_track_info info = {
        .uuid = made, .parent = parent ? *parent : 0, .name = ct_strings_get(name_id)};
    if (track)
        track(ctx, &info);
    return made;
}

static void launch_arg(const struct ct_gpu_sequence_tables *t,
                       const CtPb__GpuRenderStageEvent__ExtraComputeArg *a,
                       struct ct_annotation *out)
{
    memset(out, 0, sizeof *out);
    out->name = ct_interned_text(&t->gpu->arg_names, a->name_iid);
    if (a->has_string_value_iid) {
        out->type = CT_VALUE_STRING;
        out->s = ct_interned_text(t->string_values, a->string_value_iid);
    } else if (a->has_int_value) {
        out->type = CT_VALUE_INT;
        out->i = a->int_value;
    } else {
        out->type = CT_VALUE_UINT;
        out->u = a->uint_value;
    }
}

void ct_gpu_record_slice(struct ct_gpu_queues *q, const struct ct_gpu_sequence_tables *tables,
                         const CtPb__TracePacket *p, struct ct_event *slice,
                         void (*track)(void *ctx, const struct ct_track_info *track), void *ctx)
{
    const CtPb__GpuRenderStageEvent *g = p->gpu_render_stage_event;
    const uint64_t *pid = ct_u64_map_find(&tables->gpu->context_pids, g->context);
    memset(slice, 0, sizeof *slice);
    slice->track =
        queue_track(q, pid ? (int32_t)(*pid - 1) : 0,
                    ct_interned_text(&tables->gpu->specifications, g->hw_queue_iid), track, ctx);
    slice->ts = p->timestamp;
    /* A duration past the clock's end, which only a broken file has, ends there. */
    slice->end = g->duration > UINT64_MAX - p->timestamp ? UINT64_MAX : p->timestamp + g->duration;
    slice->name = ct_interned_text(tables->event_names, g->name_iid);
    slice->flow_in = g->event_id & CT_GPU_EVENT_UNLINKED ? 0 : g->event_id;
    const CtPb__GpuRenderStageEvent__ComputeKernelLaunch *launch = g->launch;
    for (size_t i = 0; launch && i < launch->n_args && slice->nargs < CT_MAX_EVENT_ARGS; i++)
        launch_arg(tables, launch->args[i], &slice->args[slice->nargs++]);
}

uint64_t ct_gpu_record_submission(const CtPb__TrackEvent *te)
{
    const CtPb__GpuCorrelation *c = te->gpu_correlation;
    return c && c->n_render_stage_submission_event_ids ? c->render_stage_submission_event_ids[0]
                                                       : 0;
}
