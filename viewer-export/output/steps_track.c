/*
 * The training steps written back into the trace they came from (`cudatrace
 * report --annotate`): a "cudatrace steps" track in each process that has
 * steps, one slice a step, "step N", with what it was made of as arguments
 * (the GPU's busy time, the launching thread's time in synchronising calls
 * and in CUDA calls, and whether it was slow), so that the Perfetto UI
 * shows the steps above the threads and a click on one gives its figures.
 */
#include "viewer-export/output/steps_track.h"

#include <stdio.h>

#include "cudatrace/trace_names.h"
#include "viewer-export/model/steps.h"

static uint64_t track_of(const struct ct_process_report *p)
{
    return (p->uuid ^ 0x7374657073ull) | 1; /* "steps" */
}

static CtPb__DebugAnnotation number(const char *name, uint64_t value)
{
    CtPb__DebugAnnotation d = CT_PB__DEBUG_ANNOTATION__INIT;
    d.name = (char *)name;
    d.has_uint_value = 1;
    d.uint_value = value;
    return d;
}

static int is_slow(const struct ct_steps *s, size_t step)
{
    for (size_t i = 0; i < s->slow_count; i++)
        if (s->slow[i].step == step)
            return 1;
    return 0;
}

static void add_step(struct ct_packets *out, uint64_t track, const struct ct_steps *s, size_t n)
{
    const struct ct_step *step = &s->all[n - 1];
    CtPb__DebugAnnotation args[] = {
        number(ct_key_step, n),
        number(ct_key_gpu_busy_ns, step->gpu_busy_ns),
        number(ct_key_sync_ns, step->sync_ns),
        number(ct_key_in_cuda_ns, step->in_cuda_ns),
        number(ct_key_slow, (uint64_t)is_slow(s, n)),
    };
    CtPb__DebugAnnotation *list[sizeof args / sizeof args[0]];
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++)
        list[i] = &args[i];
    char name[32];
    snprintf(name, sizeof name, ct_event_step, (unsigned)n);
    CtPb__TrackEvent begin = CT_PB__TRACK_EVENT__INIT;
    begin.has_type = begin.has_track_uuid = 1;
    begin.type = CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
    begin.track_uuid = track;
    begin.name = name;
    begin.n_debug_annotations = sizeof args / sizeof args[0];
    begin.debug_annotations = list;
    ct_packets_event(out, step->start, &begin);
    CtPb__TrackEvent end = CT_PB__TRACK_EVENT__INIT;
    end.has_type = end.has_track_uuid = 1;
    end.type = CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    end.track_uuid = track;
    ct_packets_event(out, step->start + step->ns, &end);
}

void ct_steps_track(struct ct_packets *out, const struct ct_report *report)
{
    for (size_t i = 0; i < report->process_count; i++) {
        const struct ct_process_report *p = &report->processes[i];
        const struct ct_steps *s = ct_steps_of(p);
        if (!p->uuid || !s)
            continue;
        ct_packets_track(out, track_of(p), p->uuid, ct_track_steps);
        for (size_t n = 1; n <= s->count; n++)
            add_step(out, track_of(p), s, n);
    }
}
