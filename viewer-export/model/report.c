/*
 * Aggregates decoded events per process: calls, errors and time per runtime
 * function (slices named exactly as the function), launches, time in the
 * explicit synchronisation calls, allocator activity from the allocation
 * slices, live bytes from the device-memory counter, and the session facts
 * from the instants the collector writes (versions, devices, drops, end).
 * Tracks map to processes through their descriptors, so it works for any
 * trace written by cudatrace, from any machine.
 */
#include "viewer-export/model/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_format.h"
#include "common/array.h"
#include "viewer-export/output/findings_track.h"
#include "common/string_table.h"
#include "viewer-export/read/trace_decode.h"
#include "common/u64_map.h"

#define DEVICE_MEMORY_TRACK "CUDA device memory (live bytes)"

struct builder {
    struct ct_report *report;
    struct ct_u64_map process_by_pid; /* pid + 1 -> index + 1 */
    struct ct_u64_map owner;          /* any track uuid -> index + 1 */
    struct ct_u64_map thread_of;      /* thread track uuid -> tid */
    struct ct_u64_map device_counter; /* counter track uuids of device memory */
    struct ct_u64_map gpu_tracks;     /* track uuids of GPU work (gpu_model.h) */
    struct ct_u64_map functions;      /* string id of a function name -> fn + 1 */
    int64_t foreign_format;           /* a trace format we do not read, or 0 */
};

static const uint8_t function_family[CT_FN_COUNT] = {
#define FAMILY_OF(fn, family, stream) [CT_FN_##fn] = family,
    CT_FOR_EACH_FUNCTION(FAMILY_OF)
#undef FAMILY_OF
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
    p->runtime_version = p->driver_version = p->device_count = -1;
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
    if (t->name && !t->is_counter &&
        strncmp(t->name, CT_GPU_TRACK_PREFIX, strlen(CT_GPU_TRACK_PREFIX)) == 0)
        ct_u64_map_put(&b->gpu_tracks, t->uuid, 1);
    if (t->name && strcmp(t->name, CT_FINDINGS_TRACK) == 0)
        b->report->annotated = 1;
    if (t->is_counter && t->name && strcmp(t->name, DEVICE_MEMORY_TRACK) == 0)
        ct_u64_map_put(&b->device_counter, t->uuid, 1);
}

static void note_time(struct ct_process_report *p, uint64_t ts)
{
    if (!p->first_ns || ts < p->first_ns)
        p->first_ns = ts;
    if (!p->ended && ts > p->end_ns)
        p->end_ns = ts;
}

static void add_inflight(struct builder *b, struct ct_process_report *p, int fn,
                         const struct ct_event *e)
{
    p->inflight = ct_array_grow(p->inflight, p->inflight_count, sizeof *p->inflight);
    const uint64_t *tid = ct_u64_map_find(&b->thread_of, e->track);
    p->inflight[p->inflight_count++] =
        (struct ct_inflight_call){fn, tid ? (int64_t)*tid : 0, e->ts};
}

/* Adds `calls` calls of `fn` (of which `errors` failed, lasting `ns` in
 * all) to the process's figures. */
static void tally(struct ct_process_report *p, int fn, uint64_t calls, uint64_t errors, uint64_t ns)
{
    struct ct_api_stats *s = &p->api[fn];
    s->calls += calls;
    s->errors += errors;
    s->total_ns += ns;
    switch (function_family[fn]) {
    case CT_FAMILY_LAUNCH:
        p->launches += calls - errors;
        break;
    case CT_FAMILY_SYNC_DEVICE:
    case CT_FAMILY_SYNC_STREAM:
    case CT_FAMILY_SYNC_EVENT:
        p->sync_calls += calls;
        p->sync_ns += ns;
        break;
    case CT_FAMILY_ALLOC_DEVICE:
        p->allocs += calls - errors;
        p->failed_allocs += errors;
        break;
    case CT_FAMILY_FREE_DEVICE:
        p->frees += calls - errors;
        break;
    default:
        break;
    }
}

