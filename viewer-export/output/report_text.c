/*
 * The text form of one process's part of a report: who it was in its job,
 * its facts, the calls per function, the GPU and CUPTI, the libraries (each
 * with the probes that found it another way), failed loads and RTLD_NOLOAD
 * queries; and of one finding with the sites that carry its cost.
 * job_text.c puts them together for `cudatrace report` and `doctor`.
 */
#include "viewer-export/output/report_output.h"

#include "cudatrace/trace_names.h"
#include "viewer-export/output/human_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_version(FILE *out, const char *label, int64_t version)
{
    if (version > 0)
        fprintf(out, "%s %lld.%lld", label, (long long)version / 1000,
                (long long)(version % 1000) / 10);
    else
        fprintf(out, "%s unknown", label);
}

/* A bounded trace's dropped middle: when, how much, and what stays whole. */
static void print_gap(FILE *out, const struct ct_process_report *p)
{
    const struct ct_trace_gap *gap = &p->run.gap;
    if (!gap->chunks)
        return;
    uint64_t start = p->run.start_ns ? p->run.start_ns : p->run.first_ns;
    char from[32], length[32], bytes[32];
    fprintf(out,
            "  gap            the trace's bound (CUDATRACE_MAX_MB) dropped %s of detail from %s "
            "after the start, for %s (%llu chunks); the counts and memory above are the whole "
            "run's\n",
            ct_human_bytes((double)gap->bytes, bytes, sizeof bytes),
            ct_human_time(gap->from_ns > start ? gap->from_ns - start : 0, from, sizeof from),
            ct_human_time(gap->to_ns - gap->from_ns, length, sizeof length),
            (unsigned long long)gap->chunks);
    for (size_t i = 0; i < gap->cut_count; i++)
        fprintf(out,
                "  gap cut        the gap had no room for %llu of its %s entries (%s): the "
                "figures made from them miss the dropped middle's share\n",
                (unsigned long long)gap->cut[i].packets, gap->cut[i].part,
                ct_human_bytes((double)gap->cut[i].bytes, bytes, sizeof bytes));
}

/* The capture windows: what was asked for, and when each window was open. */
static void print_capture(FILE *out, const struct ct_process_report *p)
{
    const struct ct_capture_view *c = &p->run.capture;
    if (!ct_capture_windowed(c))
        return;
    uint64_t start = p->run.start_ns ? p->run.start_ns : p->run.first_ns;
    fprintf(out,
            "  capture        %s%s: %zu window%s recorded in detail; the counts above and the "
            "device memory are the whole run's\n",
            c->setting ? "CUDATRACE_CAPTURE=" : "cudatrace ctl", c->setting ? c->setting : "",
            c->count, c->count == 1 ? "" : "s");
    for (size_t i = 0; i < c->count; i++) {
        char from[32], length[32];
        const struct ct_capture_window *w = &c->windows[i];
        fprintf(out, "                 window %zu from %s after the start for %s, opened by %s\n",
                i + 1,
                ct_human_time(w->from_ns > start ? w->from_ns - start : 0, from, sizeof from),
                ct_human_time(w->to_ns - w->from_ns, length, sizeof length), w->opened_by);
    }
}

static void print_nvtx(FILE *out, const struct ct_process_report *p)
{
    const struct ct_site_costs *t = &p->usage.nvtx_ranges;
    if (!t->count)
        return;
    struct ct_site_cost *sorted = ct_site_costs_sorted(t, CT_SITE_BY_TIME);
    uint64_t *busy = ct_usage_nvtx_gpu_busy(&p->usage);
    char a[32];
    fprintf(out, "  NVTX ranges   ");
    for (size_t i = 0; i < t->count && i < CT_TOP_NVTX_RANGES; i++) {
        fprintf(out, "%s %s %llu x, %s", i ? ";" : "", sorted[i].site,
                (unsigned long long)sorted[i].calls, ct_human_time(sorted[i].ns, a, sizeof a));
        if (busy && sorted[i].ns)
            fprintf(out, " (GPU busy %.0f%%)",
                    100.0 * (double)ct_usage_nvtx_gpu_busy_of(&p->usage, busy, sorted[i].site) /
                        (double)sorted[i].ns);
    }
    fprintf(out, "\n");
    free(busy);
    free(sorted);
}

