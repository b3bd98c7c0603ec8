/*
 * Writes the sampler's events on a sequence of their own: for each device,
 * an nvml.device instant on the process track with its fixed facts (the
 * maxima its measures are read against), one counter track per measure
 * ("GPU 0 SM clock (MHz)", each value as NVML gave it), a track of
 * clock-event spans (a slice per run of samples with the same nonzero
 * reasons, the bits in `reasons`; GpuIdle among them, which only says the
 * GPU had no work) and a track of the compute processes as they come and
 * go, with their GPU memory and, when /proc has it, their name. One
 * cudatrace.nvml instant at the end says how NVML fared (sampling, off,
 * absent, failed to start, or stuck in a call), and one more for each
 * device that was lost on the way or that NVML counts and would not open
 * (unreadable, with its reason: not lost), and for each device once for
 * what NVML refused to read for want of privileges (denied).
 */
#include "collector/gpu_state/state_tracks.h"

#include <nvml.h>
#include <stdio.h>
#include <string.h>

#include "collector/gpu_state/sampler.h"
#include "collector/perfetto/process_tracks.h"
#include "cudatrace/trace_names.h"

/* How long the end waits for an NVML call in progress. */
#define STOP_BOUND_MS 250
#define TRACK_BASE 0x20000000ull

enum { CLOCK_EVENTS_TRACK = CT_GPU_MEASURES, PROCESSES_TRACK };

struct device_view {
    int known;
    uint32_t ordinal;
    uint64_t span_since, span_reasons; /* the clock-event span open, if any */
    uint32_t denied;                   /* what NVML refused to read, said already */
    struct ct_gpu_process processes[CT_GPU_PROCESSES_MAX];
    uint32_t process_count;
};

static struct ct_sequence seq;
static struct device_view views[CT_GPU_DEVICES_MAX];
static uint32_t interval_ms;

static const char *const measure_tracks[CT_GPU_MEASURES] = {
#define CT_GPU_MEASURE_TRACK(id, track) ct_track_##track,
    CT_FOR_EACH_GPU_MEASURE(CT_GPU_MEASURE_TRACK)
#undef CT_GPU_MEASURE_TRACK
};

static const struct {
    unsigned long long bit;
    const char *name;
} reason_names[] = {
    {nvmlClocksEventReasonGpuIdle, "GpuIdle"},
    {nvmlClocksEventReasonApplicationsClocksSetting, "ApplicationsClocksSetting"},
    {nvmlClocksEventReasonSwPowerCap, "SwPowerCap"},
    {nvmlClocksThrottleReasonHwSlowdown, "HwSlowdown"},
    {nvmlClocksEventReasonSyncBoost, "SyncBoost"},
    {nvmlClocksEventReasonSwThermalSlowdown, "SwThermalSlowdown"},
    {nvmlClocksThrottleReasonHwThermalSlowdown, "HwThermalSlowdown"},
    {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "HwPowerBrakeSlowdown"},
    {nvmlClocksEventReasonDisplayClockSetting, "DisplayClockSetting"},
};

static uint64_t track_of(uint32_t slot, uint32_t which)
{
    return ct_process.uuid | TRACK_BASE | (uint64_t)slot << 8 | which;
}

void ct_gpu_state_start(const struct ct_shm_header *shm, struct ct_writer *w)
{
    ct_sequence_init(&seq, w, 0);
    interval_ms = shm->nvml_ms;
    ct_gpu_sampler_start(interval_ms, ct_process_env("CUDA_VISIBLE_DEVICES"));
}

void ct_gpu_state_cuda_device(uint64_t ordinal, const char *uuid)
{
    if (ordinal < CT_GPU_DEVICES_MAX && uuid)
        ct_gpu_sampler_cuda_device((uint32_t)ordinal, uuid);
}