static void on_slice(void *ctx, const struct ct_event *e)
{
    struct builder *b = ctx;
    struct ct_process_report *p = owner_of(b, e->track);
    if (!p)
        return;
    note_time(p, e->ts);
    note_time(p, e->end);
    if (ct_u64_map_find(&b->gpu_tracks, e->track)) {
        ct_gpu_slice(&p->usage.gpu, e);
        return;
    }
    ct_gpu_host_flow(&p->usage.gpu, e->flow_out);
    uint64_t *fn = ct_u64_map_find(&b->functions, ct_strings_intern_cstr(e->name));
    if (!fn) {
        if (!ct_usage_nvtx_slice(&p->usage, e))
            p->unattributed_slices++;
        return;
    }
    if (ct_event_arg(e, "in_flight")) {
        add_inflight(b, p, (int)(*fn - 1), e);
        return;
    }
    int64_t result = ct_event_int(e, "result", 0);
    int failed = result != 0;
    /* The error queries return an error that some other call left. */
    int reports_others = *fn - 1 == CT_FN_cudaGetLastError || *fn - 1 == CT_FN_cudaPeekAtLastError;
    if (result > 0 && result < 1024 && !reports_others)
        p->calls_failed_with[result]++;
    tally(p, (int)(*fn - 1), 1, failed, e->end > e->ts ? e->end - e->ts : 0);
    const uint64_t *tid = ct_u64_map_find(&b->thread_of, e->track);
    ct_usage_slice(&p->usage, tid ? (int64_t)*tid : 0, (int)(*fn - 1), e);
}

/* A thread's totals for one function, written when it ended: exact however
 * many of its slices the rings dropped. */
static void add_totals(struct builder *b, struct ct_process_report *p, const struct ct_event *e)
{
    uint64_t *fn =
        ct_u64_map_find(&b->functions, ct_strings_intern_cstr(ct_event_text(e, "function")));
    if (!fn)
        return;
    struct ct_api_stats *t = &p->totals[*fn - 1];
    t->calls += (uint64_t)ct_event_int(e, "calls", 0);
    t->errors += (uint64_t)ct_event_int(e, "errors", 0);
    t->total_ns += (uint64_t)ct_event_int(e, "total_ns", 0);
    p->has_totals = 1;
}

/* Where the threads' totals are in the trace, a function whose slices were
 * dropped is counted from them; the others keep what their slices add up
 * to, which is the same count and each call's own mapped duration. */
static void use_totals(struct ct_process_report *p)
{
    if (!p->has_totals || p->totals_used)
        return;
    p->totals_used = 1;
    struct ct_api_stats from_slices[CT_FN_COUNT];
    memcpy(from_slices, p->api, sizeof p->api);
    memset(p->api, 0, sizeof p->api);
    p->launches = p->sync_calls = p->sync_ns = p->allocs = p->frees = p->failed_allocs = 0;
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        p->slices[fn] = from_slices[fn].calls;
        const struct ct_api_stats *s =
            p->totals[fn].calls > from_slices[fn].calls ? &p->totals[fn] : &from_slices[fn];
        if (s->calls)
            tally(p, fn, s->calls, s->errors, s->total_ns);
    }
}

static void add_library(struct ct_process_report *p, const struct ct_event *e)
{
    p->libraries = ct_array_grow(p->libraries, p->library_count, sizeof *p->libraries);
    p->libraries[p->library_count++] =
        (struct ct_library_entry){.path = ct_event_text(e, "path"),
                                  .realpath = ct_event_text(e, "realpath"),
                                  .family = ct_event_text(e, "family"),
                                  .soname = ct_event_text(e, "soname"),
                                  .version = ct_event_text(e, "version"),
                                  .build_id = ct_event_text(e, "build_id"),
                                  .size = (uint64_t)ct_event_int(e, "size", 0),
                                  .built_for_cuda = ct_event_int(e, "built_for_cuda", 0)};
}

/* Traces from before the preload had a loader view carry no "seen_by":
 * their accounts were all the audit module's. */
static const char *seen_by(const struct ct_event *e)
{
    const char *who = ct_event_text(e, "seen_by");
    return *who ? who : "audit";
}

/* The loader's account of a load; attached to the library it mapped once the
 * whole trace is read (the two come from different scans). */
static void add_load(struct ct_process_report *p, const struct ct_event *e)
{
    p->loads = ct_array_grow(p->loads, p->load_count, sizeof *p->loads);
    p->loads[p->load_count++] =
        (struct ct_library_entry){.path = ct_event_text(e, "path"),
                                  .realpath = ct_event_text(e, "realpath"),
                                  .requested_as = ct_event_text(e, "requested_as"),
                                  .requested_by = ct_event_text(e, "requested_by"),
                                  .found_via = ct_event_text(e, "found_via"),
                                  .runpath_copy = ct_event_text(e, "runpath_copy"),
                                  .expected_dirs = ct_event_text(e, "expected_dirs"),
                                  .expected_version = ct_event_text(e, "expected_version"),
                                  .expected_package = ct_event_text(e, "expected_package"),
                                  .expected_by = ct_event_text(e, "expected_by"),
                                  .seen_by = seen_by(e),
                                  .loaded_ns = e->ts};
}

