/*
 * `--format html`: one self-contained page per trace (html_page.c
 * draws it) showing each traced process as `cudatrace report` knows it, and
 * plots over its time. The report part is the report JSON itself
 * (ct_job_json_fields), embedded in the page, so the page and `report
 * --json` never disagree. The plots' series are gathered while the trace
 * streams through the decoder, each a timeline (model/timeline.c) of
 * SERIES_BUCKETS spans, so memory stays the same whatever the trace's
 * length: live device bytes (and the pools' and graphs' reserve, as the
 * runtime said when asked) and launches per second keep the min, max and
 * latest of the counters' samples per span (1 ms to begin with); time in
 * the synchronising calls is summed per span (100 ms to begin with), a call
 * that spans several split across them, so the spans add up to the report's
 * sync total. Each step's start and time, where the report finds steps
 * (model/steps.c), go in unbucketed: the report holds them all already (of
 * its first 2^20 NVTX ranges), and a step is what a reader counts. Times
 * count from a process's first event in the file; a slice that began
 * before it (the decoder hands over slices at their end) counts in the
 * first span. The trace is read twice, for the report
 * (model/report.c reads a file whole) and for the series, which shows
 * progress. The page's frame, and how its JSON is embedded, are
 * html_frame.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "cudatrace/trace_names.h"
#include "viewer-export/model/steps.h"
#include "viewer-export/model/timeline.h"
#include "viewer-export/export/formats.h"
#include "viewer-export/export/html_frame.h"
#include "viewer-export/export/html_page.h"
#include "viewer-export/output/job_output.h"
#include "common/string_table.h"
#include "common/u64_map.h"

#define SERIES_BUCKETS 2048
#define COUNTER_WIDTH_NS 1000000ull /* 1 ms: finer than the samples of a short run */
#define SYNC_WIDTH_NS 100000000ull  /* 100 ms */

enum { MEMORY, VMM_MEMORY, POOL_RESERVED, GRAPH_RESERVED, LAUNCH_RATE, SYNC, SERIES_COUNT };

static const char *const counter_tracks[] = {
    [MEMORY] = ct_track_device_memory,        [VMM_MEMORY] = ct_track_vmm_memory,
    [POOL_RESERVED] = ct_track_pool_reserved, [GRAPH_RESERVED] = ct_track_graph_reserved,
    [LAUNCH_RATE] = ct_track_launch_rate,
};

struct process {
    int32_t pid;
    int seen;             /* an event has set origin */
    uint64_t origin, end; /* the first and last event's time */
    struct ct_timeline series[SERIES_COUNT];
};

struct plots {
    struct ct_progress *progress;
    struct ct_u64_map by_pid;     /* pid + 1 -> index + 1 */
    struct ct_u64_map owner;      /* track uuid -> index + 1 */
    struct ct_u64_map counter_of; /* counter track uuid -> series + 1 */
    struct ct_u64_map sync_names; /* string id of a sync function's name -> 1 */
    struct process *processes;
    size_t count;
};

static int is_sync_family(enum ct_family family)
{
    return family == CT_FAMILY_SYNC_DEVICE || family == CT_FAMILY_SYNC_STREAM ||
           family == CT_FAMILY_SYNC_EVENT;
}

