/*
 * How a report is written: the report/1 JSON fields (docs/report-schema.md)
 * and the text form, shared by `cudatrace report` and `cudatrace doctor`.
 */
#include "viewer-export/output/report_output.h"

#include "viewer-export/output/human_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Calls of `fn` whose slices the rings dropped (the totals counted them). */
static uint64_t dropped_slices(const struct ct_process_report *p, int fn)
{
    return p->totals_used && p->api[fn].calls > p->slices[fn] ? p->api[fn].calls - p->slices[fn]
                                                              : 0;
}

static uint64_t wall_ns(const struct ct_process_report *p)
{
    uint64_t start = p->start_ns ? p->start_ns : p->first_ns;
    return p->end_ns > start ? p->end_ns - start : 0;
}

static void json_version(struct ct_json *j, const char *key, int64_t version)
{
    if (version > 0)
        ct_json_int(j, key, version);
    else
        ct_json_null(j, key);
}

static void json_gpu(struct ct_json *j, const struct ct_process_report *p)
{
    struct ct_gpu_summary s;
    if (!ct_process_gpu_summary(p, &s))
        return;
    const struct ct_gpu_work *g = &p->usage.gpu;
    ct_json_begin_object(j, "gpu");
    ct_json_uint(j, "busy_ns", s.busy_ns);
    ct_json_uint(j, "kernels", g->kernel_runs);
    ct_json_uint(j, "kernel_ns", g->kernel_ns);
    ct_json_uint(j, "copies", g->copies);
    ct_json_uint(j, "memsets", g->sets);
    struct ct_gpu_flows flows = ct_gpu_flows(g);
    ct_json_begin_object(j, "flows");
    ct_json_uint(j, "gpu_work", flows.gpu_work);
    ct_json_uint(j, "from_host_call", flows.from_host_call);
    ct_json_end_object(j);
    ct_json_begin_array(j, "top_kernels");
    for (int i = 0; i < CT_GPU_TOP_KERNELS && s.top[i].count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "name", s.top[i].name);
        ct_json_uint(j, "count", s.top[i].count);
        ct_json_uint(j, "total_ns", s.top[i].ns);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_end_object(j);
}

/* What became of CUPTI; absent when the trace does not say. */
static void json_cupti(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_cupti_report *c = &p->cupti;
    if (!c->state)
        return;
    ct_json_begin_object(j, "cupti");
    ct_json_string(j, "state", c->state);
    if (c->library)
        ct_json_string(j, "library", c->library);
    if (c->reason)
        ct_json_string(j, "reason", c->reason);
    ct_json_int(j, "version", c->version);
    if (c->finished) {
        ct_json_uint(j, "kernels", c->kernels);
        ct_json_uint(j, "memcpys", c->memcpys);
        ct_json_uint(j, "memsets", c->memsets);
        ct_json_uint(j, "dropped", c->dropped);
        ct_json_uint(j, "clock_samples", c->clock_samples);
        ct_json_uint(j, "clock_reading_error_ns", c->clock_reading_error_ns);
        ct_json_uint(j, "clock_drift_ns", c->clock_drift_ns);
    }
    ct_json_end_object(j);
}

#define TOP_NVTX_RANGES 10

/* The NVTX ranges by total time; absent when the trace has none. */
static void json_nvtx(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_site_costs *t = &p->usage.nvtx_ranges;
    if (!t->count)
        return;
    struct ct_site_cost *sorted = ct_site_costs_sorted(t, CT_SITE_BY_TIME);
    uint64_t *busy = ct_usage_nvtx_gpu_busy(&p->usage);
    ct_json_begin_array(j, "nvtx_ranges");
    for (size_t i = 0; i < t->count && i < TOP_NVTX_RANGES; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "name", sorted[i].site);
        ct_json_uint(j, "count", sorted[i].calls);
        ct_json_uint(j, "total_ns", sorted[i].ns);
        if (busy)
            ct_json_uint(j, "gpu_busy_ns",
                         ct_usage_nvtx_gpu_busy_of(&p->usage, busy, sorted[i].site));
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    free(busy);
    free(sorted);
}