static void add_unload(struct ct_process_report *p, const struct ct_event *e)
{
    p->unloads = ct_array_grow(p->unloads, p->unload_count, sizeof *p->unloads);
    p->unloads[p->unload_count++] =
        (struct ct_library_entry){.realpath = ct_event_text(e, "realpath"), .loaded_ns = e->ts};
}

/* A library's own version as its API reports it: the runtime's 12040 is
 * "12.4"; cuBLAS's and NCCL's major * 10000 + minor * 100 + patch, "2.28.9". */
static const char *format_api_version(const char *family, uint64_t v)
{
    char text[32];
    if (strcmp(family, "cudart") == 0)
        snprintf(text, sizeof text, "%llu.%llu", (unsigned long long)v / 1000,
                 (unsigned long long)(v % 1000) / 10);
    else
        snprintf(text, sizeof text, "%llu.%llu.%llu", (unsigned long long)v / 10000,
                 (unsigned long long)(v % 10000) / 100, (unsigned long long)v % 100);
    return ct_strings_get(ct_strings_intern_cstr(text));
}

/* Where the audit module ran, its account is the loader's own and the
 * preload's reconstruction is left out (tests compare the two). */
static const char *chosen_view(const struct ct_process_report *p)
{
    for (size_t i = 0; i < p->load_count; i++)
        if (strcmp(p->loads[i].seen_by, "audit") == 0)
            return "audit";
    for (size_t i = 0; i < p->failed_load_count; i++)
        if (strcmp(p->failed_loads[i].seen_by, "audit") == 0)
            return "audit";
    return "preload";
}

static void keep_failed_loads_of(struct ct_process_report *p, const char *view)
{
    size_t kept = 0;
    for (size_t i = 0; i < p->failed_load_count; i++)
        if (strcmp(p->failed_loads[i].seen_by, view) == 0)
            p->failed_loads[kept++] = p->failed_loads[i];
    p->failed_load_count = kept;
}

static void attach_unloads(struct ct_process_report *p)
{
    for (size_t i = 0; i < p->unload_count; i++)
        for (size_t k = 0; k < p->library_count; k++)
            if (strcmp(p->libraries[k].realpath, p->unloads[i].realpath) == 0 &&
                p->unloads[i].loaded_ns >= p->libraries[k].loaded_ns)
                p->libraries[k].unloaded_ns = p->unloads[i].loaded_ns;
}

static void attach_loads(struct ct_process_report *p)
{
    const char *view = chosen_view(p);
    keep_failed_loads_of(p, view);
    for (size_t i = 0; i < p->version_count; i++)
        for (size_t k = 0; k < p->library_count; k++)
            if (strcmp(p->libraries[k].realpath, p->versions[i].realpath) == 0)
                p->libraries[k].version =
                    format_api_version(p->libraries[k].family, p->versions[i].api_version);
    for (size_t i = 0; i < p->load_count; i++) {
        for (size_t k = 0; k < p->library_count; k++) {
            struct ct_library_entry *lib = &p->libraries[k];
            if (strcmp(lib->realpath, p->loads[i].realpath) == 0 && !lib->requested_as &&
                strcmp(p->loads[i].seen_by, view) == 0) {
                lib->requested_as = p->loads[i].requested_as;
                lib->requested_by = p->loads[i].requested_by;
                lib->found_via = p->loads[i].found_via;
                lib->runpath_copy = p->loads[i].runpath_copy;
                lib->expected_dirs = p->loads[i].expected_dirs;
                lib->expected_version = p->loads[i].expected_version;
                lib->expected_package = p->loads[i].expected_package;
                lib->expected_by = p->loads[i].expected_by;
                lib->seen_by = p->loads[i].seen_by;
                lib->loaded_ns = p->loads[i].loaded_ns;
                break;
            }
        }
    }
    attach_unloads(p);
}

static int same_failure(const struct ct_failed_load *a, const struct ct_failed_load *b)
{
    return strcmp(a->requested_as, b->requested_as) == 0 &&
           strcmp(a->requested_by, b->requested_by) == 0 && strcmp(a->searched, b->searched) == 0 &&
           strcmp(a->error, b->error) == 0 && strcmp(a->seen_by, b->seen_by) == 0;
}