static void print_gpu(FILE *out, const struct ct_process_report *p)
{
    struct ct_gpu_summary s;
    if (!ct_process_gpu_summary(p, &s))
        return;
    char a[32];
    fprintf(out,
            "  GPU            busy %s (%.0f%% of the run), %llu kernels, %llu copies, %llu memsets",
            ct_human_time(s.busy_ns, a, sizeof a),
            s.span_ns ? 100.0 * (double)s.busy_ns / (double)s.span_ns : 0,
            (unsigned long long)p->usage.gpu.kernel_runs, (unsigned long long)p->usage.gpu.copies,
            (unsigned long long)p->usage.gpu.sets);
    for (int i = 0; i < CT_GPU_TOP_KERNELS && s.top[i].count; i++) {
        fprintf(out, "%s%s %.0f%%", i ? ", " : "; top: ", s.top[i].name,
                p->usage.gpu.kernel_ns
                    ? 100.0 * (double)s.top[i].ns / (double)p->usage.gpu.kernel_ns
                    : 0);
        struct ct_graph_node_cost site; /* a replayed kernel's has no launch to name it */
        if (ct_graphs_top_kernels(&p->graphs, NULL, s.top[i].name, &site, 1) && site.site)
            fprintf(out, " (graphs, captured at %s)", site.site);
    }
    fprintf(out, "\n");
}

static void print_cupti(FILE *out, const struct ct_process_report *p)
{
    const struct ct_cupti_report *c = &p->cupti;
    char a[32], b[32];
    if (!c->state)
        return;
    if (!c->library) {
        fprintf(out, "  CUPTI          %s: %s\n",
                strcmp(c->state, ct_value_cupti_no_gpu) == 0 ? "not used" : "unavailable",
                c->reason);
        return;
    }
    fprintf(out, "  CUPTI          %s", c->library);
    uint64_t start = p->run.start_ns ? p->run.start_ns : p->run.first_ns;
    if (c->reason)
        fprintf(out, " until %s into the run (%s)",
                ct_human_time(c->reason_ns > start ? c->reason_ns - start : 0, a, sizeof a),
                c->reason);
    if (c->finished)
        fprintf(out, "; %llu records dropped; GPU clock mapped within %s (reading) + %s (drift)",
                (unsigned long long)c->dropped,
                ct_human_time(c->clock_reading_error_ns, a, sizeof a),
                ct_human_time(c->clock_drift_ns, b, sizeof b));
    fprintf(out, "\n");
}

/* A device's state as last sampled: the modes, the link, the processes on
 * it (what `cudatrace doctor` shows of the machine as it is). */
static void print_gpu_state(FILE *out, const struct ct_process_report *p,
                            const struct ct_health_device *d)
{
    static const char *const modes[] = {"default", "exclusive thread", "prohibited",
                                        "exclusive process"};
    const struct ct_health_row *last = &d->rows[d->row_count - 1];
    int64_t mode = last->have & 1u << CT_GPU_COMPUTE_MODE ? last->value[CT_GPU_COMPUTE_MODE] : -1;
    fprintf(out,
            "  %-14s NVML driver %s; compute mode %s, persistence %s; PCIe Gen%lld x%lld (max "
            "Gen%llu x%llu)",
            "", p->gpu_health.driver ? p->gpu_health.driver : "?",
            mode >= 0 && mode < 4 ? modes[mode] : "unknown",
            !(last->have & 1u << CT_GPU_PERSISTENCE) ? "unknown"
            : last->value[CT_GPU_PERSISTENCE]        ? "on"
                                                     : "off",
            (long long)last->value[CT_GPU_PCIE_GENERATION],
            (long long)last->value[CT_GPU_PCIE_WIDTH], (unsigned long long)d->pcie_generation_max,
            (unsigned long long)d->pcie_width_max);
    for (int i = 0, shown = 0; i < d->process_count; i++)
        if (d->processes[i].pid != (uint32_t)p->pid)
            fprintf(out, "%s pid %u%s%s%s %.0f MiB",
                    shown++ ? "," : "; other processes:", d->processes[i].pid,
                    *d->processes[i].name ? " (" : "", d->processes[i].name,
                    *d->processes[i].name ? ")" : "", (double)d->processes[i].bytes / (1 << 20));
    fprintf(out, "%s\n", d->lost_ns ? "; lost (fell off the bus)" : "");
}

