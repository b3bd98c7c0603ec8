/*
 * Gathers NVML's side of the trace. The collector writes every measure of
 * one sampling round at the same time on its device's counter tracks, in
 * order, so a counter at a new time begins a new row and one at the row's
 * time joins it. Tracks are known by their names (trace_names.h), read
 * back with the device number they carry. A sample counts as busy when
 * the GPU's utilization was above 0 (or, where NVML gives none, as for a
 * GPU in MIG mode, when its clock-event reasons do not say GpuIdle) and it
 * fell in the span summarised. NVML's utilization is the share of its own
 * sample period (1/6 s to 1 s) that was busy, not of ours: after a burst
 * it stays above 0 for up to a second while the GPU idles at idle clocks.
 * So a sample's busy time is its interval weighted by that share, and the
 * SM clock is judged only over the samples whose utilization says NVML's
 * whole period was busy (100%), the only ones whose instant is sure to be
 * busy; a bursty job whose bursts are shorter than NVML's period has none,
 * and is not judged. The link counts only for the samples
 * with a copy running in the interval before them: a link trains down
 * when idle, and NVML reads it at the instant of the sample.
 */
#include "viewer-export/model/gpu_health.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "cudatrace/trace_names.h"

enum { CLOCK_EVENTS = CT_GPU_MEASURES, PROCESSES };

static const char *const measure_tracks[CT_GPU_MEASURES] = {
#define CT_GPU_MEASURE_TRACK(id, track) ct_track_##track,
    CT_FOR_EACH_GPU_MEASURE(CT_GPU_MEASURE_TRACK)
#undef CT_GPU_MEASURE_TRACK
};

/* The device a track name of the form `format` ("GPU %u ...") carries. */
static int device_of(const char *name, const char *format)
{
    unsigned device;
    int end = 0;
    char pattern[160];
    snprintf(pattern, sizeof pattern, "%s%%n", format);
    if (sscanf(name, pattern, &device, &end) != 1 || name[end] || device >= CT_HEALTH_DEVICES)
        return -1;
    return (int)device;
}

int ct_gpu_health_track(struct ct_gpu_health *h, const struct ct_track_info *t)
{
    if (!t->name)
        return 0;
    for (int what = 0; what <= PROCESSES; what++) {
        const char *format = what < CT_GPU_MEASURES ? measure_tracks[what]
                             : what == CLOCK_EVENTS ? ct_track_gpu_clock_events
                                                    : ct_track_gpu_processes;
        int device = (what < CT_GPU_MEASURES) == !!t->is_counter ? device_of(t->name, format) : -1;
        if (device >= 0) {
            ct_u64_map_put(&h->tracks, t->uuid, ((uint64_t)device << 8 | (uint64_t)what) + 1);
            return 1;
        }
    }
    return 0;
}

/* The device and what of it a track is; NULL when it is not NVML's. */
static struct ct_health_device *track_device(struct ct_gpu_health *h, uint64_t track, int *what)
{
    const uint64_t *found = ct_u64_map_find(&h->tracks, track);
    if (!found)
        return NULL;
    *what = (int)((*found - 1) & 0xff);
    return &h->devices[(*found - 1) >> 8];
}

int ct_gpu_health_counter(struct ct_gpu_health *h, const struct ct_event *e)
{
    int what;
    struct ct_health_device *d = track_device(h, e->track, &what);
    if (!d || what >= CT_GPU_MEASURES)
        return d != NULL;
    if (!d->row_count || d->rows[d->row_count - 1].ts != e->ts) {
        d->rows = ct_array_grow(d->rows, d->row_count, sizeof *d->rows);
        d->rows[d->row_count++].ts = e->ts;
    }
    struct ct_health_row *row = &d->rows[d->row_count - 1];
    row->value[what] = (int64_t)e->counter;
    row->have |= 1u << what;
    return 1;
}

int ct_gpu_health_slice(struct ct_gpu_health *h, const struct ct_event *e)
{
    int what;
    struct ct_health_device *d = track_device(h, e->track, &what);
    if (!d || what != CLOCK_EVENTS)
        return d != NULL;
    d->spans = ct_array_grow(d->spans, d->span_count, sizeof *d->spans);
    d->spans[d->span_count++] =
        (struct ct_health_span){e->ts, e->end, (uint64_t)ct_event_int(e, ct_key_reasons, 0)};
    return 1;
}

