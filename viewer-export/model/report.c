/*
 * Builds the report from a decoded trace: tracks map to processes through
 * their descriptors (so it works for any trace cudatrace wrote, on any
 * machine), and each event goes to the part of its process it is about:
 * call slices to the call figures (calls.c) and the usage figures (usage.c),
 * GPU slices to the GPU's timeline (gpu.c), library instants to the library
 * view (libraries.c), CUPTI's to cupti.c, NVML's samples to gpu_health.c,
 * the host sampler's to host.c,
 * and the session's own facts (the clock, who the process was in its job,
 * versions, devices, the threads' totals, the end) here. A
 * trace of another trace format never gets here: the decoder refuses it.
 */
#include "viewer-export/model/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "common/array.h"
#include "common/string_table.h"
#include "viewer-export/read/trace_decode.h"
#include "common/u64_map.h"

struct builder {
    struct ct_report *report;
    size_t first_process;             /* the first of this trace's processes */
    struct ct_u64_map process_by_pid; /* pid + 1 -> index + 1 */
    struct ct_u64_map owner;          /* any track uuid -> index + 1 */
    struct ct_u64_map thread_of;      /* thread track uuid -> tid */
    struct ct_u64_map device_counter; /* device memory's counter tracks -> source + 1 */
    struct ct_u64_map pool_counter;   /* the pools' reserve counter tracks -> 1 */
    struct ct_u64_map gpu_tracks;     /* track uuids of GPU work (gpu.h) */
    struct ct_u64_map written_back;   /* the findings and steps tracks (report --annotate) */
    struct ct_u64_map functions;      /* string id of a function name -> fn + 1 */
};

static void index_functions(struct builder *b)
{
    for (int fn = 0; fn < CT_FN_COUNT; fn++)
        ct_u64_map_put(&b->functions, ct_strings_intern_cstr(ct_function_name(fn)),
                       (uint64_t)fn + 1);
}

static struct ct_process_report *process_for_pid(struct builder *b, int32_t pid)
{
    uint64_t *index = ct_u64_map_find(&b->process_by_pid, (uint64_t)(uint32_t)pid + 1);
    if (index)
        return &b->report->processes[*index - 1];
    struct ct_report *r = b->report;
    r->processes = ct_array_grow(r->processes, r->process_count, sizeof *r->processes);
    struct ct_process_report *p = &r->processes[r->process_count++];
    p->pid = pid;
    p->cuda.runtime_version = p->cuda.driver_version = p->cuda.device_count = -1;
    p->identity = (struct ct_process_identity){"", "", "", "", "", -1, -1, -1};
    ct_u64_map_put(&b->process_by_pid, (uint64_t)(uint32_t)pid + 1, r->process_count);
    return p;
}

static struct ct_process_report *owner_of(struct builder *b, uint64_t track)
{
    uint64_t *index = ct_u64_map_find(&b->owner, track);
    return index ? &b->report->processes[*index - 1] : NULL;
}

