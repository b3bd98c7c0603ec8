/*
 * `--format chrome-json`: the trace in Chrome's Trace Event Format (a JSON
 * object with "traceEvents"), which chrome://tracing, Perfetto and Holistic
 * Trace Analysis read. The trace is read twice: first into the report
 * (model/report.c), of which the export keeps each process's steps and the
 * rank, since steps are found over a whole run and the rank goes before the
 * events; then each event is written as the decoder yields it, so memory
 * holds what `cudatrace report` holds, then the tracks and the steps, not
 * the events. The first pass takes what `cudatrace report` of the trace
 * takes, some 40% of the stream's own time. Process and thread names
 * become "M" events; each call slice one "X" event (ts and dur in
 * microseconds, ns as the fraction) in Kineto's "cuda_runtime" category, its annotations in
 * "args" under their own names but for grid and block, which Kineto writes
 * as [x, y, z], and stream (see arg_name). GPU work (a slice with a
 * gpu_kind) is in Kineto's "kernel", "gpu_memcpy" or "gpu_memset" category,
 * on a row of its own: a slice on a track that is no thread's gets a made-up
 * tid and a thread_name, the track's. A flow becomes Kineto's "ac2g" pair,
 * "s" at the host call and "f" at the GPU work, keyed by CUPTI's
 * correlation id. Instants are "i" events,
 * thread-scoped on a thread's track and process-scoped ("s": "p")
 * elsewhere, in the category of the track they are on; counter values "C"
 * events named after their track, {"value": v}. A slice that never ended
 * (the writer died mid-call) runs to the latest time in the trace with
 * args.unclosed = 1, since an "X" event needs a duration and readers differ
 * on a "B" without an "E". "otherData" says how the trace ended.
 *
 * The host sampler's Python stacks (callstack samples) are "X" events too,
 * not the format's own "stackFrames" dictionary and "samples" array with
 * "sf" references: Perfetto's JSON importer skips those two keys and has
 * no sample phase, so there the stacks would vanish, while "X" events show
 * in it and in chrome://tracing alike. Each sample is one "X" per frame,
 * outermost first and so nested, named "FUNCTION (FILE:LINE)", in category
 * "python", the innermost with args file and line; it lasts from the
 * sample to the thread's next (the last: one sampling interval, by the
 * closing cudatrace.host instant's sample_hz, or in a trace cut before it
 * the gap before it), each inner frame 1 ns less than the one around it. They go on a row of their
 * own per sampled thread, "thread TID NAME Python", as spans between samples cross the thread's
 * call slices, and slices must nest. Memory holds each sampled thread's
 * last stack, not the samples.
 *
 * Steps and the rank are written as PyTorch's profiler writes them, so
 * that HTA takes a job's exports per step and per rank. Each step the
 * report finds (model/steps.c) is an "X" event named "ProfilerStep#N", N
 * counted from 0 as the profiler counts them (args.step is the report's
 * number, N + 1), in category "user_annotation", on the thread that made
 * the steps (not known: the main thread, or where the trace has no track
 * of it, the thread that made the most CUDA calls). Steps that are
 * PyTorch's own ProfilerStep ranges are in the export already. The head
 * holds "distributedInfo": {"rank", "world_size"} from the first process
 * a launcher ranked (cudatrace.identity); see write_distributed_info.
 */
#include <stdio.h>
#include <string.h>

#include "common/array.h"
#include "cudatrace/trace_names.h"
#include "viewer-export/export/formats.h"
#include "viewer-export/model/report.h"
#include "viewer-export/model/steps.h"
#include "viewer-export/output/json_writer.h"
#include "common/u64_map.h"

struct track {
    uint64_t parent;
    int32_t pid; /* its own, or its parent's for tracks below a process */
    int64_t tid; /* thread tracks only, else 0 */
    const char *name;
};

/* Rows for slices on tracks that are no thread's start here. */
#define FIRST_MADE_UP_TID 1000000000

/* A sampled thread's Python row and the stack it last showed (depth 0:
 * none yet), which lasts till the thread's next sample. */