static struct ct_health_process *process_of(struct ct_health_device *d, uint32_t pid)
{
    for (int i = 0; i < d->process_count; i++)
        if (d->processes[i].pid == pid)
            return &d->processes[i];
    if (d->process_count == CT_HEALTH_PROCESSES)
        return NULL;
    struct ct_health_process *p = &d->processes[d->process_count++];
    *p = (struct ct_health_process){.pid = pid, .name = ""};
    return p;
}

/* A process coming (or going: `ended`) on a device's processes track. */
static void process_event(struct ct_health_device *d, const struct ct_event *e, int ended)
{
    struct ct_health_process *p = process_of(d, (uint32_t)ct_event_int(e, ct_key_pid, 0));
    if (!p)
        return;
    if (!ended) {
        p->first_ns = p->first_ns ? p->first_ns : e->ts;
        p->name = *ct_event_text(e, ct_key_name) ? ct_event_text(e, ct_key_name) : p->name;
    }
    uint64_t bytes = (uint64_t)ct_event_int(e, ct_key_bytes, 0);
    p->bytes = bytes > p->bytes ? bytes : p->bytes;
    p->last_ns = ended ? e->ts : 0;
}

static void device_facts(struct ct_gpu_health *h, const struct ct_event *e)
{
    int64_t ordinal = ct_event_int(e, ct_key_device, -1);
    if (ordinal < 0 || ordinal >= CT_HEALTH_DEVICES)
        return;
    struct ct_health_device *d = &h->devices[ordinal];
    d->known = 1;
    d->ordinal = (uint32_t)ordinal;
    d->nvml_index = (uint32_t)ct_event_int(e, ct_key_nvml_index, 0);
    d->interval_ms = (uint32_t)ct_event_int(e, ct_key_interval_ms, 0);
    d->uuid = ct_event_text(e, ct_key_uuid);
    d->gpu_uuid = ct_event_text(e, ct_key_gpu_uuid);
    d->name = ct_event_text(e, ct_key_name);
    d->pci_bus_id = ct_event_text(e, ct_key_pci_bus_id);
    d->sm_clock_max = (uint64_t)ct_event_int(e, ct_key_sm_clock_max, 0);
    d->memory_clock_max = (uint64_t)ct_event_int(e, ct_key_memory_clock_max, 0);
    d->power_default_limit = (uint64_t)ct_event_int(e, ct_key_power_default_limit, 0);
    d->pcie_generation_max = (uint64_t)ct_event_int(e, ct_key_pcie_generation_max, 0);
    d->pcie_width_max = (uint64_t)ct_event_int(e, ct_key_pcie_width_max, 0);
}

static void nvml_state(struct ct_gpu_health *h, const struct ct_event *e)
{
    int64_t device = ct_event_int(e, ct_key_device, -1);
    if (device >= 0 && device < CT_HEALTH_DEVICES) { /* a device lost, or never opened */
        if (strcmp(ct_event_text(e, ct_key_state), ct_value_nvml_unreadable) == 0)
            h->devices[device].unreadable = ct_event_text(e, ct_key_reason);
        else if (strcmp(ct_event_text(e, ct_key_state), ct_value_nvml_denied) == 0)
            h->devices[device].denied = ct_event_text(e, ct_key_reason);
        else
            h->devices[device].lost_ns = e->ts;
        return;
    }
    h->state = ct_event_text(e, ct_key_state);
    h->reason = ct_event_text(e, ct_key_reason);
    h->driver = ct_event_text(e, ct_key_nvml_driver);
    h->failed_calls = (uint64_t)ct_event_int(e, ct_key_failed_calls, 0);
}

int ct_gpu_health_instant(struct ct_gpu_health *h, const struct ct_event *e)
{
    int what;
    struct ct_health_device *d = track_device(h, e->track, &what);
    if (d && what == PROCESSES)
        process_event(d, e, strcmp(e->name, ct_event_gpu_process_end) == 0);
    else if (strcmp(e->name, ct_event_nvml_device) == 0)
        device_facts(h, e);
    else if (strcmp(e->name, ct_event_nvml) == 0)
        nvml_state(h, e);
    else
        return d != NULL;
    return 1;
}

static void add_copy(struct ct_gpu_health *h, const struct ct_event *e)
{
    h->copies = ct_array_grow(h->copies, h->copy_count, sizeof *h->copies);
    h->copies[h->copy_count++] = (struct ct_gpu_interval){e->ts, e->end > e->ts ? e->end : e->ts};
}

/* The copies that cross the link: host to device and back (a Default copy
 * may be either), as the call made them or as the GPU ran them. */