static void print_nvtx(const struct ct_process_report *p)
{
    const struct ct_site_costs *t = &p->usage.nvtx_ranges;
    if (!t->count)
        return;
    struct ct_site_cost *sorted = ct_site_costs_sorted(t, CT_SITE_BY_TIME);
    uint64_t *busy = ct_usage_nvtx_gpu_busy(&p->usage);
    char a[32];
    printf("  NVTX ranges   ");
    for (size_t i = 0; i < t->count && i < TOP_NVTX_RANGES; i++) {
        printf("%s %s %llu x, %s", i ? ";" : "", sorted[i].site,
               (unsigned long long)sorted[i].calls, ct_human_time(sorted[i].ns, a, sizeof a));
        if (busy && sorted[i].ns)
            printf(" (GPU busy %.0f%%)",
                   100.0 * (double)ct_usage_nvtx_gpu_busy_of(&p->usage, busy, sorted[i].site) /
                       (double)sorted[i].ns);
    }
    printf("\n");
    free(busy);
    free(sorted);
}

static void json_process(struct ct_json *j, const struct ct_process_report *p)
{
    ct_json_begin_object(j, NULL);
    ct_json_int(j, "pid", p->pid);
    ct_json_begin_array(j, "cmdline");
    for (size_t i = 0; i < p->cmdline_len; i++)
        ct_json_string(j, NULL, p->cmdline[i]);
    ct_json_end_array(j);
    ct_json_uint(j, "wall_ns", wall_ns(p));
    ct_json_begin_object(j, "versions");
    json_version(j, "runtime", p->runtime_version);
    json_version(j, "driver", p->driver_version);
    ct_json_end_object(j);
    ct_json_begin_array(j, "devices");
    for (int i = 0; i < p->device_names; i++)
        ct_json_string(j, NULL, p->devices[i]);
    ct_json_end_array(j);
    ct_json_begin_object(j, "api");
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        const struct ct_api_stats *s = &p->api[fn];
        if (!s->calls)
            continue;
        ct_json_begin_object(j, ct_function_name(fn));
        ct_json_uint(j, "calls", s->calls);
        ct_json_uint(j, "errors", s->errors);
        ct_json_uint(j, "total_ns", s->total_ns);
        ct_json_uint(j, "dropped_slices", dropped_slices(p, fn));
        ct_json_end_object(j);
    }
    ct_json_end_object(j);
    ct_json_begin_object(j, "launches");
    ct_json_uint(j, "count", p->launches);
    ct_json_end_object(j);
    ct_json_begin_object(j, "sync");
    ct_json_uint(j, "count", p->sync_calls);
    ct_json_uint(j, "total_ns", p->sync_ns);
    ct_json_end_object(j);
    ct_json_begin_object(j, "memory");
    ct_json_uint(j, "peak_bytes", (uint64_t)p->peak_device_bytes);
    ct_json_uint(j, "final_bytes", (uint64_t)p->final_device_bytes);
    ct_json_uint(j, "allocs", p->allocs);
    ct_json_uint(j, "frees", p->frees);
    ct_json_uint(j, "failed_allocs", p->failed_allocs);
    ct_json_end_object(j);
    json_gpu(j, p);
    json_cupti(j, p);
    json_nvtx(j, p);
    ct_json_begin_array(j, "libraries");
    for (size_t i = 0; i < p->library_count; i++)
        ct_library_json(j, &p->libraries[i]);
    ct_json_end_array(j);
    ct_json_begin_array(j, "failed_loads");
    for (size_t i = 0; i < p->failed_load_count; i++)
        ct_failed_load_json(j, &p->failed_loads[i]);
    ct_json_end_array(j);
    ct_json_begin_array(j, "in_flight");
    for (size_t i = 0; i < p->inflight_count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "function", ct_function_name(p->inflight[i].fn));
        ct_json_int(j, "tid", p->inflight[i].tid);
        ct_json_uint(j, "since_ns", p->inflight[i].since_ns);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_uint(j, "dropped_events", p->dropped);
    ct_json_begin_object(j, "tracer");
    ct_json_uint(j, "calls_recorded", p->calls_recorded);
    ct_json_uint(j, "collector_cpu_ns", p->collector_cpu_ns);
    ct_json_uint(j, "collector_max_rss_kb", p->collector_max_rss_kb);
    if (p->clock && *p->clock)
        ct_json_string(j, "clock", p->clock);
    else
        ct_json_null(j, "clock");
    ct_json_end_object(j);
    ct_json_string(j, "exit", p->ended ? (p->exited_normally ? "normal" : "lost") : "unknown");
    ct_json_end_object(j);
}