static void on_track(void *ctx, const struct ct_track_info *t)
{
    struct builder *b = ctx;
    struct ct_process_report *p = NULL;
    if (t->is_process || t->tid) {
        p = process_for_pid(b, t->pid);
    } else {
        p = owner_of(b, t->parent);
    }
    if (!p)
        return;
    size_t index = (size_t)(p - b->report->processes) + 1;
    ct_u64_map_put(&b->owner, t->uuid, index);
    if (t->tid)
        ct_u64_map_put(&b->thread_of, t->uuid, (uint64_t)t->tid);
    if (t->is_process) {
        p->uuid = t->uuid;
        p->name = t->name;
        free(p->cmdline);
        p->cmdline = calloc(t->cmdline_len + 1, sizeof *p->cmdline);
        if (!p->cmdline)
            abort();
        for (size_t i = 0; i < t->cmdline_len; i++)
            p->cmdline[i] = ct_strings_get(ct_strings_intern_cstr(t->cmdline[i]));
        p->cmdline_len = t->cmdline_len;
    }
    if (ct_gpu_health_track(&p->gpu_health, t))
        return;
    if (t->name && !t->is_counter &&
        strncmp(t->name, CT_GPU_TRACK_PREFIX, strlen(CT_GPU_TRACK_PREFIX)) == 0)
        ct_u64_map_put(&b->gpu_tracks, t->uuid, 1);
    if (t->name &&
        (strcmp(t->name, ct_track_findings) == 0 || strcmp(t->name, ct_track_steps) == 0)) {
        b->report->annotated = 1; /* what the report wrote back, not what the program did */
        ct_u64_map_put(&b->written_back, t->uuid, 1);
    }
    if (t->is_counter && t->name && strcmp(t->name, ct_track_device_memory) == 0)
        ct_u64_map_put(&b->device_counter, t->uuid, CT_MEMORY_ALLOCATIONS + 1);
    if (t->is_counter && t->name && strcmp(t->name, ct_track_vmm_memory) == 0)
        ct_u64_map_put(&b->device_counter, t->uuid, CT_MEMORY_VMM + 1);
    if (t->is_counter && t->name && strcmp(t->name, ct_track_graph_reserved) == 0)
        ct_u64_map_put(&b->device_counter, t->uuid, CT_MEMORY_GRAPHS + 1);
    if (t->is_counter && t->name && strcmp(t->name, ct_track_pool_reserved) == 0)
        ct_u64_map_put(&b->pool_counter, t->uuid, 1);
}

static void note_time(struct ct_process_report *p, uint64_t ts)
{
    if (!p->run.first_ns || ts < p->run.first_ns)
        p->run.first_ns = ts;
    if (!p->run.ended && ts > p->run.end_ns)
        p->run.end_ns = ts;
}

/* A version the runtime reported: in the session's versions, or to the
 * program's own cudaRuntimeGetVersion (the only source when no call that
 * initialises CUDA was made, as frameworks do when the driver is missing). */
static void note_version(int64_t *version, int64_t reported)
{
    if (reported > 0)
        *version = reported;
}

static void add_inflight(struct builder *b, struct ct_process_report *p, int fn,
                         const struct ct_event *e)
{
    p->run.inflight =
        ct_array_grow(p->run.inflight, p->run.inflight_count, sizeof *p->run.inflight);
    const uint64_t *tid = ct_u64_map_find(&b->thread_of, e->track);
    p->run.inflight[p->run.inflight_count++] = (struct ct_inflight_call){
        fn, tid ? (int64_t)*tid : 0, e->ts, ct_event_text(e, ct_key_site)};
}

/* A part of what the gap carries that did not fit it (trace_gap.c). */
static void note_gap_cut(struct ct_trace_gap *gap, const struct ct_event *e)
{
    if (gap->cut_count == CT_GAP_CUT_PARTS)
        return;
    gap->cut[gap->cut_count++] = (struct ct_gap_cut){ct_event_text(e, ct_key_part),
                                                     (uint64_t)ct_event_int(e, ct_key_packets, 0),
                                                     (uint64_t)ct_event_int(e, ct_key_bytes, 0)};
}

/* The gap marker a bounded trace rewrites as it grows: the memory peaks
 * it carries were reached in the middle, perhaps, whose counter values are
 * gone. */
static void note_gap(struct ct_process_report *p, const struct ct_event *e)
{
    struct ct_trace_gap *gap = &p->run.gap;
    gap->from_ns = e->ts;
    gap->to_ns = e->end;
    gap->bytes = (uint64_t)ct_event_int(e, ct_key_dropped_bytes, 0);
    gap->chunks = (uint64_t)ct_event_int(e, ct_key_dropped_chunks, 0);
    ct_calls_device_peaks(&p->calls, (double)ct_event_int(e, ct_key_peak_device_bytes, 0),
                          (double)ct_event_int(e, ct_key_peak_allocated_bytes, 0),
                          (double)ct_event_int(e, ct_key_peak_vmm_bytes, 0));
}

