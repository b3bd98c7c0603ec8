/*
 * The parts of the report/1 JSON (docs/report-schema.md) that come from
 * one process: who it was in its job, its facts, calls, GPU, CUPTI, NVTX
 * ranges, libraries (with their probes), failed loads and RTLD_NOLOAD
 * queries; and one finding with its evidence.
 * job_json.c puts them together for `cudatrace report --json`, `doctor
 * --json` and the html export, which embeds it.
 */
#include "viewer-export/output/report_output.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/entry_list.h"
#include "cudatrace/trace_names.h"

/* Who asked for a library and by which name; the Python line only where
 * one asked. */
static void requester_json(struct ct_json *j, const char *as, const char *by, const char *from)
{
    ct_json_string(j, "requested_as", as);
    ct_json_string(j, "requested_by", by);
    if (from && *from)
        ct_json_string(j, "requested_from", from);
}

/* A probe (with the name its requester got the library by) or a query. */
static void probe_json(struct ct_json *j, const struct ct_probe *probe)
{
    ct_json_begin_object(j, NULL);
    requester_json(j, probe->requested_as, probe->requested_by, probe->requested_from);
    ct_json_string(j, "seen_by", probe->seen_by);
    ct_json_uint(j, "attempts", probe->attempts);
    if (probe->found_as)
        ct_json_string(j, "found_as", probe->found_as);
    ct_json_end_object(j);
}

void ct_library_json(struct ct_json *j, const struct ct_library_entry *lib)
{
    ct_json_begin_object(j, NULL);
    ct_json_string(j, "path", lib->path);
    ct_json_string(j, "realpath", lib->realpath);
    ct_json_string(j, "family", lib->family);
    ct_json_string(j, "soname", lib->soname);
    ct_json_string(j, "version", lib->version);
    if (lib->version_from && *lib->version_from)
        ct_json_string(j, "version_from", lib->version_from);
    /* How it was asked for and found, and by whom it was seen. */
    const char *const loader[][2] = {{"requested_as", lib->requested_as},
                                     {"requested_by", lib->requested_by},
                                     {"found_via", lib->found_via},
                                     {"seen_by", lib->seen_by}};
    if (lib->expected_dirs && *lib->expected_dirs) {
        ct_json_string(j, "expected_dirs", lib->expected_dirs);
        ct_json_string(j, "expected_version", lib->expected_version);
        ct_json_string(j, "expected_by", lib->expected_by);
    }
    for (size_t i = 0; i < sizeof loader / sizeof loader[0]; i++) {
        if (loader[i][1])
            ct_json_string(j, loader[i][0], loader[i][1]);
        else
            ct_json_null(j, loader[i][0]);
    }
    if (lib->requested_from && *lib->requested_from)
        ct_json_string(j, "requested_from", lib->requested_from);
    const struct {
        const char *key;
        uint64_t ns;
    } times[] = {{"loaded_ns", lib->loaded_ns}, {"unloaded_ns", lib->unloaded_ns}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        if (times[i].ns)
            ct_json_uint(j, times[i].key, times[i].ns);
        else
            ct_json_null(j, times[i].key);
    }
    if (lib->rolled_back_by && *lib->rolled_back_by)
        ct_json_string(j, "rolled_back_by", lib->rolled_back_by);
    else
        ct_json_null(j, "rolled_back_by");
    ct_json_string(j, "build_id", lib->build_id);
    ct_json_uint(j, "size", lib->size);
    if (lib->probe_count) {
        ct_json_begin_array(j, "probes");
        for (size_t i = 0; i < lib->probe_count; i++)
            probe_json(j, &lib->probes[i]);
        ct_json_end_array(j);
    }
    ct_json_end_object(j);
}

void ct_json_list(struct ct_json *j, const char *key, const char *list, char separator)
{
    char one[4096];
    ct_json_begin_array(j, key);
    for (const char *item = list; ct_list_next(&item, separator, one, sizeof one);)
        ct_json_string(j, NULL, one);
    ct_json_end_array(j);
}