void ct_gpu_state_cuda_devices(int64_t count)
{
    ct_gpu_sampler_cuda_devices(count < 0                    ? 0
                                : count > CT_GPU_DEVICES_MAX ? CT_GPU_DEVICES_MAX
                                                             : (uint32_t)count);
}

static void write_tracks(const struct ct_gpu_device *d)
{
    char name[128];
    for (uint32_t m = 0; m < CT_GPU_MEASURES; m++) {
        snprintf(name, sizeof name, measure_tracks[m], d->ordinal);
        ct_write_counter_track(&seq, track_of(d->slot, m), ct_process.uuid, name, CT_UNIT_COUNT);
    }
    snprintf(name, sizeof name, ct_track_gpu_clock_events, d->ordinal);
    ct_write_named_track(&seq, track_of(d->slot, CLOCK_EVENTS_TRACK), ct_process.uuid, name);
    snprintf(name, sizeof name, ct_track_gpu_processes, d->ordinal);
    ct_write_named_track(&seq, track_of(d->slot, PROCESSES_TRACK), ct_process.uuid, name);
}

/* nvml.h's words for what nvmlDeviceGetHandleByIndex_v2 may answer. */
static void refusal_text(int32_t result, char *out, size_t size)
{
    static const struct {
        nvmlReturn_t result;
        const char *text;
    } known[] = {
        {NVML_ERROR_NO_PERMISSION,
         "NVML_ERROR_NO_PERMISSION (the user doesn't have permission to talk to this device)"},
        {NVML_ERROR_INSUFFICIENT_POWER, "NVML_ERROR_INSUFFICIENT_POWER (its external power "
                                        "cables are not properly attached)"},
        {NVML_ERROR_IRQ_ISSUE,
         "NVML_ERROR_IRQ_ISSUE (the NVIDIA kernel detected an interrupt issue with the GPU)"},
        {NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN (an unexpected error)"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if ((int32_t)known[i].result == result) {
            snprintf(out, size, "%s", known[i].text);
            return;
        }
    snprintf(out, size, "nvmlReturn_t %d", result);
}

/* A device NVML counts and will not open: said once, and never sampled. */
static void device_unreadable(const struct ct_gpu_device *d, uint64_t ts)
{
    char reason[160];
    refusal_text(d->opened, reason, sizeof reason);
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_state, ct_value_nvml_unreadable),
        CT_UINT_ARG(ct_key_device, d->ordinal),
        CT_TEXT_ARG(ct_key_reason, reason),
    };
    ct_process_instant(CT_TRACK_PROCESS, ts, ct_event_nvml, args, 3);
}

static void device_chosen(const struct ct_gpu_device *d, uint64_t ts)
{
    if (d->slot >= CT_GPU_DEVICES_MAX)
        return;
    views[d->slot] = (struct device_view){.known = 1, .ordinal = d->ordinal};
    struct ct_arg args[] = {
        CT_UINT_ARG(ct_key_device, d->ordinal),
        CT_UINT_ARG(ct_key_nvml_index, d->nvml_index),
        CT_TEXT_ARG(ct_key_uuid, d->uuid),
        CT_TEXT_ARG(ct_key_gpu_uuid, d->gpu_uuid),
        CT_TEXT_ARG(ct_key_pci_bus_id, d->pci_bus_id),
        CT_TEXT_ARG(ct_key_name, d->name),
        CT_UINT_ARG(ct_key_interval_ms, interval_ms),
        CT_UINT_ARG(ct_key_sm_clock_max, d->sm_clock_max),
        CT_UINT_ARG(ct_key_memory_clock_max, d->memory_clock_max),
        CT_UINT_ARG(ct_key_power_default_limit, d->power_default_limit),
        CT_UINT_ARG(ct_key_pcie_generation_max, d->pcie_generation_max),
        CT_UINT_ARG(ct_key_pcie_width_max, d->pcie_width_max),
    };
    ct_process_instant(CT_TRACK_PROCESS, ts, ct_event_nvml_device, args,
                       sizeof args / sizeof args[0]);
    write_tracks(d);
    if (d->opened != NVML_SUCCESS && d->opened != NVML_ERROR_GPU_IS_LOST)
        device_unreadable(d, ts);
}

