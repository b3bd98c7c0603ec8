/*
 * The findings written back into the trace they came from (`cudatrace
 * report --annotate`), as instants on a "cudatrace findings" track in each
 * process, so they show in Perfetto beside the events they are about: each
 * with its id, severity, message, site and numbers; an oom at the failed
 * call, the others at the run's end.
 */
#include "viewer-export/output/findings_track.h"

#include <stdio.h>
#include <string.h>

#include "cudatrace/trace_names.h"

#define MAX_ANNOTATIONS 24

static uint64_t track_of(const struct ct_process_report *p)
{
    return (p->uuid ^ 0x66696e64696e6773ull) | 1; /* "findings" */
}

struct annotations {
    CtPb__DebugAnnotation items[MAX_ANNOTATIONS];
    CtPb__DebugAnnotation *list[MAX_ANNOTATIONS];
    char site_names[3][24], site_texts[3][700];
    size_t count;
};

static CtPb__DebugAnnotation *annotation(struct annotations *a, const char *name)
{
    CtPb__DebugAnnotation *d = &a->items[a->count];
    *d = (CtPb__DebugAnnotation)CT_PB__DEBUG_ANNOTATION__INIT;
    d->name = (char *)name;
    a->list[a->count++] = d;
    return d;
}

static void describe(struct annotations *a, const struct ct_finding *f)
{
    annotation(a, ct_key_id)->string_value = (char *)ct_finding_name(f->id);
    annotation(a, ct_key_severity)->string_value = (char *)ct_severity_name(f->severity);
    annotation(a, ct_key_message)->string_value = (char *)f->message;
    if (f->where)
        annotation(a, ct_key_site)->string_value = (char *)f->where;
    for (int i = 0; i < f->number_count && a->count < MAX_ANNOTATIONS - 3; i++) {
        CtPb__DebugAnnotation *d = annotation(a, f->numbers[i].key);
        d->has_double_value = 1;
        d->double_value = f->numbers[i].value;
    }
    for (int i = 0; i < f->site_count; i++) {
        snprintf(a->site_names[i], sizeof a->site_names[i], ct_key_top_site, i + 1);
        snprintf(a->site_texts[i], sizeof a->site_texts[i], "%s: %.0f%% (%llu calls)",
                 f->sites[i].site, 100 * f->sites[i].share, (unsigned long long)f->sites[i].calls);
        annotation(a, a->site_names[i])->string_value = a->site_texts[i];
    }
}

/* An oom sits at the failed call; the others sum up the run, at its end. */
static uint64_t time_of(const struct ct_finding *f, const struct ct_process_report *p)
{
    if (f->id == CT_FINDING_OOM && p->usage.oom_ts)
        return p->usage.oom_ts;
    return p->run.end_ns;
}

static void add_finding(struct ct_packets *out, const struct ct_finding *f,
                        const struct ct_process_report *p)
{
    static struct annotations a;
    memset(&a, 0, sizeof a);
    describe(&a, f);
    char name[128];
    snprintf(name, sizeof name, ct_event_finding, ct_severity_name(f->severity),
             ct_finding_name(f->id));
    CtPb__TrackEvent event = CT_PB__TRACK_EVENT__INIT;
    event.has_type = event.has_track_uuid = 1;
    event.type = CT_PB__TRACK_EVENT__TYPE__TYPE_INSTANT;
    event.track_uuid = track_of(p);
    event.name = name;
    event.n_debug_annotations = a.count;
    event.debug_annotations = a.list;
    ct_packets_event(out, time_of(f, p), &event);
}

static const struct ct_process_report *process_of(const struct ct_report *r, int32_t pid)
{
    for (size_t i = 0; i < r->process_count; i++)
        if (r->processes[i].pid == pid && r->processes[i].uuid)
            return &r->processes[i];
    return NULL;
}

void ct_findings_track(struct ct_packets *out, const struct ct_report *r,
                       const struct ct_findings *f)
{
    for (size_t i = 0; i < r->process_count; i++) {
        const struct ct_process_report *p = &r->processes[i];
        int any = 0;
        for (size_t k = 0; k < f->count; k++)
            any |= f->items[k].pid == p->pid;
        if (any && p->uuid)
            ct_packets_track(out, track_of(p), p->uuid, ct_track_findings);
    }
    for (size_t k = 0; k < f->count; k++) {
        const struct ct_process_report *p = process_of(r, f->items[k].pid);
        if (p)
            add_finding(out, &f->items[k], p);
    }
}