void ct_gpu_health_host_copy(struct ct_gpu_health *h, const struct ct_event *e)
{
    const char *kind = ct_event_text(e, ct_key_kind);
    if (strcmp(kind, ct_value_copy_host_to_device) == 0 ||
        strcmp(kind, ct_value_copy_device_to_host) == 0 || strcmp(kind, ct_value_copy_default) == 0)
        add_copy(h, e);
}

void ct_gpu_health_gpu_copy(struct ct_gpu_health *h, const struct ct_event *e)
{
    const char *kind = ct_event_text(e, ct_key_copy_kind);
    if (strcmp(kind, ct_value_gpu_copy_htod) != 0 && strcmp(kind, ct_value_gpu_copy_dtoh) != 0)
        return;
    add_copy(h, e);
    h->timed_copies++;
    h->timed_copy_bytes += (uint64_t)ct_event_int(e, ct_key_bytes, 0);
    h->timed_copy_ns += e->end > e->ts ? e->end - e->ts : 0;
}

/* The reasons of the span that covers `ts`, 0 outside every span. */
static uint64_t reasons_at(const struct ct_health_device *d, uint64_t ts)
{
    for (size_t i = 0; i < d->span_count; i++)
        if (d->spans[i].start <= ts && ts < d->spans[i].end)
            return d->spans[i].reasons;
    return 0;
}

