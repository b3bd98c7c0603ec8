/*
 * The text form of a report, shared by `cudatrace report` and `cudatrace
 * doctor`: with several processes a table of one line each first, so the
 * odd one out shows before the details; then per process its facts, the
 * calls per function, the GPU and CUPTI, the libraries and failed loads,
 * and its findings with the sites that carry their cost.
 */
#include "viewer-export/output/report_output.h"

#include "cudatrace/trace_names.h"
#include "viewer-export/output/human_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_version(const char *label, int64_t version)
{
    if (version > 0)
        printf("%s %lld.%lld", label, (long long)version / 1000, (long long)(version % 1000) / 10);
    else
        printf("%s unknown", label);
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
    for (size_t i = 0; i < t->count && i < CT_TOP_NVTX_RANGES; i++) {
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
               strcmp(c->state, ct_value_cupti_no_gpu) == 0 ? "not used" : "unavailable",
               c->reason);
        return;
    }
    printf("  CUPTI          %s", c->library);
    uint64_t start = p->run.start_ns ? p->run.start_ns : p->run.first_ns;
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

/* A device's state as last sampled: the modes, the link, the processes on
 * it (what `cudatrace doctor` shows of the machine as it is). */
static void print_gpu_state(const struct ct_process_report *p, const struct ct_health_device *d)
{
    static const char *const modes[] = {"default", "exclusive thread", "prohibited",
                                        "exclusive process"};
    const struct ct_health_row *last = &d->rows[d->row_count - 1];
    int64_t mode = last->have & 1u << CT_GPU_COMPUTE_MODE ? last->value[CT_GPU_COMPUTE_MODE] : -1;
    printf("  %-14s NVML driver %s; compute mode %s, persistence %s; PCIe Gen%lld x%lld (max "
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
            printf("%s pid %u%s%s%s %.0f MiB",
                   shown++ ? "," : "; other processes:", d->processes[i].pid,
                   *d->processes[i].name ? " (" : "", d->processes[i].name,
                   *d->processes[i].name ? ")" : "", (double)d->processes[i].bytes / (1 << 20));
    printf("%s\n", d->lost_ns ? "; lost (fell off the bus)" : "");
}

/* What NVML said of each device, over the CUDA part of the run, while busy. */
static void print_gpu_health(const struct ct_process_report *p)
{
    const struct ct_gpu_health *h = &p->gpu_health;
    if (h->state && strcmp(h->state, ct_value_nvml_sampling) != 0)
        printf("  NVML           %s%s%s\n", h->state, *h->reason ? ": " : "", h->reason);
    for (int device = 0; device < CT_HEALTH_DEVICES; device++) {
        struct ct_health_summary s;
        if (!ct_process_gpu_health(p, device, &s))
            continue;
        const struct ct_health_device *d = &h->devices[device];
        if (!s.samples) {
            printf("  GPU %-10u %s: no sample during the CUDA part of the run\n", d->ordinal,
                   d->name);
            print_gpu_state(p, d);
            continue;
        }
        const struct ct_health_stat *sm = &s.stat[CT_GPU_SM_CLOCK], *w = &s.stat[CT_GPU_POWER],
                                    *t = &s.stat[CT_GPU_TEMPERATURE];
        printf("  GPU %-10u %s: busy in %llu of %llu samples; SM clock median %lld MHz (max "
               "%llu); power median %.0f W (limit %.0f W, default %.0f W); %lld C (max %lld C)\n",
               d->ordinal, d->name, (unsigned long long)s.busy_samples,
               (unsigned long long)s.samples, (long long)sm->median,
               (unsigned long long)d->sm_clock_max, (double)w->median / 1000,
               (double)s.stat[CT_GPU_POWER_LIMIT].median / 1000,
               (double)d->power_default_limit / 1000, (long long)t->median, (long long)t->max);
        print_gpu_state(p, d);
    }
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
    printf("\n  wall time      %s%s\n", ct_human_time(ct_process_wall_ns(p), a, sizeof a),
           p->run.ended ? (p->run.exited_normally ? "" : " (ended without exit: killed or crashed)")
                        : " (trace has no end: cut short)");
    printf("  CUDA           ");
    print_version("runtime", p->cuda.runtime_version);
    print_version(", driver", p->cuda.driver_version);
    for (int i = 0; i < p->cuda.device_names; i++)
        printf("%s%s", i ? ", " : "; devices: ", p->cuda.devices[i]);
    printf("\n  %-38s %10s %8s %12s %12s\n", "function", "calls", "errors", "total", "mean");
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        const struct ct_api_stats *s = &p->calls.api[fn];
        if (s->calls)
            printf("  %-38s %10llu %8llu %12s %12s\n", ct_function_name(fn),
                   (unsigned long long)s->calls, (unsigned long long)s->errors,
                   ct_human_time(s->total_ns, a, sizeof a),
                   ct_human_time(s->total_ns / s->calls, b, sizeof b));
    }
    printf("  launches       %llu\n", (unsigned long long)p->calls.launches);
    printf("  sync           %llu calls, %s\n", (unsigned long long)p->calls.sync_calls,
           ct_human_time(p->calls.sync_ns, a, sizeof a));
    printf("  device memory  peak %s, final %s, %llu allocs, %llu frees, %llu failed\n",
           ct_human_bytes(p->calls.peak_device_bytes, a, sizeof a),
           ct_human_bytes(p->calls.final_device_bytes, b, sizeof b),
           (unsigned long long)p->calls.allocs, (unsigned long long)p->calls.frees,
           (unsigned long long)p->calls.failed_allocs);
    const struct ct_memory_source *vmm = &p->calls.device_sources[CT_MEMORY_VMM];
    if (vmm->peak > 0)
        printf("                 of it through the virtual-memory API (cuMemCreate): peak %s, "
               "final %s\n",
               ct_human_bytes(vmm->peak, a, sizeof a), ct_human_bytes(vmm->now, b, sizeof b));
    if (p->run.memory_events_late)
        printf("                 %llu allocations or frees came after their time was settled: "
               "the counter may be off by them in between\n",
               (unsigned long long)p->run.memory_events_late);
    print_gpu(p);
    print_cupti(p);
    print_gpu_health(p);
    print_nvtx(p);
    for (size_t i = 0; i < p->run.inflight_count; i++)
        printf("  in flight      thread %lld was inside %s when the process ended\n",
               (long long)p->run.inflight[i].tid, ct_function_name(p->run.inflight[i].fn));
    printf("  dropped        %llu records%s\n", (unsigned long long)p->run.dropped,
           p->run.dropped ? " (rings were full: raise CUDATRACE_RING_RECORDS)" : "");
    for (int fn = 0; fn < CT_FN_COUNT; fn++)
        if (ct_calls_dropped_slices(&p->calls, fn))
            printf("  detail lost    %llu %s slices (its counts above are whole)\n",
                   (unsigned long long)ct_calls_dropped_slices(&p->calls, fn),
                   ct_function_name(fn));
    if (p->run.ended)
        printf("  tracer         %llu calls recorded; collector used %s of CPU, %llu KiB peak\n",
               (unsigned long long)p->run.calls_recorded,
               ct_human_time(p->run.collector_cpu_ns, a, sizeof a),
               (unsigned long long)p->run.collector_max_rss_kb);
    for (size_t i = 0; i < p->libraries.mapped_count; i++) {
        const struct ct_library_entry *lib = &p->libraries.mapped[i];
        printf("  library        %-12s %s", lib->family, lib->realpath);
        if (lib->found_via && *lib->requested_as)
            printf(" (%s, asked for as %s by %s)", lib->found_via, lib->requested_as,
                   ct_requester_text(lib->requested_by, lib->requested_from));
        else if (lib->found_via)
            printf(" (%s)", lib->found_via);
        if (lib->rolled_back_by && *lib->rolled_back_by)
            printf("; unmapped again when the load failed on %s", lib->rolled_back_by);
        printf("\n");
    }
    for (size_t i = 0; i < p->libraries.failed_count; i++) {
        const struct ct_failed_load *load = &p->libraries.failed[i];
        printf("  failed load    %s (asked for by %s; %s)\n", load->requested_as,
               ct_requester_text(load->requested_by, load->requested_from),
               ct_failed_load_searched(load));
        if (strchr(load->missing, ':'))
            printf("                 missing with it: %s\n", load->missing);
        if (*load->other_majors)
            printf("                 other majors installed: %s\n", load->other_majors);
    }
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
               ct_human_time(ct_process_wall_ns(p), wall, sizeof wall),
               (unsigned long long)p->run.calls_recorded, (unsigned long long)p->calls.launches,
               ct_human_time(p->calls.sync_ns, sync, sizeof sync),
               ct_human_bytes(p->calls.peak_device_bytes, peak, sizeof peak),
               p->run.ended ? (p->run.exited_normally ? "normal" : "lost") : "unknown");
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