void ct_report_json_fields(struct ct_json *j, const struct ct_report *r,
                           const struct ct_findings *findings)
{
    ct_json_string(j, "schema", "cudatrace.report/1");
    ct_json_begin_object(j, "trace");
    ct_json_uint(j, "packets", r->packets);
    ct_json_string(j, "tail", r->truncated ? "cut" : "complete");
    ct_json_uint(j, "unclosed_slices", r->unclosed);
    ct_json_end_object(j);
    ct_json_begin_array(j, "processes");
    for (size_t i = 0; i < r->process_count; i++)
        json_process(j, &r->processes[i]);
    ct_json_end_array(j);
    ct_json_begin_array(j, "findings");
    for (size_t i = 0; i < findings->count; i++)
        ct_finding_json(j, &findings->items[i]);
    ct_json_end_array(j);
}

static void print_version(const char *label, int64_t version)
{
    if (version > 0)
        printf("%s %lld.%lld", label, (long long)version / 1000, (long long)(version % 1000) / 10);
    else
        printf("%s unknown", label);
}

static void print_gpu(const struct ct_process_report *p)
{
    struct ct_gpu_summary s;
    if (!ct_process_gpu_summary(p, &s))
        return;
    char a[32];
    printf("  GPU            busy %s (%.0f%% of the run), %llu kernels, %llu copies, %llu memsets",
           ct_human_time(s.busy_ns, a, sizeof a),
           s.span_ns ? 100.0 * (double)s.busy_ns / (double)s.span_ns : 0,
           (unsigned long long)p->usage.gpu.kernel_runs, (unsigned long long)p->usage.gpu.copies,
           (unsigned long long)p->usage.gpu.sets);
    for (int i = 0; i < CT_GPU_TOP_KERNELS && s.top[i].count; i++)
        printf("%s%s %.0f%%", i ? ", " : "; top: ", s.top[i].name,
               p->usage.gpu.kernel_ns ? 100.0 * (double)s.top[i].ns / (double)p->usage.gpu.kernel_ns
                                      : 0);
    printf("\n");
}

static void print_cupti(const struct ct_process_report *p)
{
    const struct ct_cupti_report *c = &p->cupti;
    char a[32], b[32];
    if (!c->state)
        return;
    if (!c->library) {
        printf("  CUPTI          %s: %s\n",
               strcmp(c->state, "no_gpu") == 0 ? "not used" : "unavailable", c->reason);
        return;
    }
    printf("  CUPTI          %s", c->library);
    uint64_t start = p->start_ns ? p->start_ns : p->first_ns;
    if (c->reason)
        printf(" until %s into the run (%s)",
               ct_human_time(c->reason_ns > start ? c->reason_ns - start : 0, a, sizeof a),
               c->reason);
    if (c->finished)
        printf("; %llu records dropped; GPU clock mapped within %s (reading) + %s (drift)",
               (unsigned long long)c->dropped,
               ct_human_time(c->clock_reading_error_ns, a, sizeof a),
               ct_human_time(c->clock_drift_ns, b, sizeof b));
    printf("\n");
}

/* A finding's top sites, each with its share of what the finding counts. */
static void print_finding_sites(const struct ct_finding *f)
{
    char a[32], b[32];
    for (int i = 0; i < f->site_count; i++) {
        const struct ct_finding_site *s = &f->sites[i];
        printf("  %-14s   at %s: %.0f%% (%llu %s", "", *s->site ? s->site : "an unknown site",
               100 * s->share, (unsigned long long)s->calls, s->calls == 1 ? "call" : "calls");
        if (s->ns)
            printf(", %s", ct_human_time(s->ns, a, sizeof a));
        if (s->bytes)
            printf(", %s", ct_human_bytes((double)s->bytes, b, sizeof b));
        printf(")\n");
    }
}