/* "clocks SwPowerCap+HwSlowdown" for the reasons in `bits`. */
static void reasons_text(uint64_t bits, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, ct_event_clock_event, "");
    for (size_t i = 0; i < sizeof reason_names / sizeof reason_names[0] && len < size; i++)
        if (bits & reason_names[i].bit)
            len += (size_t)snprintf(out + len, size - len, "%s%s", out[len - 1] == ' ' ? "" : "+",
                                    reason_names[i].name);
    if (out[len - 1] == ' ')
        snprintf(out + len, size - len, "0x%llx", (unsigned long long)bits);
}

static void close_span(uint32_t slot, uint64_t ts)
{
    struct device_view *v = &views[slot];
    if (!v->span_reasons)
        return;
    char name[256];
    reasons_text(v->span_reasons, name, sizeof name);
    struct ct_arg args[] = {CT_UINT_ARG(ct_key_reasons, v->span_reasons)};
    ct_write_slice(&seq, track_of(slot, CLOCK_EVENTS_TRACK), v->span_since, ts,
                   ct_strings_intern_cstr(name), args, 1);
    v->span_reasons = 0;
}

static void note_reasons(uint32_t slot, uint64_t ts, uint64_t reasons)
{
    struct device_view *v = &views[slot];
    if (reasons == v->span_reasons)
        return;
    close_span(slot, ts);
    v->span_reasons = reasons;
    v->span_since = ts;
}

static int has_process(const struct ct_gpu_process *list, uint32_t count, uint32_t pid)
{
    for (uint32_t i = 0; i < count; i++)
        if (list[i].pid == pid)
            return 1;
    return 0;
}

static void process_instant(uint32_t slot, uint64_t ts, const char *event,
                            const struct ct_gpu_process *p)
{
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/%u/comm", p->pid);
    FILE *f = fopen(path, "re");
    if (f && fgets(comm, sizeof comm, f))
        comm[strcspn(comm, "\n")] = '\0';
    if (f)
        fclose(f);
    struct ct_arg args[] = {
        CT_UINT_ARG(ct_key_pid, p->pid),
        CT_UINT_ARG(ct_key_bytes, p->bytes),
        CT_TEXT_ARG(ct_key_name, comm),
    };
    ct_write_instant(&seq, track_of(slot, PROCESSES_TRACK), ts, ct_strings_intern_cstr(event), args,
                     *comm ? 3 : 2);
}

static void note_processes(const struct ct_gpu_sample *s)
{
    struct device_view *v = &views[s->slot];
    for (uint32_t i = 0; i < s->process_count; i++)
        if (!has_process(v->processes, v->process_count, s->processes[i].pid))
            process_instant(s->slot, s->ts_ns, ct_event_gpu_process_start, &s->processes[i]);
    for (uint32_t i = 0; i < v->process_count; i++)
        if (!has_process(s->processes, s->process_count, v->processes[i].pid))
            process_instant(s->slot, s->ts_ns, ct_event_gpu_process_end, &v->processes[i]);
    memcpy(v->processes, s->processes, sizeof v->processes);
    v->process_count = s->process_count;
}

/* What NVML would not let the collector read on a device: said once, the
 * first time each is refused. */