/* What NVML said of each device, over the CUDA part of the run, while busy. */
static void print_gpu_health(FILE *out, const struct ct_process_report *p)
{
    const struct ct_gpu_health *h = &p->gpu_health;
    if (h->state && strcmp(h->state, ct_value_nvml_sampling) != 0)
        fprintf(out, "  NVML           %s%s%s\n", h->state, *h->reason ? ": " : "", h->reason);
    for (int device = 0; device < CT_HEALTH_DEVICES; device++) {
        struct ct_health_summary s;
        if (h->devices[device].unreadable)
            fprintf(out, "  GPU %-10d not readable through NVML: %s\n", device,
                    h->devices[device].unreadable);
        if (h->devices[device].denied)
            fprintf(out, "  GPU %-10d NVML refused to read: %s\n", device,
                    h->devices[device].denied);
        if (!ct_process_gpu_health(p, device, &s))
            continue;
        const struct ct_health_device *d = &h->devices[device];
        if (!s.samples) {
            fprintf(out, "  GPU %-10u %s: no sample during the CUDA part of the run\n", d->ordinal,
                    d->name);
            print_gpu_state(out, p, d);
            continue;
        }
        const struct ct_health_stat *sm = &s.stat[CT_GPU_SM_CLOCK], *w = &s.stat[CT_GPU_POWER],
                                    *t = &s.stat[CT_GPU_TEMPERATURE];
        fprintf(out,
                "  GPU %-10u %s: busy in %llu of %llu samples; SM clock median %lld MHz (max "
                "%llu); power median %.0f W (limit %.0f W, default %.0f W); %lld C (max %lld C)\n",
                d->ordinal, d->name, (unsigned long long)s.busy_samples,
                (unsigned long long)s.samples, (long long)sm->median,
                (unsigned long long)d->sm_clock_max, (double)w->median / 1000,
                (double)s.stat[CT_GPU_POWER_LIMIT].median / 1000,
                (double)d->power_default_limit / 1000, (long long)t->median, (long long)t->max);
        print_gpu_state(out, p, d);
    }
}

/* A finding's top sites, each with its share of what the finding counts. */
void ct_finding_sites_text(FILE *out, const struct ct_finding *f)
{
    char a[32], b[32];
    for (int i = 0; i < f->site_count; i++) {
        const struct ct_finding_site *s = &f->sites[i];
        fprintf(out, "  %-14s   at %s: %.0f%% (%llu %s", "", *s->site ? s->site : "an unknown site",
                100 * s->share, (unsigned long long)s->calls, s->calls == 1 ? "call" : "calls");
        if (s->ns)
            fprintf(out, ", %s", ct_human_time(s->ns, a, sizeof a));
        if (s->bytes)
            fprintf(out, ", %s", ct_human_bytes((double)s->bytes, b, sizeof b));
        fprintf(out, ")\n");
    }
}

/* The identity line: rank, host, job, what the launcher said. */
static void print_identity(FILE *out, const struct ct_process_identity *id)
{
    if (!*id->host && id->rank < 0)
        return;
    fprintf(out, "  identity      ");
    if (id->rank >= 0)
        fprintf(out, " rank %lld", (long long)id->rank);
    if (id->rank >= 0 && id->world_size >= 0)
        fprintf(out, " of %lld", (long long)id->world_size);
    if (id->local_rank >= 0)
        fprintf(out, " (local %lld)", (long long)id->local_rank);
    fprintf(out, "%s host %s", id->rank >= 0 ? "," : "", *id->host ? id->host : "unknown");
    if (*id->job)
        fprintf(out, ", job %s", id->job);
    if (*id->launcher)
        fprintf(out, " (%s)", id->launcher);
    if (*id->visible_devices)
        fprintf(out, ", CUDA_VISIBLE_DEVICES=%s", id->visible_devices);
    fprintf(out, "\n");
}

/* What the pools held of the device, used or not, when the program asked. */
static void print_pools(FILE *out, const struct ct_process_report *p)
{
    const struct ct_pool_reserve *s = &p->usage.pools;
    char a[32], b[32];
    if (s->readings)
        fprintf(out,
                "                 pools (cudaMallocAsync) held up to %s as the runtime said when "
                "asked, %s when last asked (%llu readings of %llu pool%s)\n",
                ct_human_bytes(s->peak_bytes, a, sizeof a),
                ct_human_bytes(s->final_bytes, b, sizeof b), (unsigned long long)s->readings,
                (unsigned long long)s->pools_read.count, s->pools_read.count == 1 ? "" : "s");
    if (s->trims)
        fprintf(out, "                 pools trimmed %llu times (cudaMemPoolTrimTo)\n",
                (unsigned long long)s->trims);
}

/* What NVML saw in use on each device beside the tracer's own figure. */
static void print_memory_vs_nvml(FILE *out, const struct ct_process_report *p)
{
    char a[32], b[32];
    uint64_t used, unseen;
    for (int device = 0; device < CT_HEALTH_DEVICES; device++) {
        if (!ct_process_memory_vs_nvml(p, device, &used, &unseen))
            continue;
        fprintf(out, "                 NVML: GPU %u had up to %s in use",
                p->gpu_health.devices[device].ordinal, ct_human_bytes((double)used, a, sizeof a));
        if (unseen)
            fprintf(out,
                    ", %s more than the tracer saw (the CUDA context, the driver's own, "
                    "other processes, memory no traced call made)",
                    ct_human_bytes((double)unseen, b, sizeof b));
        fprintf(out, "\n");
    }
}