struct python_row {
    int32_t pid;
    int64_t tid;         /* the row's, made up */
    uint64_t ts, gap;    /* the stack's time, and the time since the one before */
    const char **frames; /* outermost first */
    size_t depth, room;
    const char *file;
    uint64_t line;
};

/* The name PyTorch's profiler gives a step, "ProfilerStep#N": what HTA
 * finds iterations by. */
#define PROFILER_STEP "ProfilerStep"

/* A process's steps, from the first pass, and the thread that made the
 * most CUDA calls (0: none), where they go when neither the thread that
 * made them nor the main thread is known. */
struct process_steps {
    int32_t pid;
    int64_t launching_tid;
    struct ct_steps steps;
};

struct chrome {
    struct ct_json json;
    struct process_steps *steps;
    size_t step_processes;
    int64_t rank, world_size; /* the job's, from the first pass; -1: none said */
    int64_t made_up_tids;
    struct ct_progress *progress;
    struct ct_u64_map index; /* track uuid -> position in tracks + 1 */
    struct track *tracks;
    size_t count;
    uint64_t last_ts;               /* the latest time seen, where slices left open end */
    struct ct_u64_map python_index; /* sampled pid << 32 | tid -> position in python_rows + 1 */
    struct python_row *python_rows;
    size_t python_count;
    uint64_t sample_hz; /* the host sampler's rate, once its closing instant is seen */
};

static struct track *find_track(const struct chrome *c, uint64_t uuid)
{
    const uint64_t *at = ct_u64_map_find(&c->index, uuid);
    return at ? &c->tracks[*at - 1] : NULL;
}

static struct track *add_track(struct chrome *c, uint64_t uuid)
{
    c->tracks = ct_array_grow(c->tracks, c->count++, sizeof *c->tracks);
    ct_u64_map_put(&c->index, uuid, c->count);
    return &c->tracks[c->count - 1];
}

static void write_name_event(struct ct_json *j, const char *what, const struct track *t)
{
    ct_json_begin_object(j, NULL);
    ct_json_string(j, "ph", "M");
    ct_json_string(j, "name", what);
    ct_json_int(j, "pid", t->pid);
    ct_json_int(j, "tid", t->tid);
    ct_json_begin_object(j, "args");
    ct_json_string(j, "name", t->name);
    ct_json_end_object(j);
    ct_json_end_object(j);
}

static void on_track(void *ctx, const struct ct_track_info *info)
{
    struct chrome *c = ctx;
    struct track *t = find_track(c, info->uuid);
    int renamed = !t || (info->name && (!t->name || strcmp(t->name, info->name) != 0));
    if (!t)
        t = add_track(c, info->uuid);
    const struct track *parent = find_track(c, info->parent);
    *t = (struct track){
        .parent = info->parent, .pid = info->pid, .tid = info->tid, .name = info->name};
    if (!info->pid && parent)
        t->pid = parent->pid; /* a counter or other track of a process */
    if (renamed && info->name && (info->is_process || info->tid))
        write_name_event(&c->json, info->is_process ? "process_name" : "thread_name", t);
}

static void note_time(struct chrome *c, uint64_t ts)
{
    if (ts > c->last_ts)
        c->last_ts = ts;
}

/* Trace Event Format times are microseconds; the fraction keeps the ns. */
static void write_time(struct ct_json *j, const char *key, uint64_t ns)
{
    ct_json_double(j, key, (double)ns / 1e3);
}

/* The event's type, name, owner and time: what every event has. */
static void begin_event(struct chrome *c, const char *ph, const struct ct_event *e, int thread)
{
    static const struct track unknown;
    const struct track *t = find_track(c, e->track);
    t = t ? t : &unknown;
    ct_json_begin_object(&c->json, NULL);
    ct_json_string(&c->json, "ph", ph);
    ct_json_string(&c->json, "name", e->name);
    ct_json_int(&c->json, "pid", t->pid);
    if (thread)
        ct_json_int(&c->json, "tid", t->tid);
    write_time(&c->json, "ts", e->ts);
}