/* A load retried in a loop fails the same way each time: one entry, counted. */
static void add_failed_load(struct ct_process_report *p, const struct ct_event *e)
{
    struct ct_failed_load load = {ct_event_text(e, "requested_as"),
                                  ct_event_text(e, "requested_by"),
                                  ct_event_text(e, "searched"),
                                  ct_event_text(e, "error"),
                                  seen_by(e),
                                  (uint64_t)ct_event_int(e, "attempts", 1)};
    for (size_t i = 0; i < p->failed_load_count; i++)
        if (same_failure(&p->failed_loads[i], &load)) {
            p->failed_loads[i].attempts += load.attempts;
            return;
        }
    p->failed_loads = ct_array_grow(p->failed_loads, p->failed_load_count, sizeof *p->failed_loads);
    p->failed_loads[p->failed_load_count++] = load;
}

static void read_cupti_state(struct ct_cupti_report *c, const struct ct_event *e)
{
    c->state = ct_event_text(e, "state");
    if (strcmp(c->state, "active") == 0) {
        c->library = ct_event_text(e, "library");
    } else {
        c->reason = ct_event_text(e, "reason");
        c->reason_ns = e->ts;
    }
    c->version = ct_event_int(e, "cupti_version", 0);
    c->result = ct_event_int(e, "cupti_result", 0);
}

static void read_cupti_totals(struct ct_cupti_report *c, const struct ct_event *e)
{
    c->finished = 1;
    c->kernels = (uint64_t)ct_event_int(e, "kernels", 0);
    c->memcpys = (uint64_t)ct_event_int(e, "memcpys", 0);
    c->memsets = (uint64_t)ct_event_int(e, "memsets", 0);
    c->dropped = (uint64_t)ct_event_int(e, "cupti_dropped", 0);
    c->unmapped = (uint64_t)ct_event_int(e, "unmapped", 0);
    c->clock_samples = (uint64_t)ct_event_int(e, "clock_samples", 0);
    c->clock_reading_error_ns = (uint64_t)ct_event_int(e, "clock_reading_error_ns", 0);
    c->clock_drift_ns = (uint64_t)ct_event_int(e, "clock_drift_ns", 0);
}

static void on_instant(void *ctx, const struct ct_event *e)
{
    struct builder *b = ctx;
    struct ct_process_report *p = owner_of(b, e->track);
    if (!p)
        return;
    if (strcmp(e->name, CT_TRACE_FORMAT_EVENT) == 0) {
        int64_t format = ct_event_int(e, "format", 0);
        if (format != CT_TRACE_FORMAT)
            b->foreign_format = format ? format : -1;
        p->clock = ct_event_text(e, "clock");
    } else if (strcmp(e->name, "cuda.versions") == 0) {
        p->runtime_version = ct_event_int(e, "runtime_version", -1);
        p->driver_version = ct_event_int(e, "driver_version", -1);
        p->device_count = ct_event_int(e, "device_count", -1);
    } else if (strcmp(e->name, "cuda.device") == 0) {
        const char *name = ct_event_text(e, "name");
        if (*name && p->device_names < 16) {
            p->device_capability[p->device_names] = ct_event_text(e, "compute_capability");
            p->devices[p->device_names++] = name;
        }
    } else if (strcmp(e->name, "cuda.no_kernel_image") == 0) {
        p->missing_images =
            ct_array_grow(p->missing_images, p->missing_image_count, sizeof *p->missing_images);
        p->missing_images[p->missing_image_count++] = (struct ct_missing_image){
            ct_event_text(e, "kernel"), ct_event_text(e, "library"), ct_event_text(e, "archs")};
    } else if (strcmp(e->name, "cuda.library") == 0) {
        add_library(p, e);
    } else if (strcmp(e->name, "cuda.toolkit") == 0) {
        p->toolkit_root = ct_event_text(e, "root");
        p->toolkit_version = ct_event_text(e, "version");
    } else if (strcmp(e->name, "cuda.library.version") == 0) {
        p->versions = ct_array_grow(p->versions, p->version_count, sizeof *p->versions);
        p->versions[p->version_count++] =
            (struct ct_library_entry){.realpath = ct_event_text(e, "realpath"),
                                      .api_version = (uint64_t)ct_event_int(e, "api_version", 0)};
    } else if (strcmp(e->name, "cuda.library.load") == 0) {
        add_load(p, e);
    } else if (strcmp(e->name, "cuda.library.failed") == 0) {
        add_failed_load(p, e);
    } else if (strcmp(e->name, "cuda.library.unload") == 0) {
        add_unload(p, e);
    } else if (strcmp(e->name, "cudatrace.cupti") == 0) {
        read_cupti_state(&p->cupti, e);
    } else if (strcmp(e->name, "cudatrace.gpu") == 0) {
        read_cupti_totals(&p->cupti, e);
    } else if (strcmp(e->name, "cudatrace.calls") == 0) {
        add_totals(b, p, e);
    } else if (strcmp(e->name, "cudatrace.end") == 0) {
        p->dropped = (uint64_t)ct_event_int(e, "dropped", 0);
        p->calls_recorded = (uint64_t)ct_event_int(e, "calls", 0);
        p->collector_cpu_ns = (uint64_t)ct_event_int(e, "collector_cpu_ns", 0);
        p->collector_max_rss_kb = (uint64_t)ct_event_int(e, "collector_max_rss_kb", 0);
        p->start_ns = (uint64_t)ct_event_int(e, "process_start_ns", 0);
        p->exited_normally = strcmp(ct_event_text(e, "exit"), "normal") == 0;
        p->end_ns = e->ts;
        p->ended = 1;
    } else {
        note_time(p, e->ts);
    }
}