/* The snapshot this trace is, and those taken of it. */
static void print_snapshots(FILE *out, const struct ct_process_report *p)
{
    char a[32];
    if (p->run.snapshot.trigger)
        fprintf(out, "  snapshot       this trace is a snapshot (%s), taken at +%s\n",
                p->run.snapshot.trigger,
                ct_human_time(p->run.snapshot.at_ns - p->run.first_ns, a, sizeof a));
    for (size_t i = 0; i < p->run.snapshot_count; i++)
        fprintf(out, "  snapshot       %s (%s), taken at +%s\n", p->run.snapshots[i].path,
                p->run.snapshots[i].trigger,
                ct_human_time(p->run.snapshots[i].at_ns - p->run.first_ns, a, sizeof a));
}

/* A probe or a query, which loaded nothing and is no failure: who asked,
 * what it got instead, how often. */
static void print_probe(FILE *out, const char *label, const struct ct_probe *probe)
{
    fprintf(out, "  %-14s %s (asked for by %s", label, probe->requested_as,
            ct_requester_text(probe->requested_by, probe->requested_from));
    if (probe->found_as)
        fprintf(out, ", which got this library as %s", probe->found_as);
    else
        fprintf(out, " with RTLD_NOLOAD, which loads nothing");
    if (probe->attempts > 1)
        fprintf(out, "; %llu times", (unsigned long long)probe->attempts);
    fprintf(out, ")\n");
}

static void print_library(FILE *out, const struct ct_library_entry *lib)
{
    fprintf(out, "  library        %-12s %s", lib->family, lib->realpath);
    if (lib->found_via && *lib->requested_as)
        fprintf(out, " (%s, asked for as %s by %s)", lib->found_via, lib->requested_as,
                ct_requester_text(lib->requested_by, lib->requested_from));
    else if (lib->found_via)
        fprintf(out, " (%s)", lib->found_via);
    if (lib->rolled_back_by && *lib->rolled_back_by)
        fprintf(out, "; unmapped again when the load failed on %s", lib->rolled_back_by);
    fprintf(out, "\n");
    for (size_t i = 0; i < lib->probe_count; i++)
        print_probe(out, "probe", &lib->probes[i]);
}

static void print_libraries(FILE *out, const struct ct_library_view *l)
{
    for (size_t i = 0; i < l->mapped_count; i++)
        print_library(out, &l->mapped[i]);
    for (size_t i = 0; i < l->failed_count; i++) {
        const struct ct_failed_load *load = &l->failed[i];
        fprintf(out, "  failed load    %s (asked for by %s; %s)\n", load->requested_as,
                ct_requester_text(load->requested_by, load->requested_from),
                ct_failed_load_searched(load));
        if (strchr(load->missing, ':'))
            fprintf(out, "                 missing with it: %s\n", load->missing);
        if (*load->other_majors)
            fprintf(out, "                 other majors installed: %s\n", load->other_majors);
    }
    for (size_t i = 0; i < l->query_count; i++)
        print_probe(out, "query", &l->queries[i]);
}