static void on_slice(void *ctx, const struct ct_event *e)
{
    struct builder *b = ctx;
    struct ct_process_report *p = owner_of(b, e->track);
    if (!p)
        return;
    note_time(p, e->ts);
    note_time(p, e->end);
    if (ct_u64_map_find(&b->written_back, e->track))
        return;
    if (strcmp(e->name, ct_event_trace_gap) == 0) {
        note_gap(p, e);
        return;
    }
    if (ct_capture_slice(&p->run.capture, e))
        return;
    if (ct_gpu_health_slice(&p->gpu_health, e) || ct_host_slice(&p->host, e))
        return;
    if (ct_u64_map_find(&b->gpu_tracks, e->track)) {
        ct_unfinished_gpu(&p->unfinished, e);
        ct_gpu_slice(&p->usage.gpu, e);
        ct_graphs_gpu(&p->graphs, e);
        ct_gpu_health_gpu_copy(&p->gpu_health, e);
        return;
    }
    ct_gpu_host_flow(&p->usage.gpu, e->flow_out);
    const uint64_t *thread = ct_u64_map_find(&b->thread_of, e->track);
    int64_t tid = thread ? (int64_t)*thread : 0;
    uint64_t *fn = ct_u64_map_find(&b->functions, ct_strings_intern_cstr(e->name));
    if (!fn) {
        if (!ct_usage_nvtx_slice(&p->usage, tid, e))
            p->calls.unattributed_slices++;
        return;
    }
    if (ct_event_arg(e, ct_key_in_flight)) {
        add_inflight(b, p, (int)(*fn - 1), e);
        return;
    }
    int64_t result = ct_event_int(e, ct_key_result, 0);
    if (ct_function_family((unsigned)(*fn - 1)) == CT_FAMILY_COPY)
        ct_gpu_health_host_copy(&p->gpu_health, e);
    /* a call captured into a CUDA graph ran nothing: its graph's launches do */
    int captured = strcmp(ct_event_text(e, ct_key_graph_work), ct_value_graph_work_captured) == 0;
    ct_calls_add_slice(&p->calls, (int)(*fn - 1), result, e->end > e->ts ? e->end - e->ts : 0,
                       captured);
    if (*fn - 1 == CT_FN_cudaRuntimeGetVersion && result == 0)
        note_version(&p->cuda.runtime_version, ct_event_int(e, ct_key_version, -1));
    ct_unfinished_call(&p->unfinished, tid, e->name, e,
                       ct_gpu_flow_ended(&p->usage.gpu, e->flow_out));
    ct_usage_slice(&p->usage, tid, (int)(*fn - 1), e);
    if (!captured)
        ct_step_calls_note(&p->step_calls, tid, (int)(*fn - 1), e);
    ct_graphs_call(&p->graphs, tid, (int)(*fn - 1), e);
    ct_host_note_call(&p->host, tid, e->end > e->ts ? e->end - e->ts : 0);
}

/* A thread's totals for one function, written when it ended: exact however
 * many of its slices the rings dropped. */
static void add_totals(struct builder *b, struct ct_process_report *p, const struct ct_event *e)
{
    uint64_t *fn =
        ct_u64_map_find(&b->functions, ct_strings_intern_cstr(ct_event_text(e, ct_key_function)));
    if (!fn)
        return;
    ct_calls_add_totals(&p->calls, (int)(*fn - 1), (uint64_t)ct_event_int(e, ct_key_calls, 0),
                        (uint64_t)ct_event_int(e, ct_key_errors, 0),
                        (uint64_t)ct_event_int(e, ct_key_total_ns, 0));
}