/* Kineto writes grid and block as [x, y, z]; the trace has "XxYxZ". */
static int write_dim3(struct ct_json *j, const struct ct_annotation *a)
{
    unsigned dim[3];
    int end = -1;
    if (sscanf(a->s, "%ux%ux%u%n", &dim[0], &dim[1], &dim[2], &end) != 3 || a->s[end] != '\0')
        return 0;
    ct_json_begin_array(j, a->name);
    for (int i = 0; i < 3; i++)
        ct_json_uint(j, NULL, dim[i]);
    ct_json_end_array(j);
    return 1;
}

static int is_dim3(const char *name)
{
    return strcmp(name, ct_key_grid) == 0 || strcmp(name, ct_key_block) == 0;
}

/* Kineto's "stream" is the GPU stream a kernel ran on, and Holistic Trace
 * Analysis takes any event that has one for a GPU kernel; a runtime call's
 * is the cudaStream_t it was given. */
static const char *arg_name(const char *name, int gpu)
{
    return !gpu && strcmp(name, ct_key_stream) == 0 ? "stream_handle" : name;
}

static void write_arg(struct ct_json *j, const struct ct_annotation *a, int gpu)
{
    const char *name = arg_name(a->name, gpu);
    switch (a->type) {
    case CT_VALUE_INT:
        ct_json_int(j, name, a->i);
        break;
    case CT_VALUE_DOUBLE:
        ct_json_double(j, name, a->d);
        break;
    case CT_VALUE_STRING:
        if (!is_dim3(name) || !write_dim3(j, a))
            ct_json_string(j, name, a->s);
        break;
    default: /* unsigned, pointers, and booleans as 0 or 1 */
        ct_json_uint(j, name, a->u);
        break;
    }
}

/* Writes "args" and closes the event. */
static void end_event(struct ct_json *j, const struct ct_event *e, int unclosed, int gpu)
{
    ct_json_begin_object(j, "args");
    for (int i = 0; i < e->nargs; i++)
        write_arg(j, &e->args[i], gpu);
    if (unclosed)
        ct_json_uint(j, "unclosed", 1);
    ct_json_end_object(j);
    ct_json_end_object(j);
}

/* Kineto's category for a slice: GPU work by its kind, else a runtime call. */
static const char *slice_category(const struct ct_event *e)
{
    static const char *const kinds[][2] = {{ct_value_gpu_kind_kernel, "kernel"},
                                           {ct_value_gpu_kind_memcpy, "gpu_memcpy"},
                                           {ct_value_gpu_kind_memset, "gpu_memset"}};
    const struct ct_annotation *kind = ct_event_arg(e, ct_key_gpu_kind);
    for (size_t i = 0; kind && kind->type == CT_VALUE_STRING && i < 3; i++)
        if (strcmp(kind->s, kinds[i][0]) == 0)
            return kinds[i][1];
    return kind ? "gpu_other" : "cuda_runtime";
}

/* The row of a slice on a track that is no thread's: made up once, named. */
static void give_row(struct chrome *c, uint64_t uuid)
{
    struct track *t = find_track(c, uuid);
    if (!t || t->tid)
        return;
    t->tid = FIRST_MADE_UP_TID + c->made_up_tids++;
    if (t->name)
        write_name_event(&c->json, "thread_name", t);
}

static void write_flow(struct chrome *c, const char *ph, uint64_t id, const struct ct_event *e)
{
    struct ct_event flow = *e;
    flow.name = "ac2g";
    begin_event(c, ph, &flow, 1);
    ct_json_string(&c->json, "cat", "ac2g");
    ct_json_uint(&c->json, "id", (uint32_t)id);
    if (*ph == 'f')
        ct_json_string(&c->json, "bp", "e");
    ct_json_end_object(&c->json);
}

static void write_slice(struct chrome *c, const struct ct_event *e, uint64_t end, int unclosed)
{
    give_row(c, e->track);
    const char *category = slice_category(e);
    begin_event(c, "X", e, 1);
    write_time(&c->json, "dur", end - e->ts);
    ct_json_string(&c->json, "cat", category);
    end_event(&c->json, e, unclosed, strcmp(category, "cuda_runtime") != 0);
    if (e->flow_out)
        write_flow(c, "s", e->flow_out, e);
    if (e->flow_in)
        write_flow(c, "f", e->flow_in, e);
}

