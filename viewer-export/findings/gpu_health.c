/*
 * The findings from the GPU's own state (NVML's samples, model/gpu_health.h),
 * per device, over the CUDA part of the run while the GPU was busy: clocks
 * held by the software power cap (power-capped) or by heat
 * (thermal-throttle), an SM clock well under its maximum for another reason
 * or none (clocks-low: judged only over the samples busy for the whole of
 * NVML's own sample period, as a bursty job's idle tails read busy at idle
 * clocks), a PCIe link below its best while copies ran
 * (pcie-downgraded), another process on the device (gpu-shared), a compute
 * mode other than the default (compute-mode: an error when calls failed
 * because no context could be made, which that mode explains) and ECC
 * errors (ecc-errors).
 * GpuIdle among the clock-event reasons says only that the GPU had no
 * work: it counts for none of them. Each gives its numbers and the time it
 * covered: its samples times the sampling interval.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_error_names.h"
#include "viewer-export/findings/findings.h"
#include "viewer-export/findings/thresholds.h"

#define MS 1e6
#define WATT_MW 1000.0

struct device_case {
    const struct ct_process_report *p;
    const struct ct_health_device *d;
    struct ct_health_summary s;
    double interval_ns;
};

static double share(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0;
}

/* The share of the busy samples `under` is, when it comes to `threshold`
 * (and to one sample at least); else 0. */
static double busy_share(const struct device_case *c, uint64_t under, double threshold)
{
    double part = share(under, c->s.busy_samples);
    return under && part >= threshold ? part : 0;
}

static struct ct_finding *add(struct ct_findings *out, const struct device_case *c,
                              enum ct_finding_id id, uint64_t samples, const char *fmt,
                              const char *detail)
{
    struct ct_finding *f =
        ct_finding_add(out, id, c->p->pid, fmt, c->d->ordinal, c->d->name, detail);
    f->cost_ns = (uint64_t)((double)samples * c->interval_ns);
    ct_finding_add_number(f, "device", c->d->ordinal);
    ct_finding_add_number(f, "covered_ns", (double)f->cost_ns);
    ct_finding_add_number(f, "busy_ns", (double)c->s.busy_ns);
    return f;
}

static int power_capped(const struct device_case *c, struct ct_findings *out)
{
    double part = busy_share(c, c->s.power_capped, ct_thresholds.power_cap_share);
    if (!part)
        return 0;
    char detail[256];
    snprintf(detail, sizeof detail,
             "held its clocks at the software power cap for %.0f%% of its busy time; enforced "
             "limit %.0f W against the default %.0f W, median draw %.0f W",
             100 * part, (double)c->s.stat[CT_GPU_POWER_LIMIT].median / WATT_MW,
             (double)c->d->power_default_limit / WATT_MW,
             (double)c->s.stat[CT_GPU_POWER].median / WATT_MW);
    struct ct_finding *f =
        add(out, c, CT_FINDING_POWER_CAPPED, c->s.power_capped, "GPU %u (%s) %s", detail);
    ct_finding_add_number(f, "share", part);
    ct_finding_add_number(f, "enforced_limit_mw", (double)c->s.stat[CT_GPU_POWER_LIMIT].median);
    ct_finding_add_number(f, "default_limit_mw", (double)c->d->power_default_limit);
    ct_finding_add_number(f, "power_median_mw", (double)c->s.stat[CT_GPU_POWER].median);
    return 1;
}

static int thermal(const struct device_case *c, struct ct_findings *out)
{
    double part = busy_share(c, c->s.thermal, ct_thresholds.thermal_share);
    if (!part)
        return 0;
    char detail[256];
    snprintf(detail, sizeof detail,
             "was slowed by thermal slowdown for %.0f%% of its busy time; temperature median "
             "%lld C, highest %lld C",
             100 * part, (long long)c->s.stat[CT_GPU_TEMPERATURE].median,
             (long long)c->s.stat[CT_GPU_TEMPERATURE].max);
    struct ct_finding *f =
        add(out, c, CT_FINDING_THERMAL_THROTTLE, c->s.thermal, "GPU %u (%s) %s", detail);
    ct_finding_add_number(f, "share", part);
    ct_finding_add_number(f, "temperature_median_c", (double)c->s.stat[CT_GPU_TEMPERATURE].median);
    ct_finding_add_number(f, "temperature_max_c", (double)c->s.stat[CT_GPU_TEMPERATURE].max);
    return 1;
}