/* A snapshot the collector took: this trace, when it has no path. */
static void note_snapshot(struct ct_process_report *p, const struct ct_event *e)
{
    struct ct_snapshot_mark m = {ct_event_text(e, ct_key_trigger),
                                 ct_event_text(e, ct_key_function),
                                 ct_event_text(e, ct_key_path),
                                 ct_event_int(e, ct_key_result, 0),
                                 ct_event_int(e, ct_key_tid, 0),
                                 e->ts,
                                 (uint64_t)ct_event_int(e, ct_key_since_ns, 0),
                                 (uint64_t)ct_event_int(e, ct_key_hang_ns, 0)};
    if (!*m.path) {
        p->run.snapshot = m;
        return;
    }
    p->run.snapshots =
        ct_array_grow(p->run.snapshots, p->run.snapshot_count, sizeof *p->run.snapshots);
    p->run.snapshots[p->run.snapshot_count++] = m;
}

/* The session's facts, from the instants the collector writes on the
 * process track; 0 when `e` is none of them. */
static int session_instant(struct builder *b, struct ct_process_report *p, const struct ct_event *e)
{
    if (strcmp(e->name, ct_event_trace_format) == 0) {
        p->run.clock = ct_event_text(e, ct_key_clock);
    } else if (strcmp(e->name, ct_event_versions) == 0) {
        note_version(&p->cuda.runtime_version, ct_event_int(e, ct_key_runtime_version, -1));
        note_version(&p->cuda.driver_version, ct_event_int(e, ct_key_driver_version, -1));
        p->cuda.device_count = ct_event_int(e, ct_key_device_count, -1);
    } else if (strcmp(e->name, ct_event_device) == 0) {
        const char *name = ct_event_text(e, ct_key_name);
        if (*name && p->cuda.device_names < 16) {
            p->cuda.device_capability[p->cuda.device_names] =
                ct_event_text(e, ct_key_compute_capability);
            p->cuda.devices[p->cuda.device_names++] = name;
        }
    } else if (strcmp(e->name, ct_event_identity) == 0) {
        struct ct_process_identity *id = &p->identity;
        id->host = ct_event_text(e, ct_key_host);
        id->job = ct_event_text(e, ct_key_job);
        id->launcher = ct_event_text(e, ct_key_launcher);
        id->visible_devices = ct_event_text(e, ct_key_visible_devices);
        id->rank = ct_event_int(e, ct_key_rank, -1);
        id->local_rank = ct_event_int(e, ct_key_local_rank, -1);
        id->world_size = ct_event_int(e, ct_key_world_size, -1);
    } else if (strcmp(e->name, ct_event_environment) == 0) {
        p->identity.environment = ct_event_text(e, ct_key_variables);
        ct_step_calls_environment(&p->step_calls, p->identity.environment);
    } else if (strcmp(e->name, ct_event_calls) == 0) {
        add_totals(b, p, e);
    } else if (strcmp(e->name, ct_event_usage_tally) == 0) {
        ct_usage_gap_instant(&p->usage, e);
    } else if (strcmp(e->name, ct_event_gap_memory) == 0) {
        ct_usage_gap_memory(&p->usage, e);
    } else if (strcmp(e->name, ct_event_gap_gpu) == 0) {
        ct_gpu_gap_block(&p->usage.gpu, e);
    } else if (strcmp(e->name, ct_event_gap_cut) == 0) {
        note_gap_cut(&p->run.gap, e);
    } else if (strcmp(e->name, ct_event_snapshot) == 0) {
        note_snapshot(p, e);
    } else if (strcmp(e->name, ct_event_end) == 0) {
        p->run.dropped = (uint64_t)ct_event_int(e, ct_key_dropped, 0);
        p->run.calls_recorded = (uint64_t)ct_event_int(e, ct_key_calls, 0);
        p->run.collector_cpu_ns = (uint64_t)ct_event_int(e, ct_key_collector_cpu_ns, 0);
        p->run.collector_max_rss_kb = (uint64_t)ct_event_int(e, ct_key_collector_max_rss_kb, 0);
        p->run.memory_events_late = (uint64_t)ct_event_int(e, ct_key_memory_events_late, 0);
        p->run.start_ns = (uint64_t)ct_event_int(e, ct_key_process_start_ns, 0);
        p->run.exited_normally = strcmp(ct_event_text(e, ct_key_exit), ct_value_exit_normal) == 0;
        p->run.end_ns = e->ts;
        p->run.ended = 1;
    } else {
        return 0;
    }
    return 1;
}