static void print_text_process(const struct ct_process_report *p,
                               const struct ct_findings *findings)
{
    char a[32], b[32];
    printf("process %d", (int)p->pid);
    for (size_t i = 0; i < p->cmdline_len; i++)
        printf(" %s", p->cmdline[i]);
    printf("\n  wall time      %s%s\n", ct_human_time(wall_ns(p), a, sizeof a),
           p->ended ? (p->exited_normally ? "" : " (ended without exit: killed or crashed)")
                    : " (trace has no end: cut short)");
    printf("  CUDA           ");
    print_version("runtime", p->runtime_version);
    print_version(", driver", p->driver_version);
    for (int i = 0; i < p->device_names; i++)
        printf("%s%s", i ? ", " : "; devices: ", p->devices[i]);
    printf("\n  %-38s %10s %8s %12s %12s\n", "function", "calls", "errors", "total", "mean");
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        const struct ct_api_stats *s = &p->api[fn];
        if (s->calls)
            printf("  %-38s %10llu %8llu %12s %12s\n", ct_function_name(fn),
                   (unsigned long long)s->calls, (unsigned long long)s->errors,
                   ct_human_time(s->total_ns, a, sizeof a),
                   ct_human_time(s->total_ns / s->calls, b, sizeof b));
    }
    printf("  launches       %llu\n", (unsigned long long)p->launches);
    printf("  sync           %llu calls, %s\n", (unsigned long long)p->sync_calls,
           ct_human_time(p->sync_ns, a, sizeof a));
    printf("  device memory  peak %s, final %s, %llu allocs, %llu frees, %llu failed\n",
           ct_human_bytes(p->peak_device_bytes, a, sizeof a),
           ct_human_bytes(p->final_device_bytes, b, sizeof b), (unsigned long long)p->allocs,
           (unsigned long long)p->frees, (unsigned long long)p->failed_allocs);
    print_gpu(p);
    print_cupti(p);
    print_nvtx(p);
    for (size_t i = 0; i < p->inflight_count; i++)
        printf("  in flight      thread %lld was inside %s when the process ended\n",
               (long long)p->inflight[i].tid, ct_function_name(p->inflight[i].fn));
    printf("  dropped        %llu records%s\n", (unsigned long long)p->dropped,
           p->dropped ? " (rings were full: raise CUDATRACE_RING_RECORDS)" : "");
    for (int fn = 0; fn < CT_FN_COUNT; fn++)
        if (dropped_slices(p, fn))
            printf("  detail lost    %llu %s slices (its counts above are whole)\n",
                   (unsigned long long)dropped_slices(p, fn), ct_function_name(fn));
    if (p->ended)
        printf("  tracer         %llu calls recorded; collector used %s of CPU, %llu KiB peak\n",
               (unsigned long long)p->calls_recorded,
               ct_human_time(p->collector_cpu_ns, a, sizeof a),
               (unsigned long long)p->collector_max_rss_kb);
    for (size_t i = 0; i < p->library_count; i++) {
        const struct ct_library_entry *lib = &p->libraries[i];
        printf("  library        %-12s %s", lib->family, lib->realpath);
        if (lib->found_via && *lib->requested_as)
            printf(" (%s, asked for as %s by %s)", lib->found_via, lib->requested_as,
                   lib->requested_by);
        else if (lib->found_via)
            printf(" (%s)", lib->found_via);
        printf("\n");
    }
    for (size_t i = 0; i < p->failed_load_count; i++)
        printf("  failed load    %s (asked for by %s; searched %s)\n",
               p->failed_loads[i].requested_as, p->failed_loads[i].requested_by,
               p->failed_loads[i].searched);
    int shown = 0;
    for (size_t i = 0; i < findings->count; i++) {
        const struct ct_finding *f = &findings->items[i];
        if (f->pid != p->pid)
            continue;
        printf("  %-14s %s %s: %s\n", shown++ ? "" : "findings", ct_severity_name(f->severity),
               f->id, f->message);
        print_finding_sites(f);
    }
    if (!shown)
        printf("  findings       none\n");
}

/* Several processes (the ranks of a job): one line each first, so the odd
 * one out shows before the details. */
static void print_process_table(const struct ct_report *r)
{
    char wall[32], sync[32], peak[32];
    printf("%-8s %12s %10s %10s %12s %12s  %s\n", "pid", "wall", "calls", "launches", "sync",
           "peak memory", "exit");
    for (size_t i = 0; i < r->process_count; i++) {
        const struct ct_process_report *p = &r->processes[i];
        printf("%-8d %12s %10llu %10llu %12s %12s  %s\n", (int)p->pid,
               ct_human_time(wall_ns(p), wall, sizeof wall), (unsigned long long)p->calls_recorded,
               (unsigned long long)p->launches, ct_human_time(p->sync_ns, sync, sizeof sync),
               ct_human_bytes(p->peak_device_bytes, peak, sizeof peak),
               p->ended ? (p->exited_normally ? "normal" : "lost") : "unknown");
    }
    printf("\n");
}

void ct_report_print_text(const struct ct_report *r, const struct ct_findings *findings)
{
    if (r->truncated)
        printf("note: the trace ends in a cut frame; reporting what came before it\n");
    if (r->process_count > 1)
        print_process_table(r);
    for (size_t i = 0; i < r->process_count; i++)
        print_text_process(&r->processes[i], findings);
}