static void on_slice(void *ctx, const struct ct_event *e)
{
    struct chrome *c = ctx;
    note_time(c, e->end);
    write_slice(c, e, e->end, 0);
}

static void on_unclosed(void *ctx, const struct ct_event *e)
{
    struct chrome *c = ctx;
    write_slice(c, e, c->last_ts > e->ts ? c->last_ts : e->ts, 1);
}

static void on_instant(void *ctx, const struct ct_event *e)
{
    struct chrome *c = ctx;
    note_time(c, e->ts);
    if (strcmp(e->name, ct_event_host) == 0)
        c->sample_hz = (uint64_t)ct_event_int(e, ct_key_sample_hz, 0);
    const struct track *t = find_track(c, e->track);
    int thread = t && t->tid;
    begin_event(c, "i", e, thread);
    ct_json_string(&c->json, "s", thread ? "t" : "p");
    /* Named tracks below a process (the CUDA libraries) are categories. */
    ct_json_string(&c->json, "cat", t && t->parent && t->name ? t->name : "cudatrace");
    end_event(&c->json, e, 0, 0);
}

static void on_counter(void *ctx, const struct ct_event *e)
{
    struct chrome *c = ctx;
    note_time(c, e->ts);
    const struct track *t = find_track(c, e->track);
    struct ct_event named = *e;
    named.name = t && t->name ? t->name : "counter";
    begin_event(c, "C", &named, 0);
    ct_json_begin_object(&c->json, "args");
    ct_json_double(&c->json, "value", e->counter);
    ct_json_end_object(&c->json);
    ct_json_end_object(&c->json);
}

/* The thread's track; NULL when the trace has none. */
static const struct track *thread_track(const struct chrome *c, int32_t pid, int64_t tid)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->tracks[i].pid == pid && c->tracks[i].tid == tid)
            return &c->tracks[i];
    return NULL;
}

/* The thread's name as its track gives it, or NULL. */
static const char *thread_name(const struct chrome *c, int32_t pid, int64_t tid)
{
    const struct track *t = thread_track(c, pid, tid);
    return t ? t->name : NULL;
}

/* The Python row of the sample's thread, made up and named when new; NULL
 * for the one pid and tid a map key cannot hold (no real thread's). */
static struct python_row *python_row_of(struct chrome *c, const struct ct_sample *s)
{
    uint64_t key = ((uint64_t)(uint32_t)s->pid << 32 | (uint32_t)s->tid) + 1;
    if (key == UINT64_MAX)
        return NULL;
    const uint64_t *at = ct_u64_map_find(&c->python_index, key);
    if (at)
        return &c->python_rows[*at - 1];
    c->python_rows = ct_array_grow(c->python_rows, c->python_count++, sizeof *c->python_rows);
    ct_u64_map_put(&c->python_index, key, c->python_count);
    struct python_row *row = &c->python_rows[c->python_count - 1];
    row->pid = s->pid;
    row->tid = FIRST_MADE_UP_TID + c->made_up_tids++;
    const char *name = thread_name(c, s->pid, s->tid);
    char text[512];
    snprintf(text, sizeof text, "thread %d%s%s Python", (int)s->tid, name ? " " : "",
             name ? name : "");
    write_name_event(&c->json, "thread_name",
                     &(struct track){.pid = row->pid, .tid = row->tid, .name = text});
    return row;
}

/* An "X" event of the export's own making (no slice of the trace), up to
 * its args. */
static void begin_span(struct chrome *c, const char *name, const char *category, int32_t pid,
                       int64_t tid, uint64_t ts, uint64_t dur)
{
    ct_json_begin_object(&c->json, NULL);
    ct_json_string(&c->json, "ph", "X");
    ct_json_string(&c->json, "name", name);
    ct_json_int(&c->json, "pid", pid);
    ct_json_int(&c->json, "tid", tid);
    write_time(&c->json, "ts", ts);
    write_time(&c->json, "dur", dur);
    ct_json_string(&c->json, "cat", category);
    ct_json_begin_object(&c->json, "args");
}