static void on_instant(void *ctx, const struct ct_event *e)
{
    struct builder *b = ctx;
    struct ct_process_report *p = owner_of(b, e->track);
    const uint64_t *thread = ct_u64_map_find(&b->thread_of, e->track);
    if (p && thread && ct_usage_nvtx_mark(&p->usage, (int64_t)*thread, e)) {
        note_time(p, e->ts);
        return;
    }
    if (p && !session_instant(b, p, e) && !ct_capture_instant(&p->run.capture, e) &&
        !ct_libraries_instant(&p->libraries, e) && !ct_cupti_instant(&p->cupti, e) &&
        !ct_gpu_health_instant(&p->gpu_health, e) && !ct_host_instant(&p->host, e))
        note_time(p, e->ts);
}

/* A callstack sample is its process's own thread's when its pid is a
 * traced process's, else a worker's of the process that sampled it: the
 * one that named it, or the trace's only process. */
static void on_sample(void *ctx, const struct ct_sample *s)
{
    struct builder *b = ctx;
    uint64_t *index = ct_u64_map_find(&b->process_by_pid, (uint64_t)(uint32_t)s->pid + 1);
    if (index) {
        ct_host_sample(&b->report->processes[*index - 1].host, s, 1);
        return;
    }
    struct ct_report *r = b->report;
    for (size_t i = b->first_process; i < r->process_count; i++)
        if (ct_u64_map_find(&r->processes[i].host.by_pid, (uint64_t)s->pid + 1)) {
            ct_host_sample(&r->processes[i].host, s, 0);
            return;
        }
    if (r->process_count == b->first_process + 1)
        ct_host_sample(&r->processes[b->first_process].host, s, 0);
}

static void on_counter(void *ctx, const struct ct_event *e)
{
    struct builder *b = ctx;
    struct ct_process_report *p = owner_of(b, e->track);
    if (!p)
        return;
    note_time(p, e->ts);
    if (ct_gpu_health_counter(&p->gpu_health, e) || ct_host_counter(&p->host, e))
        return;
    const uint64_t *source = ct_u64_map_find(&b->device_counter, e->track);
    if (source)
        ct_calls_device_bytes(&p->calls, (enum ct_memory_source_kind)(*source - 1), e->ts,
                              e->counter);
    if (source && *source - 1 == CT_MEMORY_GRAPHS)
        ct_usage_graph_memory(&p->usage, e->ts, e->counter > 0 ? (uint64_t)e->counter : 0);
    else if (ct_u64_map_find(&b->pool_counter, e->track))
        ct_pool_reserve_counter(&p->usage.pools, e->ts, e->counter);
}