static int copy_within(const struct ct_gpu_health *h, uint64_t from, uint64_t to)
{
    for (size_t i = 0; i < h->copy_count; i++)
        if (h->copies[i].start < to && h->copies[i].end >= from)
            return 1;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median and extremes of measure `m` over the rows `marked`, sorting
 * in `values` (room for every row). */
static struct ct_health_stat stat_of(const struct ct_health_device *d, const char *marked, int m,
                                     int64_t *values)
{
    size_t n = 0;
    for (size_t i = 0; i < d->row_count; i++)
        if (marked[i] && (d->rows[i].have & (1u << m)))
            values[n++] = d->rows[i].value[m];
    qsort(values, n, sizeof *values, by_value);
    return n ? (struct ct_health_stat){n, values[n / 2], values[0], values[n - 1]}
             : (struct ct_health_stat){0, 0, 0, 0};
}

/* Medians and extremes of each measure over the rows `busy` marks, and of
 * the SM clock over those `full` marks. */
static void stats(const struct ct_health_device *d, const char *busy, const char *full,
                  struct ct_health_summary *s)
{
    int64_t *values = calloc(d->row_count + 1, sizeof *values);
    if (!values)
        abort();
    for (int m = 0; m < CT_GPU_MEASURES; m++)
        s->stat[m] = stat_of(d, busy, m, values);
    s->sm_clock_full = stat_of(d, full, CT_GPU_SM_CLOCK, values);
    free(values);
}

static void count_reasons(const struct ct_health_device *d, uint64_t ts,
                          struct ct_health_summary *s)
{
    uint64_t reasons = reasons_at(d, ts);
    s->power_capped += !!(reasons & CT_GPU_REASON_SW_POWER_CAP);
    s->thermal += !!(reasons & (CT_GPU_REASON_SW_THERMAL | CT_GPU_REASON_HW_THERMAL));
    s->hw_slowdown += !!(reasons & (CT_GPU_REASON_HW_SLOWDOWN | CT_GPU_REASON_HW_POWER_BRAKE));
    s->other_reasons |= reasons & ~CT_GPU_REASON_IDLE;
}

static void count_link(const struct ct_gpu_health *h, const struct ct_health_device *d,
                       const struct ct_health_row *r, struct ct_health_summary *s)
{
    uint64_t interval = (uint64_t)d->interval_ms * 1000000ull;
    uint32_t link = 1u << CT_GPU_PCIE_GENERATION | 1u << CT_GPU_PCIE_WIDTH;
    if ((r->have & link) != link || !copy_within(h, r->ts > interval ? r->ts - interval : 0, r->ts))
        return;
    int64_t gen = r->value[CT_GPU_PCIE_GENERATION], width = r->value[CT_GPU_PCIE_WIDTH];
    if (!s->copy_samples || gen < s->copy_generation_min)
        s->copy_generation_min = gen;
    if (!s->copy_samples || width < s->copy_width_min)
        s->copy_width_min = width;
    s->copy_samples++;
    s->link_below += (d->pcie_generation_max && gen < (int64_t)d->pcie_generation_max) ||
                     (d->pcie_width_max && width < (int64_t)d->pcie_width_max);
}

/* The ECC counts over the span: corrected errors added, uncorrected ones
 * standing (either is a fault); the most memory in use on the device, busy
 * or not; and the modes last sampled, in the span or not (a run shorter
 * than the interval has none in it). */
static void count_state(const struct ct_health_device *d, const char *in_span,
                        struct ct_health_summary *s)
{
    int64_t first_corrected = -1;
    s->compute_mode = s->persistence = s->memory_used_peak = -1;
    for (size_t i = 0; i < d->row_count; i++) {
        const struct ct_health_row *r = &d->rows[i];
        if (r->have & 1u << CT_GPU_COMPUTE_MODE)
            s->compute_mode = r->value[CT_GPU_COMPUTE_MODE];
        if (r->have & 1u << CT_GPU_PERSISTENCE)
            s->persistence = r->value[CT_GPU_PERSISTENCE];
        if (!in_span[i])
            continue;
        if (r->have & 1u << CT_GPU_ECC_CORRECTED) {
            first_corrected =
                first_corrected < 0 ? r->value[CT_GPU_ECC_CORRECTED] : first_corrected;
            s->ecc_corrected_added = r->value[CT_GPU_ECC_CORRECTED] - first_corrected;
        }
        if (r->have & 1u << CT_GPU_ECC_UNCORRECTED &&
            r->value[CT_GPU_ECC_UNCORRECTED] > s->ecc_uncorrected)
            s->ecc_uncorrected = r->value[CT_GPU_ECC_UNCORRECTED];
        if (r->have & 1u << CT_GPU_MEMORY_USED &&
            r->value[CT_GPU_MEMORY_USED] > s->memory_used_peak)
            s->memory_used_peak = r->value[CT_GPU_MEMORY_USED];
    }
}

/* The share of NVML's own sample period before `r` that was busy, in
 * percent; where NVML gives no utilization, 100 or 0 by whether the
 * clock-event reasons say GpuIdle at the instant. */
static int64_t busy_percent(const struct ct_health_device *d, const struct ct_health_row *r)
{
    if (r->have & 1u << CT_GPU_UTILIZATION)
        return r->value[CT_GPU_UTILIZATION] < 100 ? r->value[CT_GPU_UTILIZATION] : 100;
    return reasons_at(d, r->ts) & CT_GPU_REASON_IDLE ? 0 : 100;
}

void ct_gpu_health_summarise(const struct ct_gpu_health *h, const struct ct_health_device *d,
                             uint64_t from, uint64_t to, struct ct_health_summary *out)
{
    memset(out, 0, sizeof *out);
    char *busy = calloc(d->row_count + 1, 3);
    if (!busy)
        abort();
    char *in_span = busy + d->row_count + 1, *full = in_span + d->row_count + 1;
    uint64_t interval = (uint64_t)d->interval_ms * 1000000ull;
    for (size_t i = 0; i < d->row_count; i++) {
        const struct ct_health_row *r = &d->rows[i];
        in_span[i] = r->ts >= from && r->ts <= to;
        out->samples += (uint64_t)in_span[i];
        int64_t percent = in_span[i] ? busy_percent(d, r) : 0;
        busy[i] = percent > 0;
        full[i] = percent == 100;
        if (!busy[i])
            continue;
        out->busy_samples++;
        out->full_samples += (uint64_t)full[i];
        out->busy_ns += interval * (uint64_t)percent / 100;
        count_reasons(d, r->ts, out);
        count_link(h, d, r, out);
    }
    stats(d, busy, full, out);
    count_state(d, in_span, out);
    free(busy);
}

struct ct_health_stat ct_gpu_health_stat_when(const struct ct_health_device *d, int m, int full,
                                              int (*keep)(const void *ctx, uint64_t ts),
                                              const void *ctx)
{
    char *marked = calloc(d->row_count + 1, 1);
    int64_t *values = calloc(d->row_count + 1, sizeof *values);
    if (!marked || !values)
        abort();
    for (size_t i = 0; i < d->row_count; i++)
        marked[i] = keep(ctx, d->rows[i].ts) && (!full || busy_percent(d, &d->rows[i]) == 100);
    struct ct_health_stat stat = stat_of(d, marked, m, values);
    free(marked);
    free(values);
    return stat;
}

void ct_gpu_health_free(struct ct_gpu_health *h)
{
    for (int i = 0; i < CT_HEALTH_DEVICES; i++) {
        free(h->devices[i].rows);
        free(h->devices[i].spans);
    }
    free(h->copies);
    ct_u64_map_free(&h->tracks);
    memset(h, 0, sizeof *h);
}