/* The row's stack as nested "X" events, outermost first, till `end`; each
 * ends 1 ns before the one around it, so that readers that order equal
 * spans each their own way all nest the frames as the stack has them. */
static void write_python_stack(struct chrome *c, const struct python_row *row, uint64_t end)
{
    uint64_t span = end > row->ts ? end - row->ts : 1;
    for (size_t i = 0; i < row->depth; i++) {
        begin_span(c, row->frames[i], "python", row->pid, row->tid, row->ts,
                   span > i ? span - i : 1);
        if (i + 1 == row->depth) {
            ct_json_string(&c->json, "file", row->file);
            ct_json_uint(&c->json, "line", row->line);
        }
        ct_json_end_object(&c->json);
        ct_json_end_object(&c->json);
    }
}

/* A sample ends its thread's stack before it and keeps its own. */
static void on_sample(void *ctx, const struct ct_sample *s)
{
    struct chrome *c = ctx;
    struct python_row *row = python_row_of(c, s);
    if (!row)
        return;
    if (row->depth) {
        write_python_stack(c, row, s->ts);
        row->gap = s->ts > row->ts ? s->ts - row->ts : 0;
    }
    row->frames = ct_array_reserve(row->frames, &row->room, s->depth, sizeof *row->frames);
    memcpy(row->frames, s->frames, s->depth * sizeof *s->frames);
    row->depth = s->depth;
    row->ts = s->ts;
    row->file = s->path;
    row->line = s->rel_pc;
}

/* Each thread's last stack lasts one sampling interval. */
static void finish_python_rows(struct chrome *c)
{
    for (size_t i = 0; i < c->python_count; i++) {
        struct python_row *row = &c->python_rows[i];
        uint64_t interval = c->sample_hz ? 1000000000ull / c->sample_hz : row->gap;
        write_python_stack(c, row, row->ts + interval);
    }
}

static void free_python_rows(struct chrome *c)
{
    for (size_t i = 0; i < c->python_count; i++)
        free(c->python_rows[i].frames);
    free(c->python_rows);
    ct_u64_map_free(&c->python_index);
}

/* The thread a process's steps go on: the one that made them; else the
 * main thread, where the trace has it; else the one that made the most
 * CUDA calls. */
static int64_t steps_thread(const struct chrome *c, const struct process_steps *ps)
{
    if (ps->steps.tid)
        return ps->steps.tid;
    if (thread_track(c, ps->pid, ps->pid) || !ps->launching_tid)
        return ps->pid;
    return ps->launching_tid;
}

/* Each step as PyTorch's profiler writes one: "ProfilerStep#N", N counted
 * from 0 as the profiler counts its step() calls, in the category of a
 * record_function (user_annotation), with the report's step number (N + 1)
 * in args. */
static void write_steps(struct chrome *c)
{
    for (size_t i = 0; i < c->step_processes; i++) {
        const struct process_steps *ps = &c->steps[i];
        int64_t tid = steps_thread(c, ps);
        for (size_t n = 0; n < ps->steps.count; n++) {
            char name[48];
            snprintf(name, sizeof name, PROFILER_STEP "#%zu", n);
            begin_span(c, name, "user_annotation", ps->pid, tid, ps->steps.all[n].start,
                       ps->steps.all[n].ns);
            ct_json_uint(&c->json, "step", n + 1);
            ct_json_end_object(&c->json);
            ct_json_end_object(&c->json);
        }
    }
}

/* Keeps the process's steps, but PyTorch's own ProfilerStep ranges, which
 * are in the export with their own numbers. */
static void keep_steps(struct chrome *c, struct ct_process_report *p)
{
    struct ct_steps steps;
    if (!ct_steps_take(p, &steps))
        return;
    if (strcmp(steps.source, "nvtx:" PROFILER_STEP) == 0) { /* as the report's steps.source */
        ct_steps_free(&steps);
        return;
    }
    const struct ct_host_thread *launching = ct_host_launching_thread(&p->host);
    c->steps = ct_array_grow(c->steps, c->step_processes++, sizeof *c->steps);
    c->steps[c->step_processes - 1] =
        (struct process_steps){p->pid, launching ? launching->tid : 0, steps};
}