void ct_failed_load_json(struct ct_json *j, const struct ct_failed_load *load)
{
    ct_json_begin_object(j, NULL);
    requester_json(j, load->requested_as, load->requested_by, load->requested_from);
    ct_json_string(j, "error", load->error);
    ct_json_list(j, "searched", load->searched, ':');
    ct_json_string(j, "seen_by", load->seen_by);
    ct_json_uint(j, "attempts", load->attempts);
    ct_json_list(j, "missing", load->missing, ':');
    ct_json_list(j, "other_majors", load->other_majors, ':');
    ct_json_list(j, "rolled_back", load->rolled_back ? load->rolled_back : "", ':');
    ct_json_end_object(j);
}

void ct_failed_loads_json(struct ct_json *j, const struct ct_failed_load *load)
{
    ct_json_begin_array(j, "failed_loads");
    ct_failed_load_json(j, load);
    ct_json_end_array(j);
}

/* Where a kernel's runs that CUDA graphs replayed were captured, by GPU
 * time: a graph launch has no launch call of its own to name them by. */
static void json_capture_sites(struct ct_json *j, const struct ct_process_report *p,
                               const char *kernel)
{
    struct ct_graph_node_cost sites[CT_GRAPH_KERNEL_SITES];
    size_t n = ct_graphs_top_kernels(&p->graphs, NULL, kernel, sites, CT_GRAPH_KERNEL_SITES);
    ct_json_begin_array(j, "capture_sites");
    for (size_t i = 0; i < n; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_text_or_null(j, "site", sites[i].site);
        ct_json_uint(j, "count", sites[i].runs);
        ct_json_uint(j, "total_ns", sites[i].ns);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

void ct_holders_json(struct ct_json *j, const char *key, const struct ct_holders *h, int with_peak)
{
    ct_json_begin_array(j, key);
    for (int i = 0; i < h->count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "library", h->items[i].library);
        if (with_peak)
            ct_json_uint(j, "peak_bytes", h->items[i].peak);
        ct_json_uint(j, with_peak ? "final_bytes" : "live_bytes", h->items[i].live);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

/* The evidence after the libraries: the numbers, the site, the finding's
 * own evidence and the sites. */
static void numbers_and_sites_json(struct ct_json *j, const struct ct_finding *f)
{
    for (int i = 0; i < f->number_count; i++)
        ct_json_double(j, f->numbers[i].key, f->numbers[i].value);
    if (f->where)
        ct_json_string(j, "site", f->where);
    if (f->own)
        f->own_json(j, f->own);
    if (!f->site_count)
        return;
    ct_json_begin_array(j, "sites");
    for (int i = 0; i < f->site_count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "site", f->sites[i].site);
        ct_json_uint(j, "calls", f->sites[i].calls);
        ct_json_uint(j, "ns", f->sites[i].ns);
        ct_json_uint(j, "bytes", f->sites[i].bytes);
        ct_json_double(j, "share", f->sites[i].share);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

void ct_finding_json(struct ct_json *j, const char *key, const struct ct_finding *f)
{
    if (f->json) {
        ct_json_raw(j, key, f->json, f->json_len);
        return;
    }
    ct_json_begin_object(j, key);
    ct_json_string(j, "id", ct_finding_name(f->id));
    ct_json_string(j, "severity", ct_severity_name(f->severity));
    ct_json_int(j, "pid", f->pid);
    ct_json_string(j, "message", f->message);
    ct_json_begin_object(j, "evidence");
    if (f->library_count) {
        ct_json_begin_array(j, "libraries");
        for (int i = 0; i < f->library_count; i++)
            ct_library_json(j, f->libraries[i]);
        ct_json_end_array(j);
    }
    numbers_and_sites_json(j, f);
    ct_json_end_object(j);
    ct_json_end_object(j);
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
        json_capture_sites(j, p, s.top[i].name);
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
    ct_json_uint(j, "incomplete", c->incomplete);
    ct_json_uint(j, "untimed", c->untimed);
    if (c->finished) {
        ct_json_uint(j, "kernels", c->kernels);
        ct_json_uint(j, "memcpys", c->memcpys);
        ct_json_uint(j, "memsets", c->memsets);
        ct_json_uint(j, "dropped", c->dropped);
        ct_json_uint(j, "clock_samples", c->clock_samples);
        ct_json_uint(j, "clock_reading_error_ns", c->clock_reading_error_ns);
        ct_json_uint(j, "clock_drift_ns", c->clock_drift_ns);
        ct_json_uint(j, "delivery_median_ns", c->delivery_median_ns);
        ct_json_uint(j, "delivery_max_ns", c->delivery_max_ns);
    }
    ct_json_end_object(j);
}

static void json_stat(struct ct_json *j, const char *key, const struct ct_health_stat *s)
{
    if (!s->samples)
        return;
    ct_json_begin_object(j, key);
    ct_json_int(j, "median", s->median);
    ct_json_int(j, "min", s->min);
    ct_json_int(j, "max", s->max);
    ct_json_end_object(j);
}

static void json_gpu_processes(struct ct_json *j, const struct ct_process_report *p,
                               const struct ct_health_device *d)
{
    ct_json_begin_array(j, "other_processes");
    for (int i = 0; i < d->process_count; i++) {
        if (d->processes[i].pid == (uint32_t)p->pid)
            continue;
        ct_json_begin_object(j, NULL);
        ct_json_uint(j, "pid", d->processes[i].pid);
        ct_json_string(j, "name", d->processes[i].name);
        ct_json_uint(j, "bytes", d->processes[i].bytes);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

/* One device's NVML view over the CUDA part of the run, while busy. */
static void json_gpu_device(struct ct_json *j, const struct ct_process_report *p,
                            const struct ct_health_device *d, const struct ct_health_summary *s)
{
    static const char *const names[CT_GPU_MEASURES] = {
        [CT_GPU_UTILIZATION] = "utilization_percent",
        [CT_GPU_MEMORY_UTILIZATION] = "memory_utilization_percent",
        [CT_GPU_SM_CLOCK] = "sm_clock_mhz",
        [CT_GPU_MEMORY_CLOCK] = "memory_clock_mhz",
        [CT_GPU_POWER] = "power_mw",
        [CT_GPU_POWER_LIMIT] = "enforced_power_limit_mw",
        [CT_GPU_TEMPERATURE] = "temperature_c",
        [CT_GPU_PCIE_GENERATION] = "pcie_generation",
        [CT_GPU_PCIE_WIDTH] = "pcie_width",
    };
    ct_json_begin_object(j, NULL);
    ct_json_uint(j, "device", d->ordinal);
    ct_json_uint(j, "nvml_index", d->nvml_index);
    ct_json_string(j, "uuid", d->uuid);
    ct_json_string(j, "gpu_uuid", d->gpu_uuid);
    ct_json_string(j, "name", d->name);
    ct_json_string(j, "pci_bus_id", d->pci_bus_id);
    ct_json_uint(j, "samples", s->samples);
    ct_json_uint(j, "busy_samples", s->busy_samples);
    ct_json_uint(j, "full_window_samples", s->full_samples);
    ct_json_uint(j, "busy_ns", s->busy_ns);
    for (int m = 0; m < CT_GPU_MEASURES; m++)
        if (names[m])
            json_stat(j, names[m], &s->stat[m]);
    ct_json_uint(j, "sm_clock_max_mhz", d->sm_clock_max);
    ct_json_uint(j, "memory_clock_max_mhz", d->memory_clock_max);
    ct_json_uint(j, "default_power_limit_mw", d->power_default_limit);
    ct_json_uint(j, "pcie_generation_max", d->pcie_generation_max);
    ct_json_uint(j, "pcie_width_max", d->pcie_width_max);
    ct_json_begin_object(j, "busy_samples_under");
    ct_json_uint(j, "power_cap", s->power_capped);
    ct_json_uint(j, "thermal", s->thermal);
    ct_json_uint(j, "hw_slowdown", s->hw_slowdown);
    ct_json_end_object(j);
    ct_json_uint(j, "copy_samples", s->copy_samples);
    ct_json_uint(j, "copy_samples_link_below_max", s->link_below);
    ct_json_int(j, "ecc_uncorrected", s->ecc_uncorrected);
    ct_json_int(j, "ecc_corrected_during_run", s->ecc_corrected_added);
    ct_json_int(j, "compute_mode", s->compute_mode);
    ct_json_int(j, "persistence", s->persistence);
    ct_json_uint(j, "lost_ns", d->lost_ns);
    json_gpu_processes(j, p, d);
    ct_json_end_object(j);
}

/* `{"device", "reason"}` for each device whose note at `field` (a const
 * char * of struct ct_health_device) is set. */
static void json_device_notes(struct ct_json *j, const struct ct_gpu_health *h, const char *key,
                              size_t field)
{
    ct_json_begin_array(j, key);
    for (int device = 0; device < CT_HEALTH_DEVICES; device++) {
        const char *note = *(const char *const *)((const char *)&h->devices[device] + field);
        if (!note)
            continue;
        ct_json_begin_object(j, NULL);
        ct_json_uint(j, "device", (uint64_t)device);
        ct_json_string(j, "reason", note);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

/* NVML's view of the GPUs; absent when the trace does not say. */
static void json_gpu_health(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_gpu_health *h = &p->gpu_health;
    if (!h->state)
        return;
    ct_json_begin_object(j, "nvml");
    ct_json_string(j, "state", h->state);
    ct_json_string(j, "reason", h->reason);
    ct_json_string(j, "driver_version", h->driver);
    ct_json_uint(j, "failed_calls", h->failed_calls);
    json_device_notes(j, h, "unreadable", offsetof(struct ct_health_device, unreadable));
    json_device_notes(j, h, "denied", offsetof(struct ct_health_device, denied));
    ct_json_end_object(j);
    ct_json_begin_array(j, "gpu_health");
    for (int device = 0; device < CT_HEALTH_DEVICES; device++) {
        struct ct_health_summary s;
        if (ct_process_gpu_health(p, device, &s))
            json_gpu_device(j, p, &h->devices[device], &s);
    }
    ct_json_end_array(j);
}

/* The middle a bounded trace dropped, or null. */
static void json_gap(struct ct_json *j, const struct ct_trace_gap *gap)
{
    if (!gap->chunks) {
        ct_json_null(j, "gap");
        return;
    }
    ct_json_begin_object(j, "gap");
    ct_json_uint(j, "from_ns", gap->from_ns);
    ct_json_uint(j, "to_ns", gap->to_ns);
    ct_json_uint(j, "dropped_bytes", gap->bytes);
    ct_json_uint(j, "dropped_chunks", gap->chunks);
    ct_json_begin_array(j, "cut");
    for (size_t i = 0; i < gap->cut_count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "part", gap->cut[i].part);
        ct_json_uint(j, "packets", gap->cut[i].packets);
        ct_json_uint(j, "bytes", gap->cut[i].bytes);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_end_object(j);
}

static void json_snapshot_mark(struct ct_json *j, const char *key, const struct ct_snapshot_mark *m)
{
    ct_json_begin_object(j, key);
    ct_json_string(j, "trigger", m->trigger);
    ct_json_uint(j, "at_ns", m->at_ns);
    ct_json_text_or_null(j, "function", m->function);
    if (*m->path)
        ct_json_string(j, "path", m->path);
    if (strcmp(m->trigger, ct_value_trigger_error) == 0 ||
        strcmp(m->trigger, ct_value_trigger_oom) == 0)
        ct_json_int(j, "result", m->result);
    if (strcmp(m->trigger, ct_value_trigger_hang) == 0) {
        ct_json_int(j, "tid", m->tid);
        ct_json_uint(j, "since_ns", m->since_ns);
        ct_json_uint(j, "hang_ns", m->hang_ns);
    }
    ct_json_end_object(j);
}

/* The snapshot this trace is (null: none), and those taken of it. */
static void json_snapshots(struct ct_json *j, const struct ct_process_run *run)
{
    if (run->snapshot.trigger)
        json_snapshot_mark(j, "snapshot", &run->snapshot);
    else
        ct_json_null(j, "snapshot");
    ct_json_begin_array(j, "snapshots");
    for (size_t i = 0; i < run->snapshot_count; i++)
        json_snapshot_mark(j, NULL, &run->snapshots[i]);
    ct_json_end_array(j);
}

/* The capture windows, or null when everything was recorded. */
static void json_capture(struct ct_json *j, const struct ct_capture_view *c)
{
    if (!ct_capture_windowed(c)) {
        ct_json_null(j, "capture");
        return;
    }
    ct_json_begin_object(j, "capture");
    ct_json_text_or_null(j, "setting", c->setting);
    ct_json_begin_array(j, "windows");
    for (size_t i = 0; i < c->count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_uint(j, "from_ns", c->windows[i].from_ns);
        ct_json_uint(j, "to_ns", c->windows[i].to_ns);
        ct_json_string(j, "opened_by", c->windows[i].opened_by);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_raw(j, "counts_are_whole_run", "true", 4);
    ct_json_raw(j, "memory_is_whole_run", "true", 4);
    ct_json_end_object(j);
}

/* The NVTX ranges by total time; absent when the trace has none. */
static void json_nvtx(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_site_costs *t = &p->usage.nvtx_ranges;
    if (!t->count)
        return;
    struct ct_site_cost *sorted = ct_site_costs_sorted(t, CT_SITE_BY_TIME);
    uint64_t *busy = ct_usage_nvtx_gpu_busy(&p->usage);
    ct_json_begin_array(j, "nvtx_ranges");
    for (size_t i = 0; i < t->count && i < CT_TOP_NVTX_RANGES; i++) {
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

static void json_identity(struct ct_json *j, const struct ct_process_identity *id)
{
    ct_json_begin_object(j, "identity");
    ct_json_text_or_null(j, "host", id->host);
    ct_json_int_or_null(j, "rank", id->rank);
    ct_json_int_or_null(j, "local_rank", id->local_rank);
    ct_json_int_or_null(j, "world_size", id->world_size);
    ct_json_text_or_null(j, "job", id->job);
    ct_json_text_or_null(j, "launcher", id->launcher);
    ct_json_text_or_null(j, "visible_devices", id->visible_devices);
    ct_json_begin_object(j, "environment");
    char line[8192];
    for (const char *item = id->environment; ct_list_next(&item, '\n', line, sizeof line);) {
        char *eq = strchr(line, '=');
        if (eq) {
            *eq = '\0';
            ct_json_string(j, line, eq + 1);
        }
    }
    ct_json_end_object(j);
    ct_json_end_object(j);
}

/* NVML's view of each device's memory beside the tracer's. */
static void json_memory_vs_nvml(struct ct_json *j, const struct ct_process_report *p)
{
    uint64_t used, unseen;
    ct_json_begin_array(j, "nvml");
    for (int device = 0; device < CT_HEALTH_DEVICES; device++) {
        if (!ct_process_memory_vs_nvml(p, device, &used, &unseen))
            continue;
        ct_json_begin_object(j, NULL);
        ct_json_uint(j, "device", p->gpu_health.devices[device].ordinal);
        ct_json_uint(j, "used_peak_bytes", used);
        ct_json_uint(j, "unseen_bytes", unseen);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

void ct_process_json(struct ct_json *j, const char *key, const struct ct_process_report *p)
{
    ct_json_begin_object(j, key);
    ct_json_int(j, "pid", p->pid);
    json_identity(j, &p->identity);
    ct_json_begin_array(j, "cmdline");
    for (size_t i = 0; i < p->cmdline_len; i++)
        ct_json_string(j, NULL, p->cmdline[i]);
    ct_json_end_array(j);
    ct_json_uint(j, "wall_ns", ct_process_wall_ns(p));
    ct_json_begin_object(j, "versions");
    json_version(j, "runtime", p->cuda.runtime_version);
    json_version(j, "driver", p->cuda.driver_version);
    ct_json_end_object(j);
    ct_json_begin_array(j, "devices");
    for (int i = 0; i < p->cuda.device_names; i++)
        ct_json_string(j, NULL, p->cuda.devices[i]);
    ct_json_end_array(j);
    ct_json_begin_object(j, "api");
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        const struct ct_api_stats *s = &p->calls.api[fn];
        if (!s->calls)
            continue;
        ct_json_begin_object(j, ct_function_name(fn));
        ct_json_uint(j, "calls", s->calls);
        ct_json_uint(j, "errors", s->errors);
        ct_json_uint(j, "total_ns", s->total_ns);
        ct_json_uint(j, "dropped_slices", ct_calls_dropped_slices(&p->calls, fn));
        ct_json_end_object(j);
    }
    ct_json_end_object(j);
    ct_json_begin_object(j, "launches");
    ct_json_uint(j, "count", p->calls.launches);
    ct_json_end_object(j);
    ct_json_begin_object(j, "sync");
    ct_json_uint(j, "count", p->calls.sync_calls);
    ct_json_uint(j, "total_ns", p->calls.sync_ns);
    ct_json_end_object(j);
    ct_json_begin_object(j, "memory");
    ct_json_uint(j, "peak_bytes", (uint64_t)p->calls.peak_device_bytes);
    ct_json_uint(j, "final_bytes", (uint64_t)p->calls.final_device_bytes);
    ct_json_uint(j, "allocs", p->calls.allocs);
    ct_json_uint(j, "frees", p->calls.frees);
    ct_json_uint(j, "failed_allocs", p->calls.failed_allocs);
    ct_json_uint(j, "late_events", p->run.memory_events_late);
    static const char *const sources[CT_MEMORY_SOURCES] = {[CT_MEMORY_ALLOCATIONS] = "allocations",
                                                           [CT_MEMORY_VMM] = "vmm",
                                                           [CT_MEMORY_GRAPHS] = "graphs"};
    ct_json_begin_object(j, "by_source");
    for (int i = 0; i < CT_MEMORY_SOURCES; i++) {
        ct_json_begin_object(j, sources[i]);
        ct_json_uint(j, "peak_bytes", (uint64_t)p->calls.device_sources[i].peak);
        ct_json_uint(j, "final_bytes", (uint64_t)p->calls.device_sources[i].now);
        ct_json_end_object(j);
    }
    ct_json_end_object(j);
    ct_holders_json(j, "by_library", &p->usage.holders, 1);
    const struct ct_pool_reserve *pools = &p->usage.pools;
    ct_json_begin_object(j, "pools");
    ct_json_uint(j, "readings", pools->readings);
    ct_json_uint(j, "pools", pools->pools_read.count);
    ct_json_uint(j, "trims", pools->trims);
    ct_json_uint(j, "reserved_peak_bytes", (uint64_t)pools->peak_bytes);
    ct_json_uint(j, "reserved_final_bytes", (uint64_t)pools->final_bytes);
    ct_json_end_object(j);
    json_memory_vs_nvml(j, p);
    ct_json_end_object(j);
    json_gpu(j, p);
    json_cupti(j, p);
    json_gpu_health(j, p);
    ct_host_json(j, p);
    json_nvtx(j, p);
    ct_steps_json(j, p);
    ct_graphs_json(j, p);
    ct_json_begin_array(j, "libraries");
    for (size_t i = 0; i < p->libraries.mapped_count; i++)
        ct_library_json(j, &p->libraries.mapped[i]);
    ct_json_end_array(j);
    ct_json_begin_array(j, "failed_loads");
    for (size_t i = 0; i < p->libraries.failed_count; i++)
        ct_failed_load_json(j, &p->libraries.failed[i]);
    ct_json_end_array(j);
    ct_json_begin_array(j, "queries");
    for (size_t i = 0; i < p->libraries.query_count; i++)
        probe_json(j, &p->libraries.queries[i]);
    ct_json_end_array(j);
    ct_json_begin_array(j, "in_flight");
    for (size_t i = 0; i < p->run.inflight_count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "function", ct_function_name(p->run.inflight[i].fn));
        ct_json_int(j, "tid", p->run.inflight[i].tid);
        ct_json_uint(j, "since_ns", p->run.inflight[i].since_ns);
        ct_json_text_or_null(j, "site", p->run.inflight[i].site);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    json_snapshots(j, &p->run);
    json_gap(j, &p->run.gap);
    json_capture(j, &p->run.capture);
    ct_json_uint(j, "dropped_events", p->run.dropped);
    ct_json_begin_object(j, "tracer");
    ct_json_uint(j, "calls_recorded", p->run.calls_recorded);
    ct_json_uint(j, "collector_cpu_ns", p->run.collector_cpu_ns);
    ct_json_uint(j, "collector_max_rss_kb", p->run.collector_max_rss_kb);
    if (p->run.clock && *p->run.clock)
        ct_json_string(j, "clock", p->run.clock);
    else
        ct_json_null(j, "clock");
    ct_json_end_object(j);
    ct_json_string(j, "exit",
                   p->run.ended ? (p->run.exited_normally ? "normal" : "lost") : "unknown");
    ct_json_end_object(j);
}