void ct_process_text(FILE *out, const struct ct_process_report *p)
{
    char a[32], b[32];
    fprintf(out, "process %d", (int)p->pid);
    for (size_t i = 0; i < p->cmdline_len; i++)
        fprintf(out, " %s", p->cmdline[i]);
    fprintf(out, "\n  wall time      %s%s\n", ct_human_time(ct_process_wall_ns(p), a, sizeof a),
            p->run.ended
                ? (p->run.exited_normally ? "" : " (ended without exit: killed or crashed)")
            : p->run.snapshot.trigger ? " (a snapshot: the process was running on)"
                                      : " (trace has no end: cut short)");
    print_identity(out, &p->identity);
    fprintf(out, "  CUDA           ");
    print_version(out, "runtime", p->cuda.runtime_version);
    print_version(out, ", driver", p->cuda.driver_version);
    for (int i = 0; i < p->cuda.device_names; i++)
        fprintf(out, "%s%s", i ? ", " : "; devices: ", p->cuda.devices[i]);
    fprintf(out, "\n  %-38s %10s %8s %12s %12s\n", "function", "calls", "errors", "total", "mean");
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        const struct ct_api_stats *s = &p->calls.api[fn];
        if (s->calls)
            fprintf(out, "  %-38s %10llu %8llu %12s %12s\n", ct_function_name(fn),
                    (unsigned long long)s->calls, (unsigned long long)s->errors,
                    ct_human_time(s->total_ns, a, sizeof a),
                    ct_human_time(s->total_ns / s->calls, b, sizeof b));
    }
    fprintf(out, "  launches       %llu\n", (unsigned long long)p->calls.launches);
    fprintf(out, "  sync           %llu calls, %s\n", (unsigned long long)p->calls.sync_calls,
            ct_human_time(p->calls.sync_ns, a, sizeof a));
    fprintf(out, "  device memory  peak %s, final %s, %llu allocs, %llu frees, %llu failed\n",
            ct_human_bytes(p->calls.peak_device_bytes, a, sizeof a),
            ct_human_bytes(p->calls.final_device_bytes, b, sizeof b),
            (unsigned long long)p->calls.allocs, (unsigned long long)p->calls.frees,
            (unsigned long long)p->calls.failed_allocs);
    const struct ct_memory_source *vmm = &p->calls.device_sources[CT_MEMORY_VMM];
    if (vmm->peak > 0)
        fprintf(out,
                "                 of it through the virtual-memory API (cuMemCreate): peak %s, "
                "final %s\n",
                ct_human_bytes(vmm->peak, a, sizeof a), ct_human_bytes(vmm->now, b, sizeof b));
    const struct ct_memory_source *graphs = &p->calls.device_sources[CT_MEMORY_GRAPHS];
    if (graphs->peak > 0)
        fprintf(out,
                "                 of it held by CUDA graphs' allocator (memory nodes), as the "
                "runtime said when asked: peak %s, final %s\n",
                ct_human_bytes(graphs->peak, a, sizeof a),
                ct_human_bytes(graphs->now, b, sizeof b));
    for (int i = 0; i < p->usage.holders.count; i++) {
        const struct ct_holder *h = &p->usage.holders.items[i];
        fprintf(out, "                 of it allocated by lib%s: peak %s, final %s\n", h->library,
                ct_human_bytes((double)h->peak, a, sizeof a),
                ct_human_bytes((double)h->live, b, sizeof b));
    }
    print_pools(out, p);
    print_memory_vs_nvml(out, p);
    if (p->run.memory_events_late)
        fprintf(out,
                "                 %llu allocations or frees came after their time was settled: "
                "the counter may be off by them in between\n",
                (unsigned long long)p->run.memory_events_late);
    print_gpu(out, p);
    print_cupti(out, p);
    print_gpu_health(out, p);
    ct_host_text(out, p);
    print_nvtx(out, p);
    ct_steps_text(out, p);
    ct_graphs_text(out, p);
    for (size_t i = 0; i < p->run.inflight_count; i++)
        fprintf(out, "  in flight      thread %lld was inside %s%s%s when %s\n",
                (long long)p->run.inflight[i].tid, ct_function_name(p->run.inflight[i].fn),
                p->run.inflight[i].site ? ", called at " : "",
                p->run.inflight[i].site ? p->run.inflight[i].site : "",
                p->run.snapshot.trigger ? "the snapshot was taken" : "the process ended");
    print_snapshots(out, p);
    print_gap(out, p);
    print_capture(out, p);
    fprintf(out, "  dropped        %llu records%s\n", (unsigned long long)p->run.dropped,
            p->run.dropped ? " (rings were full: raise CUDATRACE_RING_RECORDS)" : "");
    for (int fn = 0; fn < CT_FN_COUNT; fn++)
        if (ct_calls_dropped_slices(&p->calls, fn))
            fprintf(
                out, "  detail lost    %llu %s slices%s (its counts above are whole)\n",
                (unsigned long long)ct_calls_dropped_slices(&p->calls, fn), ct_function_name(fn),
                ct_capture_windowed(&p->run.capture) ? ", outside the capture windows or dropped"
                                                     : "");
    if (p->run.ended)
        fprintf(out,
                "  tracer         %llu calls recorded; collector used %s of CPU, %llu KiB peak\n",
                (unsigned long long)p->run.calls_recorded,
                ct_human_time(p->run.collector_cpu_ns, a, sizeof a),
                (unsigned long long)p->run.collector_max_rss_kb);
    print_libraries(out, &p->libraries);
}

void ct_finding_text(FILE *out, const struct ct_finding *f, int first)
{
    fprintf(out, "  %-14s %s %s: %s\n", first ? "findings" : "", ct_severity_name(f->severity),
            ct_finding_name(f->id), f->message);
    ct_finding_sites_text(out, f);
}