static void on_counter(void *ctx, const struct ct_event *e)
{
    struct builder *b = ctx;
    struct ct_process_report *p = owner_of(b, e->track);
    if (!p)
        return;
    note_time(p, e->ts);
    if (!ct_u64_map_find(&b->device_counter, e->track))
        return;
    if (e->counter > p->peak_device_bytes)
        p->peak_device_bytes = e->counter;
    if (e->ts >= p->final_device_ts) {
        p->final_device_bytes = e->counter;
        p->final_device_ts = e->ts;
    }
}

int ct_report_add_trace(struct ct_report *report, const char *path, char *error, size_t error_size)
{
    struct builder b = {.report = report};
    index_functions(&b);
    struct ct_trace_visitor visitor = {&b, on_track, on_slice, on_instant, on_counter, NULL, NULL};
    struct ct_decode_result result;
    size_t processes_before = report->process_count;
    int r = ct_trace_decode(path, &visitor, &result, error, error_size);
    if (r == 0 && b.foreign_format) {
        snprintf(error, error_size,
                 "written by another cudatrace (trace format %lld; this one reads %d)",
                 (long long)b.foreign_format, CT_TRACE_FORMAT);
        r = -1;
    } else if (r == 0 && report->process_count == processes_before) {
        snprintf(error, error_size, "holds no traced process: not a cudatrace trace");
        r = -1;
    }
    for (size_t i = 0; i < report->process_count; i++) {
        attach_loads(&report->processes[i]);
        use_totals(&report->processes[i]);
    }
    report->packets += result.packets;
    report->truncated |= result.truncated;
    report->unclosed += result.unclosed;
    ct_u64_map_free(&b.process_by_pid);
    ct_u64_map_free(&b.owner);
    ct_u64_map_free(&b.thread_of);
    ct_u64_map_free(&b.device_counter);
    ct_u64_map_free(&b.gpu_tracks);
    ct_u64_map_free(&b.functions);
    return r;
}

uint64_t ct_cuda_part_ns(const struct ct_process_report *p)
{
    uint64_t start = p->usage.first_call_ns;
    return start && p->end_ns > start ? p->end_ns - start : 0;
}

int ct_process_gpu_summary(const struct ct_process_report *p, struct ct_gpu_summary *out)
{
    if (!ct_gpu_seen(&p->usage.gpu))
        return 0;
    /* GPU timings end where the program took CUPTI over, if it did. */
    uint64_t end = p->cupti.state && strcmp(p->cupti.state, "yielded") == 0 && p->cupti.reason_ns
                       ? p->cupti.reason_ns
                       : p->end_ns;
    ct_gpu_summarise(&p->usage.gpu, p->usage.first_call_ns, end, out);
    return 1;
}

void ct_report_free(struct ct_report *report)
{
    for (size_t i = 0; i < report->process_count; i++) {
        free(report->processes[i].cmdline);
        free(report->processes[i].inflight);
        free(report->processes[i].libraries);
        free(report->processes[i].failed_loads);
        free(report->processes[i].loads);
        free(report->processes[i].versions);
        free(report->processes[i].unloads);
        free(report->processes[i].missing_images);
        ct_usage_free(&report->processes[i].usage);
    }
    free(report->processes);
    memset(report, 0, sizeof *report);
}