/* The reasons besides the power cap and heat, named; "none stated" else. */
static void other_reasons(uint64_t bits, char *out, size_t size)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } names[] = {{0x2, "application clocks set"},
                 {CT_GPU_REASON_HW_SLOWDOWN, "hardware slowdown"},
                 {0x10, "sync boost"},
                 {CT_GPU_REASON_HW_POWER_BRAKE, "power brake"},
                 {0x100, "display clock"},
                 {0x200, "board limit"},
                 {0x400, "reliability policy"}};
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0] && len < size; i++)
        if (bits & names[i].bit)
            len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ", " : "", names[i].name);
    if (!len)
        snprintf(out, size, "none stated");
}

static void clocks_low(const struct device_case *c, struct ct_findings *out)
{
    const struct ct_health_stat *sm = &c->s.sm_clock_full;
    if (!sm->samples || !c->d->sm_clock_max ||
        (double)sm->median >= ct_thresholds.clocks_low_ratio * (double)c->d->sm_clock_max)
        return;
    char reasons[160], detail[320];
    other_reasons(c->s.other_reasons, reasons, sizeof reasons);
    snprintf(detail, sizeof detail,
             "ran its SMs at a median %lld MHz while busy throughout NVML's sample period, %.0f%% "
             "of its %llu MHz maximum "
             "(reason: %s)",
             (long long)sm->median, 100.0 * (double)sm->median / (double)c->d->sm_clock_max,
             (unsigned long long)c->d->sm_clock_max, reasons);
    struct ct_finding *f =
        add(out, c, CT_FINDING_CLOCKS_LOW, sm->samples, "GPU %u (%s) %s", detail);
    ct_finding_add_number(f, "sm_clock_median_mhz", (double)sm->median);
    ct_finding_add_number(f, "sm_clock_max_mhz", (double)c->d->sm_clock_max);
}

/* What a PCIe link carries each way, in GB/s: a lane's rate after its
 * encoding (8b/10b to Gen2, 128b/130b to Gen5, FLIT from Gen6). */