static void index_sync_functions(struct plots *pl)
{
#define SYNC_NAME(fn, family, stream)                                                              \
    if (is_sync_family(family))                                                                    \
        ct_u64_map_put(&pl->sync_names, ct_strings_intern_cstr(#fn), 1);
    CT_FOR_EACH_FUNCTION(SYNC_NAME)
#undef SYNC_NAME
}

/* The process's index + 1, adding it when new. */
static size_t process_index(struct plots *pl, int32_t pid)
{
    uint64_t key = (uint64_t)(uint32_t)pid + 1;
    const uint64_t *index = ct_u64_map_find(&pl->by_pid, key);
    if (index)
        return *index;
    pl->processes = ct_array_grow(pl->processes, pl->count, sizeof *pl->processes);
    struct process *p = &pl->processes[pl->count++];
    p->pid = pid;
    for (int s = 0; s < SERIES_COUNT; s++)
        p->series[s] =
            (struct ct_timeline){.capacity = SERIES_BUCKETS,
                                 .first_span_ns = s == SYNC ? SYNC_WIDTH_NS : COUNTER_WIDTH_NS};
    ct_u64_map_put(&pl->by_pid, key, pl->count);
    return pl->count;
}

static void on_track(void *ctx, const struct ct_track_info *t)
{
    struct plots *pl = ctx;
    const uint64_t *parent = ct_u64_map_find(&pl->owner, t->parent);
    size_t index = t->is_process || t->tid ? process_index(pl, t->pid) : parent ? *parent : 0;
    if (!index)
        return;
    ct_u64_map_put(&pl->owner, t->uuid, index);
    if (!t->is_counter || !t->name)
        return;
    for (size_t s = 0; s < sizeof counter_tracks / sizeof *counter_tracks; s++)
        if (strcmp(t->name, counter_tracks[s]) == 0)
            ct_u64_map_put(&pl->counter_of, t->uuid, s + 1);
}

/* The process that owns `track`, its time span stretched to `ts`. */
static struct process *owner_at(struct plots *pl, uint64_t track, uint64_t ts)
{
    const uint64_t *index = ct_u64_map_find(&pl->owner, track);
    if (!index)
        return NULL;
    struct process *p = &pl->processes[*index - 1];
    if (!p->seen)
        p->origin = p->end = ts;
    p->seen = 1;
    if (ts > p->end)
        p->end = ts;
    return p;
}

static void on_slice(void *ctx, const struct ct_event *e)
{
    struct plots *pl = ctx;
    struct process *p = owner_at(pl, e->track, e->ts);
    if (!p)
        return;
    owner_at(pl, e->track, e->end);
    /* As in the report: a call cut short by the process's end never returned. */
    if (ct_u64_map_find(&pl->sync_names, ct_strings_intern_cstr(e->name)) &&
        !ct_event_arg(e, ct_key_in_flight)) {
        ct_timeline_start_at(&p->series[SYNC], p->origin);
        ct_timeline_add_interval(&p->series[SYNC], e->ts, e->end);
    }
}

static void on_instant(void *ctx, const struct ct_event *e)
{
    owner_at(ctx, e->track, e->ts);
}

static void on_counter(void *ctx, const struct ct_event *e)
{
    struct plots *pl = ctx;
    struct process *p = owner_at(pl, e->track, e->ts);
    const uint64_t *series = ct_u64_map_find(&pl->counter_of, e->track);
    if (p && series) {
        ct_timeline_start_at(&p->series[*series - 1], p->origin);
        ct_timeline_note(&p->series[*series - 1], e->ts, e->counter);
    }
}

static void on_progress(void *ctx, uint64_t bytes_read)
{
    struct plots *pl = ctx;
    ct_progress_update(pl->progress, bytes_read);
}

/* {"width_ns", "points": [[t, min, max, last] or, for sync, [t, ns], ...]}, t from the
 * origin. */
static void json_series(struct ct_json *j, const char *key, const struct ct_timeline *s, int sync)
{
    ct_json_begin_object(j, key);
    ct_json_uint(j, "width_ns", s->span_ns ? s->span_ns : s->first_span_ns);
    ct_json_begin_array(j, "points");
    for (size_t i = 0; i < s->used; i++) {
        const struct ct_span *b = &s->spans[i];
        if (!(sync ? b->intervals : b->values))
            continue;
        ct_json_begin_array(j, NULL);
        ct_json_uint(j, NULL, i * s->span_ns);
        if (sync) {
            ct_json_uint(j, NULL, (uint64_t)b->sum);
        } else {
            ct_json_double(j, NULL, b->min);
            ct_json_double(j, NULL, b->max);
            ct_json_double(j, NULL, b->last);
        }
        ct_json_end_array(j);
    }
    ct_json_end_array(j);
    ct_json_end_object(j);
}

/* "steps": [[t, ns], ...], each step's start from the origin and its time,
 * when the report finds steps in the process. The report's steps section
 * has the rest (median, slow steps, step 1): the page reads them there. */
static void json_steps(struct ct_json *j, const struct ct_report *report, const struct process *p)
{
    const struct ct_process_report *found = NULL;
    for (size_t i = 0; i < report->process_count && !found; i++)
        if (report->processes[i].pid == p->pid)
            found = &report->processes[i];
    const struct ct_steps *s = found ? ct_steps_of(found) : NULL;
    if (!s)
        return;
    ct_json_begin_array(j, "steps");
    for (size_t i = 0; i < s->count; i++) {
        ct_json_begin_array(j, NULL);
        /* A step that began before the process's first event seen counts
         * from it, as a slice's span does. */
        ct_json_uint(j, NULL, s->all[i].start > p->origin ? s->all[i].start - p->origin : 0);
        ct_json_uint(j, NULL, s->all[i].ns);
        ct_json_end_array(j);
    }
    ct_json_end_array(j);
}

static void json_plots(struct ct_json *j, const struct plots *pl, const struct ct_report *report,
                       const char *trace)
{
    ct_json_string(j, "file", trace);
    ct_json_begin_array(j, "processes");
    for (size_t i = 0; i < pl->count; i++) {
        const struct process *p = &pl->processes[i];
        ct_json_begin_object(j, NULL);
        ct_json_int(j, "pid", p->pid);
        ct_json_uint(j, "span_ns", p->end - p->origin);
        json_series(j, "memory", &p->series[MEMORY], 0);
        json_series(j, "vmm_memory", &p->series[VMM_MEMORY], 0);
        json_series(j, "pool_reserved", &p->series[POOL_RESERVED], 0);
        json_series(j, "graph_reserved", &p->series[GRAPH_RESERVED], 0);
        json_series(j, "launch_rate", &p->series[LAUNCH_RATE], 0);
        json_series(j, "sync", &p->series[SYNC], 1);
        json_steps(j, report, p);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

/* JSON gathered in memory, to be embedded in the page. */
struct json_block {
    char *text;
    size_t size;
    struct ct_json json;
};

static struct ct_json *json_block_open(struct json_block *b)
{
    b->json = (struct ct_json){.out = open_memstream(&b->text, &b->size)};
    if (!b->json.out)
        abort();
    ct_json_begin_object(&b->json, NULL);
    return &b->json;
}

static void json_block_embed(struct json_block *b, struct ct_export_output *out, const char *id)
{
    ct_json_end_object(&b->json);
    if (fclose(b->json.out))
        abort();
    ct_html_frame_embed_json(out, id, b->text, b->size);
    free(b->text);
}

static const char main_element[] = "<main id=\"report\"></main>\n";

static void write_page(struct ct_export_job *job, const struct ct_report *report,
                       const struct plots *pl)
{
    struct ct_job report_job = {0};
    ct_job_of_report(&report_job, report, job->trace);
    struct json_block report_json, plot_json;
    ct_job_json_fields(json_block_open(&report_json), &report_job);
    json_plots(json_block_open(&plot_json), pl, report, job->trace);
    ct_html_frame_head(job->out, "cudatrace report", ct_html_page_style, ct_html_page_header);
    ct_export_output_write(job->out, main_element, sizeof main_element - 1);
    json_block_embed(&report_json, job->out, "report-data");
    json_block_embed(&plot_json, job->out, "plot-data");
    ct_html_frame_script(job->out, ct_html_page_script);
    ct_job_free(&report_job);
}

static void free_plots(struct plots *pl)
{
    for (size_t i = 0; i < pl->count; i++)
        for (int s = 0; s < SERIES_COUNT; s++)
            ct_timeline_free(&pl->processes[i].series[s]);
    free(pl->processes);
    ct_u64_map_free(&pl->by_pid);
    ct_u64_map_free(&pl->owner);
    ct_u64_map_free(&pl->counter_of);
    ct_u64_map_free(&pl->sync_names);
}

int ct_export_html(struct ct_export_job *job)
{
    struct ct_report report = {0};
    struct plots pl = {.progress = &job->progress};
    index_sync_functions(&pl);
    struct ct_trace_visitor visitor = {.ctx = &pl,
                                       .track = on_track,
                                       .slice = on_slice,
                                       .instant = on_instant,
                                       .counter = on_counter,
                                       .progress = on_progress};
    int r = ct_report_add_trace(&report, job->trace, job->error, sizeof job->error);
    if (r == 0)
        r = ct_trace_decode(job->trace, &visitor, &job->result, job->error, sizeof job->error);
    if (r == 0)
        write_page(job, &report, &pl);
    free_plots(&pl);
    ct_report_free(&report);
    return r;
}