static void note_denied(const struct ct_gpu_sample *s)
{
    struct device_view *v = &views[s->slot];
    uint32_t added = s->denied & ~v->denied;
    if (!added)
        return;
    v->denied |= added;
    char reason[1024], name[128];
    size_t len = (size_t)snprintf(reason, sizeof reason, "NVML_ERROR_NO_PERMISSION:");
    for (unsigned bit = 0; bit <= CT_GPU_DENIED_PROCESSES && len < sizeof reason; bit++) {
        if (!(added & 1u << bit))
            continue;
        if (bit < CT_GPU_MEASURES)
            snprintf(name, sizeof name, measure_tracks[bit], v->ordinal);
        else
            snprintf(name, sizeof name, "%s",
                     bit == CT_GPU_DENIED_REASONS ? "clock-event reasons" : "compute processes");
        len += (size_t)snprintf(reason + len, sizeof reason - len, "%s %s",
                                reason[len - 1] == ':' ? "" : ",", name);
    }
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_state, ct_value_nvml_denied),
        CT_UINT_ARG(ct_key_device, v->ordinal),
        CT_TEXT_ARG(ct_key_reason, reason),
    };
    ct_process_instant(CT_TRACK_PROCESS, s->ts_ns, ct_event_nvml, args, 3);
}

static void write_sample(const struct ct_gpu_sample *s)
{
    if (s->slot >= CT_GPU_DEVICES_MAX || !views[s->slot].known)
        return;
    note_denied(s);
    for (uint32_t m = 0; m < CT_GPU_MEASURES; m++)
        if (s->have & (1u << m))
            ct_write_counter(&seq, track_of(s->slot, m), s->ts_ns, (int64_t)s->value[m]);
    if (s->have_reasons)
        note_reasons(s->slot, s->ts_ns, s->reasons);
    if (s->have_processes)
        note_processes(s);
}

static void device_lost(uint32_t slot, uint64_t ts)
{
    if (slot >= CT_GPU_DEVICES_MAX || !views[slot].known)
        return;
    close_span(slot, ts);
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_state, ct_value_nvml_lost),
        CT_UINT_ARG(ct_key_device, views[slot].ordinal),
    };
    ct_process_instant(CT_TRACK_PROCESS, ts, ct_event_nvml, args, 2);
    views[slot].known = 0;
}

void ct_gpu_state_write(void)
{
    struct ct_gpu_event e;
    while (ct_gpu_sampler_next(&e)) {
        if (e.kind == CT_GPU_EVENT_DEVICE)
            device_chosen(&e.device, e.ts_ns);
        else if (e.kind == CT_GPU_EVENT_SAMPLE)
            write_sample(&e.sample);
        else
            device_lost(e.lost_slot, e.ts_ns);
    }
}

static const char *state_value(enum ct_gpu_state state)
{
    static const char *const values[] = {
        [CT_GPU_STATE_OFF] = ct_value_nvml_off,
        [CT_GPU_STATE_ABSENT] = ct_value_nvml_absent,
        [CT_GPU_STATE_FAILED] = ct_value_nvml_failed,
        [CT_GPU_STATE_SAMPLING] = ct_value_nvml_sampling,
        [CT_GPU_STATE_STUCK] = ct_value_nvml_stuck,
    };
    return values[state];
}

void ct_gpu_state_finish(uint64_t end_ns)
{
    struct ct_gpu_status status;
    ct_gpu_sampler_stop(STOP_BOUND_MS, &status);
    ct_gpu_state_write();
    for (uint32_t slot = 0; slot < CT_GPU_DEVICES_MAX; slot++)
        if (views[slot].known)
            close_span(slot, end_ns);
    if (status.state == CT_GPU_STATE_STUCK)
        snprintf(status.reason, sizeof status.reason,
                 "an NVML call had not returned %d ms after the process ended", STOP_BOUND_MS);
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_state, state_value(status.state)),
        CT_UINT_ARG(ct_key_interval_ms, interval_ms),
        CT_UINT_ARG(ct_key_failed_calls, status.failed_calls),
        CT_UINT_ARG(ct_key_dropped, status.dropped_events),
        CT_TEXT_ARG(ct_key_nvml_driver, status.driver),
        CT_TEXT_ARG(ct_key_reason, status.reason),
    };
    ct_process_instant(CT_TRACK_PROCESS, end_ns, ct_event_nvml, args, sizeof args / sizeof args[0]);
}