static double link_gbps(int64_t generation, int64_t width)
{
    static const double lane[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
    return generation > 0 && generation < 7 && width > 0 ? lane[generation] * (double)width : 0;
}

/* With CUPTI's timings: the bandwidth the copies across the link achieved,
 * beside what the link they ran on, and the link at its best, carry. */
static void achieved(const struct device_case *c, char *text, size_t size, double *gbps)
{
    const struct ct_gpu_health *h = &c->p->gpu_health;
    *gbps = h->timed_copy_ns ? (double)h->timed_copy_bytes / (double)h->timed_copy_ns : 0;
    if (*gbps)
        snprintf(text, size,
                 "; CUPTI's %llu copies across it moved %.1f MiB at %.2f GB/s (the link as it ran "
                 "carries %.2f GB/s, at its best %.2f GB/s)",
                 (unsigned long long)h->timed_copies, (double)h->timed_copy_bytes / (1 << 20),
                 *gbps, link_gbps(c->s.copy_generation_min, c->s.copy_width_min),
                 link_gbps((int64_t)c->d->pcie_generation_max, (int64_t)c->d->pcie_width_max));
}

static void pcie(const struct device_case *c, struct ct_findings *out)
{
    double part = share(c->s.link_below, c->s.copy_samples), gbps;
    if (!c->s.link_below || part < ct_thresholds.pcie_low_share)
        return;
    char detail[512];
    size_t len = (size_t)snprintf(
        detail, sizeof detail,
        "had its PCIe link at Gen%lld x%lld, below its Gen%llu x%llu, in %llu of the %llu "
        "samples taken while copies ran",
        (long long)c->s.copy_generation_min, (long long)c->s.copy_width_min,
        (unsigned long long)c->d->pcie_generation_max, (unsigned long long)c->d->pcie_width_max,
        (unsigned long long)c->s.link_below, (unsigned long long)c->s.copy_samples);
    achieved(c, detail + len, sizeof detail - len, &gbps);
    struct ct_finding *f =
        add(out, c, CT_FINDING_PCIE_DOWNGRADED, c->s.link_below, "GPU %u (%s) %s", detail);
    ct_finding_add_number(f, "generation", (double)c->s.copy_generation_min);
    ct_finding_add_number(f, "width", (double)c->s.copy_width_min);
    ct_finding_add_number(f, "generation_max", (double)c->d->pcie_generation_max);
    ct_finding_add_number(f, "width_max", (double)c->d->pcie_width_max);
    ct_finding_add_number(f, "share", part);
    if (gbps) {
        ct_finding_add_number(f, "copy_bandwidth_gbps", gbps);
        ct_finding_add_number(f, "link_gbps",
                              link_gbps(c->s.copy_generation_min, c->s.copy_width_min));
        ct_finding_add_number(
            f, "link_max_gbps",
            link_gbps((int64_t)c->d->pcie_generation_max, (int64_t)c->d->pcie_width_max));
    }
}

static void shared(const struct device_case *c, struct ct_findings *out)
{
    char detail[512] = "";
    size_t len = 0;
    int others = 0;
    const struct ct_health_process *largest = NULL;
    for (int i = 0; i < c->d->process_count; i++) {
        const struct ct_health_process *q = &c->d->processes[i];
        if (q->pid == (uint32_t)c->p->pid)
            continue;
        if (len < sizeof detail)
            len += (size_t)snprintf(detail + len, sizeof detail - len, "%spid %u%s%s%s, %.0f MiB",
                                    others ? "; " : "", q->pid, *q->name ? " (" : "", q->name,
                                    *q->name ? ")" : "", (double)q->bytes / (1 << 20));
        others++;
        largest = !largest || q->bytes > largest->bytes ? q : largest;
    }
    if (!others)
        return;
    struct ct_finding *f =
        add(out, c, CT_FINDING_GPU_SHARED, c->s.samples,
            "GPU %u (%s) was used by another process during the run: %s", detail);
    ct_finding_add_number(f, "processes", others);
    ct_finding_add_number(f, "pid", largest->pid);
    ct_finding_add_number(f, "bytes", (double)largest->bytes);
}

static void compute_mode(const struct device_case *c, struct ct_findings *out)
{
    static const char *const modes[] = {"default", "exclusive thread", "prohibited",
                                        "exclusive process"};
    int64_t mode = c->s.compute_mode;
    if (mode <= 0)
        return;
    /* What the runtime answers when it cannot make its context. */
    uint64_t refused = c->p->calls.calls_failed_with[ct_cudaErrorDevicesUnavailable];
    char detail[384], why[160] = "";
    if (refused)
        snprintf(why, sizeof why,
                 "; it explains the %llu calls that failed with cudaErrorDevicesUnavailable "
                 "(busy or unavailable)",
                 (unsigned long long)refused);
    snprintf(detail, sizeof detail, "is in the %s compute mode: %s%s",
             mode < 4 ? modes[mode] : "unknown",
             mode == 2 ? "no process may make a context on it"
                       : "a second process (or context) cannot use it while this one does",
             why);
    struct ct_finding *f =
        add(out, c, CT_FINDING_COMPUTE_MODE, c->s.samples, "GPU %u (%s) %s", detail);
    if (refused)
        ct_finding_set_severity(f, CT_SEVERITY_ERROR);
    ct_finding_add_number(f, "compute_mode", (double)mode);
    ct_finding_add_number(f, "refused_calls", (double)refused);
}

static void ecc(const struct device_case *c, struct ct_findings *out)
{
    if (c->s.ecc_uncorrected <= 0 && c->s.ecc_corrected_added <= 0)
        return;
    char detail[256];
    snprintf(detail, sizeof detail,
             "counted %lld uncorrected ECC errors since the driver loaded and %lld corrected ones "
             "during the run",
             (long long)c->s.ecc_uncorrected, (long long)c->s.ecc_corrected_added);
    struct ct_finding *f =
        add(out, c, CT_FINDING_ECC_ERRORS, c->s.samples, "GPU %u (%s) %s", detail);
    ct_finding_add_number(f, "uncorrected", (double)c->s.ecc_uncorrected);
    ct_finding_add_number(f, "corrected_during_run", (double)c->s.ecc_corrected_added);
}

void ct_findings_gpu_health(const struct ct_process_report *p, struct ct_findings *out)
{
    for (int device = 0; device < CT_HEALTH_DEVICES; device++) {
        struct device_case c = {.p = p, .d = &p->gpu_health.devices[device]};
        if (!ct_process_gpu_health(p, device, &c.s))
            continue;
        c.interval_ns = c.d->interval_ms * MS;
        int explained = power_capped(&c, out);
        explained |= thermal(&c, out);
        if (!explained)
            clocks_low(&c, out);
        pcie(&c, out);
        shared(&c, out);
        compute_mode(&c, out);
        ecc(&c, out);
    }
}