/* The first pass, since steps are found over a process's whole run and the
 * rank goes before the events: of the report, the export keeps the steps
 * and the first rank a launcher gave, with its world size. A failure is
 * left to the second pass, which meets the same decoder error, or exports
 * a trace of no traced process as it is. */
static void read_report(struct chrome *c, const char *trace)
{
    struct ct_report report = {0};
    char error[512];
    ct_report_add_trace(&report, trace, error, sizeof error);
    for (size_t i = 0; i < report.process_count; i++) {
        struct ct_process_report *p = &report.processes[i];
        if (c->rank < 0 && p->identity.rank >= 0) {
            c->rank = p->identity.rank;
            c->world_size = p->identity.world_size;
        }
        keep_steps(c, p);
    }
    ct_report_free(&report);
}

static void free_steps(struct chrome *c)
{
    for (size_t i = 0; i < c->step_processes; i++)
        ct_steps_free(&c->steps[i].steps);
    free(c->steps);
}

/* "distributedInfo" as PyTorch's profiler writes it (Python's json.dumps,
 * a space after each colon): HTA takes a file's rank from the first line
 * that matches "rank":\s+(\d+), so the space is needed, and the line ends
 * after it so that HTA reads no further. A trace that no launcher ranked
 * is rank 0, as HTA takes a file without one (after a warning); the world
 * size only where the launcher said it, and no backend: the trace does not
 * say which one the process group used. */
static void write_distributed_info(struct chrome *c)
{
    char text[96];
    long long rank = c->rank < 0 ? 0 : (long long)c->rank;
    int n = c->world_size > 0
                ? snprintf(text, sizeof text, "{\"rank\": %lld, \"world_size\": %lld}\n", rank,
                           (long long)c->world_size)
                : snprintf(text, sizeof text, "{\"rank\": %lld}\n", rank);
    ct_json_raw(&c->json, "distributedInfo", text, (size_t)n);
}

static void on_progress(void *ctx, uint64_t bytes_read)
{
    struct chrome *c = ctx;
    ct_progress_update(c->progress, bytes_read);
}

static void write_trailer(struct ct_json *j, const struct ct_decode_result *r)
{
    ct_json_end_array(j);
    ct_json_begin_object(j, "otherData");
    ct_json_string(j, "exporter", "cudatrace");
    ct_json_uint(j, "packets", r->packets);
    ct_json_string(j, "tail", r->truncated ? "cut" : "complete");
    ct_json_uint(j, "unclosed_slices", r->unclosed);
    ct_json_end_object(j);
    ct_json_end_object(j);
}

int ct_export_chrome_json(struct ct_export_job *job)
{
    struct chrome c = {.json = {.out = ct_export_output_stream(job->out)},
                       .progress = &job->progress,
                       .rank = -1,
                       .world_size = -1};
    read_report(&c, job->trace);
    ct_json_begin_object(&c.json, NULL);
    ct_json_uint(&c.json, "schemaVersion", 1);
    ct_json_string(&c.json, "displayTimeUnit", "ms");
    write_distributed_info(&c);
    ct_json_begin_array(&c.json, "traceEvents");
    struct ct_trace_visitor visitor = {.ctx = &c,
                                       .track = on_track,
                                       .slice = on_slice,
                                       .instant = on_instant,
                                       .counter = on_counter,
                                       .unclosed = on_unclosed,
                                       .sample = on_sample,
                                       .progress = on_progress};
    int r = ct_trace_decode(job->trace, &visitor, &job->result, job->error, sizeof job->error);
    if (r == 0) {
        finish_python_rows(&c);
        write_steps(&c);
        write_trailer(&c.json, &job->result);
    }
    free_steps(&c);
    free_python_rows(&c);
    ct_u64_map_free(&c.index);
    free(c.tracks);
    return r;
}