int ct_report_add_trace(struct ct_report *report, const char *path, char *error, size_t error_size)
{
    struct builder b = {.report = report, .first_process = report->process_count};
    index_functions(&b);
    struct ct_trace_visitor visitor = {.ctx = &b,
                                       .track = on_track,
                                       .slice = on_slice,
                                       .instant = on_instant,
                                       .counter = on_counter,
                                       .sample = on_sample};
    struct ct_decode_result result;
    int r = ct_trace_decode(path, &visitor, &result, error, error_size);
    if (r == 0 && report->process_count == b.first_process) {
        snprintf(error, error_size, "holds no traced process: not a cudatrace trace");
        r = -1;
    }
    for (size_t i = 0; i < report->process_count; i++) {
        ct_libraries_attach(&report->processes[i].libraries);
        ct_calls_use_totals(&report->processes[i].calls);
        ct_usage_settle(&report->processes[i].usage);
        ct_graphs_settle(&report->processes[i].graphs);
        ct_step_calls_settle(&report->processes[i].step_calls);
    }
    for (size_t i = b.first_process; i < report->process_count; i++)
        ct_steps_settle(&report->processes[i]); /* from all of the above */
    report->packets += result.packets;
    report->truncated |= result.truncated;
    report->unclosed += result.unclosed;
    ct_u64_map_free(&b.process_by_pid);
    ct_u64_map_free(&b.owner);
    ct_u64_map_free(&b.thread_of);
    ct_u64_map_free(&b.device_counter);
    ct_u64_map_free(&b.pool_counter);
    ct_u64_map_free(&b.gpu_tracks);
    ct_u64_map_free(&b.written_back);
    ct_u64_map_free(&b.functions);
    return r;
}

uint64_t ct_process_wall_ns(const struct ct_process_report *p)
{
    uint64_t start = p->run.start_ns ? p->run.start_ns : p->run.first_ns;
    return p->run.end_ns > start ? p->run.end_ns - start : 0;
}

uint64_t ct_cuda_part_ns(const struct ct_process_report *p)
{
    uint64_t start = p->usage.first_call_ns;
    return start && p->run.end_ns > start ? p->run.end_ns - start : 0;
}

int ct_process_gpu_summary(const struct ct_process_report *p, struct ct_gpu_summary *out)
{
    if (!ct_gpu_seen(&p->usage.gpu))
        return 0;
    ct_gpu_summarise(&p->usage.gpu, p->usage.first_call_ns,
                     ct_cupti_gpu_end(&p->cupti, p->run.end_ns), out);
    return 1;
}

int ct_process_gpu_health(const struct ct_process_report *p, int device,
                          struct ct_health_summary *out)
{
    const struct ct_health_device *d = &p->gpu_health.devices[device];
    if (!d->known || !d->row_count)
        return 0;
    uint64_t from, to;
    ct_process_cuda_span(p, &from, &to);
    ct_gpu_health_summarise(&p->gpu_health, d, from, to, out);
    return 1;
}

int ct_process_memory_vs_nvml(const struct ct_process_report *p, int device, uint64_t *used_peak,
                              uint64_t *unseen)
{
    struct ct_health_summary s;
    if (!ct_process_gpu_health(p, device, &s) || s.memory_used_peak < 0)
        return 0;
    uint64_t seen = p->calls.peak_device_bytes > 0 ? (uint64_t)p->calls.peak_device_bytes : 0;
    *used_peak = (uint64_t)s.memory_used_peak;
    *unseen = *used_peak > seen ? *used_peak - seen : 0;
    return 1;
}

void ct_process_cuda_span(const struct ct_process_report *p, uint64_t *from, uint64_t *to)
{
    *from = p->usage.first_call_ns ? p->usage.first_call_ns : p->run.first_ns;
    *to = p->run.end_ns;
}

void ct_report_free(struct ct_report *report)
{
    for (size_t i = 0; i < report->process_count; i++) {
        free(report->processes[i].cmdline);
        free(report->processes[i].run.inflight);
        free(report->processes[i].run.snapshots);
        ct_unfinished_free(&report->processes[i].unfinished);
        ct_graphs_free(&report->processes[i].graphs);
        ct_step_calls_free(&report->processes[i].step_calls);
        ct_steps_free(&report->processes[i].steps);
        free(report->processes[i].run.capture.windows);
        ct_libraries_free(&report->processes[i].libraries);
        ct_usage_free(&report->processes[i].usage);
        ct_gpu_health_free(&report->processes[i].gpu_health);
        ct_host_free(&report->processes[i].host);
    }
    free(report->processes);
    memset(report, 0, sizeof *report);
}
