/*
 * The findings on how a process uses CUDA, from its usage figures
 * (usage.c) and the thresholds (thresholds.c): launch-overhead (the
 * host spends its time launching), sync-stall (it waits on the device),
 * pageable-memcpy (async copies that block because the host memory is not
 * pinned), small-copy-storm, memory-growth (the low points of live device
 * memory rise through the run), oom (an allocation failed) and slow-alloc.
 * Each names its numbers and the call sites that carry the cost. Shares are
 * of the CUDA part of the run: from the first CUDA call to the end, so that
 * a slow `import torch` does not dilute them. gpu-idle, and the kernel
 * times launch-overhead compares with the launch cost, need GPU timings:
 * the trace's GPU tracks (gpu.c), when it has them. In a bounded trace
 * whose middle was dropped, launch-overhead, sync-stall, pageable-memcpy,
 * small-copy-storm and slow-alloc count that middle too (the collector's
 * tallies, model/usage.c), and memory-growth and oom its live memory (the
 * gap's blocks); gpu-idle needs the run's GPU timeline, and says it was
 * made from the kept detail only.
 */
#include "viewer-export/findings/findings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer-export/output/human_units.h"
#include "viewer-export/output/report_output.h"
#include "viewer-export/findings/thresholds.h"
#include "viewer-export/model/steps.h"

#define PERIODS 8
#define SPANS_PER_PERIOD 4 /* the fewest a period's median is taken of */

/* The top sites of `t` as the finding's evidence: costliest first in the
 * measure the finding counts (`by`), each with its share of the total. */
static void add_sites(struct ct_finding *f, const struct ct_site_costs *t, enum ct_site_measure by)
{
    struct ct_site_cost *sorted = ct_site_costs_sorted(t, by);
    double total = 0;
    for (size_t i = 0; i < t->count; i++)
        total += ct_site_cost_of(&sorted[i], by);
    for (size_t i = 0; i < t->count && f->site_count < 3; i++) {
        const struct ct_site_cost *c = &sorted[i];
        f->sites[f->site_count++] = (struct ct_finding_site){
            c->site, c->calls, c->ns, c->bytes, total > 0 ? ct_site_cost_of(c, by) / total : 0};
    }
    free(sorted);
}

/* A finding made from the slices alone, in a trace that dropped some of
 * them: it says so, rather than pass for the whole run's. */
static void from_kept_detail(const struct ct_process_report *p, struct ct_finding *f)
{
    if (!p->run.gap.chunks)
        return;
    size_t len = strlen(f->message);
    snprintf(f->message + len, sizeof f->message - len, "%s",
             " (made from the kept detail only: the bounded trace dropped its middle)");
    ct_finding_add_number(f, "kept_detail_only", 1);
}

static const char *top_site(const struct ct_finding *f)
{
    return f->site_count ? f->sites[0].site : "no call site recorded";
}

static void launch_overhead(const struct ct_process_report *p, struct ct_findings *out)
{
    uint64_t launches = 0, ns = 0, wall = ct_cuda_part_ns(p);
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        const char *name = ct_function_name(fn);
        if (strstr(name, "Launch") && !strstr(name, "Graph")) {
            launches += p->calls.api[fn].calls;
            ns += p->calls.api[fn].total_ns;
        }
    }
    if (!wall || !launches)
        return;
    double share = (double)ns / (double)wall, rate = (double)launches / ((double)wall / 1e9);
    if (share < ct_thresholds.launch_share || rate < ct_thresholds.launch_rate)
        return;
    char a[32], b[32], c[32];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_LAUNCH_OVERHEAD, p->pid,
        "launch-bound: %.0f%% of the run (%s of %s) is spent inside %llu kernel launch calls, "
        "%.0f launches/s at %s each; fewer, larger kernels, a CUDA Graph or "
        "torch.compile(mode=\"reduce-overhead\") cut this",
        100 * share, ct_human_time(ns, a, sizeof a), ct_human_time(wall, b, sizeof b),
        (unsigned long long)launches, rate, ct_human_time(ns / launches, c, sizeof c));
    f->cost_ns = ns;
    const struct ct_gpu_work *gpu = &p->usage.gpu;
    if (gpu->kernel_runs) {
        /* With GPU timings: kernels that run shorter than they take to launch. */
        uint64_t mean_kernel = gpu->kernel_ns / gpu->kernel_runs;
        size_t len = strlen(f->message);
        snprintf(f->message + len, sizeof f->message - len,
                 "; the kernels run %s on average, %s their launch",
                 ct_human_time(mean_kernel, a, sizeof a),
                 mean_kernel < ns / launches ? "shorter than" : "longer than");
        ct_finding_add_number(f, "mean_kernel_ns", (double)mean_kernel);
    }
    ct_finding_add_number(f, "share_of_wall", share);
    ct_finding_add_number(f, "launches", (double)launches);
    ct_finding_add_number(f, "launches_per_s", rate);
    ct_finding_add_number(f, "mean_launch_ns", (double)ns / (double)launches);
    ct_finding_add_number(f, "sampled_launch_sites", (double)p->usage.launch_sites.calls_with_site);
    add_sites(f, &p->usage.launch_sites, CT_SITE_BY_CALLS);
}

static void sync_stall(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_usage *u = &p->usage;
    uint64_t wall = ct_cuda_part_ns(p);
    const struct ct_thread_wait *t = NULL; /* the thread that waited longest */
    for (size_t i = 0; i < u->thread_count; i++)
        if (!t || u->threads[i].sync_ns > t->sync_ns)
            t = &u->threads[i];
    if (!wall || !t || (double)t->sync_calls < ct_thresholds.sync_calls)
        return;
    double share = (double)t->sync_ns / (double)wall;
    /* A GPU busy nearly all the run is what the host waits for: that is a
     * GPU-bound loop, and syncing less would not make it faster. */
    struct ct_gpu_summary gpu;
    if (share < ct_thresholds.sync_share ||
        (ct_process_gpu_summary(p, &gpu) &&
         (double)gpu.busy_ns >= ct_thresholds.gpu_bound_share * (double)gpu.span_ns))
        return;
    struct ct_finding *f = ct_finding_add(out, CT_FINDING_SYNC_STALL, p->pid, "%s", "");
    add_sites(f, &p->usage.sync_sites, CT_SITE_BY_TIME);
    char a[32], b[32], c[32], who[48] = "the host";
    if (u->thread_count > 1)
        snprintf(who, sizeof who, "thread %lld", (long long)t->tid);
    snprintf(f->message, sizeof f->message,
             "%s waits on the GPU %.0f%% of the run (%s of %s) in %llu synchronising calls; "
             "top: %s (%s in %llu calls); sync less often (no .item()/.cpu() in the loop, "
             "no per-step synchronize)",
             who, 100 * share, ct_human_time(t->sync_ns, a, sizeof a),
             ct_human_time(wall, b, sizeof b), (unsigned long long)t->sync_calls, top_site(f),
             ct_human_time(f->site_count ? f->sites[0].ns : 0, c, sizeof c),
             (unsigned long long)(f->site_count ? f->sites[0].calls : 0));
    f->cost_ns = t->sync_ns;
    ct_finding_add_number(f, "share_of_wall", share);
    ct_finding_add_number(f, "tid", (double)t->tid);
    ct_finding_add_number(f, "sync_calls", (double)t->sync_calls);
    ct_finding_add_number(f, "sync_ns", (double)t->sync_ns);
}

static void pageable_memcpy(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_usage *u = &p->usage;
    if (!u->pageable_copies || (double)u->pageable_copies < ct_thresholds.pageable_copies)
        return;
    char a[32], b[32];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_PAGEABLE_MEMCPY, p->pid,
        "%llu async copies (%s) used pageable host memory, so each blocked the host (%s in all) "
        "and none overlapped compute; pin the host buffers (cudaMallocHost, cudaHostRegister, "
        "pin_memory=True)",
        (unsigned long long)u->pageable_copies,
        ct_human_bytes((double)u->pageable_bytes, a, sizeof a),
        ct_human_time(u->pageable_ns, b, sizeof b));
    f->cost_ns = u->pageable_ns;
    ct_finding_add_number(f, "copies", (double)u->pageable_copies);
    ct_finding_add_number(f, "bytes", (double)u->pageable_bytes);
    ct_finding_add_number(f, "ns", (double)u->pageable_ns);
    add_sites(f, &p->usage.pageable_sites, CT_SITE_BY_CALLS);
}

static void small_copy_storm(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_usage *u = &p->usage;
    uint64_t wall = ct_cuda_part_ns(p);
    if (!wall || (double)u->small_copies < ct_thresholds.small_copy_count)
        return;
    double rate = (double)u->small_copies / ((double)wall / 1e9);
    if (rate <= ct_thresholds.small_copy_rate)
        return;
    char a[32], b[32];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_SMALL_COPY_STORM, p->pid,
        "%llu host<->device copies under %s (%.0f a second, %s each on average)",
        (unsigned long long)u->small_copies,
        ct_human_bytes(ct_thresholds.small_copy_bytes, a, sizeof a), rate,
        ct_human_bytes((double)u->small_copy_bytes / (double)u->small_copies, b, sizeof b));
    add_sites(f, &p->usage.small_copy_sites, CT_SITE_BY_CALLS);
    size_t len = strlen(f->message);
    snprintf(f->message + len, sizeof f->message - len,
             "; top: %s (%llu copies); batch them into fewer, larger copies", top_site(f),
             (unsigned long long)(f->site_count ? f->sites[0].calls : 0));
    for (int i = 0; i < f->site_count; i++)
        f->cost_ns += f->sites[i].ns;
    ct_finding_add_number(f, "copies", (double)u->small_copies);
    ct_finding_add_number(f, "copies_per_s", rate);
    ct_finding_add_number(f, "bytes", (double)u->small_copy_bytes);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the span low points in period `k` of PERIODS; spans with
 * no allocation or free hold the level carried into them. */
static double period_level(const double *levels, int count, int k)
{
    int from = count * k / PERIODS, to = count * (k + 1) / PERIODS;
    double sorted[CT_TIMELINE_SPANS];
    int n = 0;
    for (int i = from; i < to; i++)
        sorted[n++] = levels[i];
    qsort(sorted, (size_t)n, sizeof sorted[0], by_value);
    return n ? sorted[n / 2] : 0;
}

/* Each span's low point of `low` into `levels`; spans with no allocation or
 * free hold the level carried into them. */
static void span_levels(const struct ct_timeline *low, double *levels)
{
    double carried = 0;
    for (size_t i = 0; i < low->used; i++)
        levels[i] = carried = low->spans[i].values ? low->spans[i].min : carried;
}

/* The levels of the PERIODS periods of `low` from period `from` on, and in
 * how many of the steps between them the level rose or held. */
static int rising_periods(const struct ct_timeline *low, int from, double *first, double *last)
{
    double levels[CT_TIMELINE_SPANS];
    int used = (int)low->used;
    span_levels(low, levels);
    if (used < PERIODS * SPANS_PER_PERIOD)
        return 0;
    int rises = 0;
    double previous = period_level(levels, used, from);
    *first = previous;
    for (int k = from + 1; k < PERIODS; k++) {
        double level = period_level(levels, used, k);
        rises += level >= previous;
        previous = level;
    }
    *last = previous;
    return rises;
}

/* Whether the low points of `low` grow: rising or holding in all but one
 * step from period to period (a saw-tooth whose every trough is higher than
 * the one before), by enough. By calls made, the first period is left out:
 * what a job makes up front (its model, a pool) can fill it, if only a few of
 * the run's calls, and a leak goes on rising after it. */
static int grows(const struct ct_process_report *p, const struct ct_timeline *low, double *first,
                 double *last)
{
    int from = low == &p->usage.low_points_by_call;
    if (rising_periods(low, from, first, last) < PERIODS - 2 - from)
        return 0;
    double growth = *last - *first;
    return growth >= ct_thresholds.growth_bytes &&
           growth >= ct_thresholds.growth_share * p->calls.peak_device_bytes;
}

/* When the rise began, and where the last period `grows` counts of `low`
 * ends, in time. The rise begins with the last span, from the first counted
 * period on, whose low point was still at or under that period's level
 * `first`, before the level first reached the last period's `last`: the
 * first period's end would do only if the rise waited for it (by time a
 * quick start leaves part of it there), and memory freed at exit comes after
 * the rise. The span's start, as blocks made in it may follow its low point.
 * `low` counts time, or calls made (mapped back through the calls' times). */
static void rise_in_time(const struct ct_usage *u, const struct ct_timeline *low, double first,
                         double last, uint64_t *began, uint64_t *last_end)
{
    int from = low == &u->low_points_by_call;
    double levels[CT_TIMELINE_SPANS];
    span_levels(low, levels);
    size_t at = low->used * (size_t)from / PERIODS;
    for (size_t i = at; i < low->used && levels[i] < last; i++)
        if (levels[i] <= first)
            at = i;
    uint64_t start = low->start_ns + low->span_ns * (uint64_t)at;
    uint64_t end = low->start_ns + low->span_ns * (uint64_t)low->used;
    if (from) {
        start = ct_timeline_time_of_values(&u->calls_by_time, (double)start);
        end = ct_timeline_time_of_values(&u->calls_by_time, (double)end);
    }
    *began = start;
    *last_end = end > start ? end : start;
}

static void memory_growth(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_usage *u = &p->usage;
    /* By time, and by calls made: a leak can be fast, and end long before
     * the run does. Where both grow, the one that rose more: a leak slowed
     * by a stall partway holds most of the run's time at the stall's level,
     * which the last period by time then reads as its own. */
    double first, last, by_call_first, by_call_last;
    const struct ct_timeline *low = &u->low_points;
    int by_time = grows(p, low, &first, &last);
    if (grows(p, &u->low_points_by_call, &by_call_first, &by_call_last) &&
        (!by_time || by_call_last - by_call_first > last - first)) {
        low = &u->low_points_by_call;
        first = by_call_first;
        last = by_call_last;
    } else if (!by_time)
        return;
    double growth = last - first;
    uint64_t grown_after, end;
    rise_in_time(u, low, first, last, &grown_after, &end);
    double rate = end > grown_after ? growth / ((double)(end - grown_after) / 1e9) : 0;
    /* The blocks still live that were made after the rise began: what
     * grew, not the model and buffers made up front. A leak keeps them; if
     * most of the growth was given back by the end, it was a working set
     * that rose and fell (threads that each hold a buffer while they run). */
    struct ct_site_costs live = {0};
    double kept = 0;
    for (size_t i = 0; i < u->block_count; i++)
        if (u->blocks[i].ts >= grown_after) {
            ct_site_costs_add_calls(&live, u->blocks[i].site, u->blocks[i].blocks, 0,
                                    u->blocks[i].bytes);
            kept += (double)u->blocks[i].bytes;
        }
    if (kept < growth / 2) {
        ct_site_costs_free(&live);
        return;
    }
    char a[32], b[32], c[32], d[32];
    struct ct_finding *f = ct_finding_add(out, CT_FINDING_MEMORY_GROWTH, p->pid, "%s", "");
    add_sites(f, &live, CT_SITE_BY_BYTES);
    ct_site_costs_free(&live);
    snprintf(f->message, sizeof f->message,
             "live device memory keeps rising: its low points went from %s to %s (%s/s); "
             "top allocation still live at the end: %s (%s in %llu blocks)",
             ct_human_bytes(first, a, sizeof a), ct_human_bytes(last, b, sizeof b),
             ct_human_bytes(rate, c, sizeof c), top_site(f),
             ct_human_bytes(f->site_count ? (double)f->sites[0].bytes : 0, d, sizeof d),
             (unsigned long long)(f->site_count ? f->sites[0].calls : 0));
    ct_finding_add_number(f, "low_first_bytes", first);
    ct_finding_add_number(f, "low_last_bytes", last);
    ct_finding_add_number(f, "bytes_per_s", rate);
    ct_finding_add_number(f, "peak_bytes", p->calls.peak_device_bytes);
    if (!u->gap_memory) /* a trace from before the gap carried live memory */
        from_kept_detail(p, f);
}

/* oom's own evidence: what each CUDA library held at the failure. */
struct oom_evidence {
    const struct ct_holders *holders;
};

static void oom_json(struct ct_json *j, const void *own)
{
    const struct oom_evidence *e = own;
    ct_holders_json(j, "by_library", e->holders, 0);
}

/* The live bytes at the failure by where they came from, as words at the
 * end of the message and as numbers in the evidence. */
static void oom_sources(const struct ct_process_report *p, struct ct_finding *f)
{
    const struct ct_usage *u = &p->usage;
    char a[32], b[32];
    uint64_t allocated = u->oom_live - u->oom_live_vmm;
    ct_finding_append(f, "%s from allocations, %s physical memory of the virtual-memory API",
                      ct_human_bytes((double)allocated, a, sizeof a),
                      ct_human_bytes((double)u->oom_live_vmm, b, sizeof b));
    ct_finding_add_number(f, "live_allocations_bytes", (double)allocated);
    ct_finding_add_number(f, "live_vmm_bytes", (double)u->oom_live_vmm);
    double reserved;
    if (ct_pool_reserve_at(&u->pools, u->oom_ts, &reserved)) {
        ct_finding_add_number(f, "pools_reserved_bytes", reserved);
        ct_finding_append(f, "; the pools held %s when last asked",
                          ct_human_bytes(reserved, a, sizeof a));
    }
    for (int i = 0; i < u->oom_holders.count; i++)
        if (u->oom_holders.items[i].live)
            ct_finding_append(f, "; %s held %s", u->oom_holders.items[i].library,
                              ct_human_bytes((double)u->oom_holders.items[i].live, a, sizeof a));
    struct oom_evidence *own = ct_finding_own(f, sizeof *own, oom_json);
    own->holders = &u->oom_holders;
}

static void oom(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_usage *u = &p->usage;
    if (!u->oom)
        return;
    char a[32], b[32], c[32];
    struct ct_finding *f =
        ct_finding_add(out, CT_FINDING_OOM, p->pid,
                       "an allocation of %s failed (out of memory) at %s with %s live (peak %s): ",
                       ct_human_bytes((double)u->oom_bytes, a, sizeof a),
                       u->oom_site ? u->oom_site : "an unknown site",
                       ct_human_bytes((double)u->oom_live, b, sizeof b),
                       ct_human_bytes(p->calls.peak_device_bytes, c, sizeof c));
    ct_finding_add_number(f, "requested_bytes", (double)u->oom_bytes);
    ct_finding_add_number(f, "live_bytes", (double)u->oom_live);
    ct_finding_add_number(f, "peak_bytes", p->calls.peak_device_bytes);
    oom_sources(p, f);
    if (u->oom_largest[0].bytes)
        ct_finding_append(f, "; largest live block from %s",
                          u->oom_largest[0].site ? u->oom_largest[0].site : "");
    f->where = u->oom_site;
    for (int i = 0; i < CT_USAGE_LARGEST && u->oom_largest[i].bytes; i++)
        f->sites[f->site_count++] = (struct ct_finding_site){
            u->oom_largest[i].site ? u->oom_largest[i].site : "", 1, 0, u->oom_largest[i].bytes,
            u->oom_live ? (double)u->oom_largest[i].bytes / (double)u->oom_live : 0};
}

static int by_duration(const void *a, const void *b)
{
    const struct ct_slow_call *x = a, *y = b;
    return (x->ns > y->ns) - (x->ns < y->ns);
}

/* The time of the call in the middle of `times` (sorted), each entry
 * counting for its calls. */
static uint64_t median_of(const struct ct_slow_call *times, size_t n, uint64_t calls)
{
    uint64_t before = 0;
    size_t i = 0;
    while (i + 1 < n && before + times[i].calls <= calls / 2)
        before += times[i++].calls;
    return times[i].ns;
}

/* In a bounded trace, the calls of the dropped middle come from the gap one
 * entry per site and duration bucket (an eighth of an octave) at their mean
 * time: the calls, the slow calls' total and their sites are exact where no
 * bucket straddles the threshold, the median and the worst call to within
 * their bucket (13%). */
static void slow_alloc(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_usage *u = &p->usage;
    if (!u->alloc_time_count)
        return;
    size_t n = u->alloc_time_count;
    struct ct_slow_call *times = malloc(n * sizeof *times);
    if (!times)
        abort();
    memcpy(times, u->alloc_times, n * sizeof *times);
    qsort(times, n, sizeof *times, by_duration);
    uint64_t calls = 0;
    for (size_t i = 0; i < n; i++)
        calls += times[i].calls;
    uint64_t median = median_of(times, n, calls), worst = times[n - 1].ns;
    double limit = ct_thresholds.slow_alloc_factor * (double)median;
    if (limit < ct_thresholds.slow_alloc_ns)
        limit = ct_thresholds.slow_alloc_ns;
    uint64_t slow = 0, slow_ns = 0;
    struct ct_site_costs sites = {0};
    for (size_t i = 0; i < n; i++) {
        if ((double)times[i].ns < limit)
            continue;
        slow += times[i].calls;
        slow_ns += times[i].total_ns;
        ct_site_costs_add_calls(&sites, times[i].site, times[i].calls, times[i].total_ns, 0);
    }
    free(times);
    if (!slow || (double)slow < ct_thresholds.slow_alloc_calls) {
        ct_site_costs_free(&sites);
        return;
    }
    char a[32], b[32], c[32], d[32];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_SLOW_ALLOC, p->pid,
        "%llu allocations or frees took over %s (worst %s, %s in all; the median is %s): allocate "
        "once and reuse (a caching allocator or a memory pool) rather than per step",
        (unsigned long long)slow, ct_human_time((uint64_t)limit, a, sizeof a),
        ct_human_time(worst, b, sizeof b), ct_human_time(slow_ns, c, sizeof c),
        ct_human_time(median, d, sizeof d));
    f->cost_ns = slow_ns;
    ct_finding_add_number(f, "slow_calls", (double)slow);
    ct_finding_add_number(f, "worst_ns", (double)worst);
    ct_finding_add_number(f, "median_ns", (double)median);
    ct_finding_add_number(f, "threshold_ns", limit);
    add_sites(f, &sites, CT_SITE_BY_TIME);
    ct_site_costs_free(&sites);
}

/* Where the launching thread's Python was during a gap, by its samples
 * there: ", mostly at FILE:LINE in FUNCTION (N of M samples)"; "" when
 * none was read in it. Its line, or 0, for the evidence. */
static int64_t gap_line(const struct ct_process_report *p, const struct ct_gpu_gap *g, char *text,
                        size_t size)
{
    const struct ct_host_thread *t = ct_host_launching_thread(&p->host);
    struct ct_host_site site;
    uint64_t within;
    *text = 0;
    if (!t || !ct_host_top_site_within(&t->python, g->start, g->start + g->ns, &site, &within))
        return 0;
    snprintf(text, size, ", the launching thread mostly at %s:%lld in %s (%llu of %llu samples)",
             site.file, (long long)site.line, site.function, (unsigned long long)site.samples,
             (unsigned long long)within);
    return site.line;
}

/* What the host did during a GPU gap: in blocking calls, in other CUDA
 * calls, or outside CUDA altogether (data loading, host compute, Python),
 * and at which Python line the launching thread was. */
static int64_t describe_gap(const struct ct_process_report *p, const struct ct_gpu_gap *g,
                            char *text, size_t size, double *outside)
{
    const struct ct_usage *u = &p->usage;
    double blocked = ct_timeline_sum(&u->host_blocked, g->start, g->start + g->ns);
    double in_cuda = ct_timeline_sum(&u->host_in_cuda, g->start, g->start + g->ns);
    *outside = g->ns ? 1 - in_cuda / (double)g->ns : 0;
    if (*outside < 0)
        *outside = 0; /* threads' calls overlap */
    char a[32], b[32], where[512];
    int64_t line = gap_line(p, g, where, sizeof where);
    snprintf(text, size, "%s at +%s, the host outside CUDA %.0f%% of it%s%s",
             ct_human_time(g->ns, a, sizeof a),
             ct_human_time(g->start - u->first_call_ns, b, sizeof b), 100 * *outside,
             blocked > (double)g->ns / 2 ? " (waiting in synchronising calls)"
             : *outside > 0.5            ? " (input pipeline or host compute?)"
                                         : " (making CUDA calls)",
             where);
    return line;
}

/* Start-up and shutdown said apart, and what the host did then: no gap of
 * the work's (the interpreter tearing down after the last kernel is not the
 * loop's input wait). `from` and `to` bound the time the finding judged:
 * the steps after warm-up where the run has steps, else the CUDA part; the
 * idle time before and after the GPU's work is said too. */
static void ends_apart(const struct ct_process_report *p, const struct ct_gpu_summary *judged,
                       uint64_t judged_from, uint64_t judged_to, int stepped, struct ct_finding *f)
{
    uint64_t from, to;
    ct_process_cuda_span(p, &from, &to);
    struct ct_gpu_summary run = *judged;
    if (stepped)
        ct_process_gpu_summary(p, &run);
    const struct ct_gpu_gap ends[2][2] = {
        {{from, run.before_first_ns}, {to - run.after_last_ns, run.after_last_ns}},
        {{from, judged_from - from}, {judged_to, to > judged_to ? to - judged_to : 0}}};
    static const char *const said[2][2] = {
        {"before the first GPU work", "after the last"},
        {"before the steps (start-up and warm-up)", "after the last step (shutdown)"}};
    static const char *const keys[2][2] = {
        {"before_first_host_outside_cuda", "after_last_host_outside_cuda"},
        {"before_steps_host_outside_cuda", "after_steps_host_outside_cuda"}};
    char text[1024];
    for (int i = 0; i < 2; i++) {
        double outside = 0;
        if (ends[stepped][i].ns) {
            describe_gap(p, &ends[stepped][i], text, sizeof text, &outside);
            ct_finding_append(f, "; %s: %s", said[stepped][i], text);
        }
        ct_finding_add_number(f, keys[stepped][i], outside);
    }
    ct_finding_add_number(f, "before_first_work_ns", (double)run.before_first_ns);
    ct_finding_add_number(f, "after_last_work_ns", (double)run.after_last_ns);
    if (stepped) {
        ct_finding_add_number(f, "before_steps_ns", (double)ends[1][0].ns);
        ct_finding_add_number(f, "after_steps_ns", (double)ends[1][1].ns);
    }
}

/* The time gpu-idle judges: the steps after warm-up, where the run has
 * steps (an idle GPU in start-up or shutdown is not the loop's) and, in a
 * bounded trace, they reach across its dropped middle; else the CUDA part;
 * 1 when it is the steps'. */
static int judged_span(const struct ct_process_report *p, uint64_t *from, uint64_t *to)
{
    *from = p->usage.first_call_ns;
    *to = ct_cupti_gpu_end(&p->cupti, p->run.end_ns);
    const struct ct_steps *steps = ct_steps_of(p);
    if (!steps)
        return 0;
    const struct ct_trace_gap *gap = &p->run.gap;
    int stepped = steps->count > steps->warmup;
    if (stepped) {
        const struct ct_step *first = &steps->all[steps->warmup],
                             *last = &steps->all[steps->count - 1];
        /* A bounded trace's kept steps that end before its dropped middle (or
         * begin after it) are not the run's: their GPU work may be the
         * middle's, which the gap carries only as coarse blocks. */
        stepped =
            !gap->to_ns || (first->start <= gap->from_ns && last->start + last->ns >= gap->to_ns);
        if (stepped) {
            *from = first->start;
            *to = last->start + last->ns;
        }
    }
    return stepped;
}

static void gpu_idle(const struct ct_process_report *p, struct ct_findings *out)
{
    struct ct_gpu_summary s;
    uint64_t from, to;
    if (!ct_gpu_seen(&p->usage.gpu))
        return;
    int stepped = judged_span(p, &from, &to);
    if (to <= from)
        return;
    ct_gpu_summarise(&p->usage.gpu, from, to, &s);
    if (!s.span_ns)
        return;
    uint64_t wall = s.span_ns;
    double idle = 1 - (double)s.busy_ns / (double)wall;
    if (idle < ct_thresholds.gpu_idle_share)
        return;
    char a[32], b[32], gap[1024];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_GPU_IDLE, p->pid, "the GPU is idle %.0f%% of %s (busy %s of %s)",
        100 * idle, stepped ? "the steps" : "the run", ct_human_time(s.busy_ns, a, sizeof a),
        ct_human_time(wall, b, sizeof b));
    f->cost_ns = wall - s.busy_ns;
    ct_finding_add_number(f, "idle_share", idle);
    ct_finding_add_number(f, "busy_ns", (double)s.busy_ns);
    ct_finding_add_number(f, "in_steps", stepped);
    static const char *const keys[CT_GPU_GAPS][4] = {
        {"gap_1_ns", "gap_1_start_ns", "gap_1_host_outside_cuda", "gap_1_python_line"},
        {"gap_2_ns", "gap_2_start_ns", "gap_2_host_outside_cuda", "gap_2_python_line"},
        {"gap_3_ns", "gap_3_start_ns", "gap_3_host_outside_cuda", "gap_3_python_line"}};
    for (int i = 0; i < CT_GPU_GAPS && s.gaps[i].ns; i++) {
        double outside;
        int64_t line = describe_gap(p, &s.gaps[i], gap, sizeof gap, &outside);
        size_t len = strlen(f->message);
        snprintf(f->message + len, sizeof f->message - len, "%s%s",
                 i ? "; " : "; longest gaps: ", gap);
        ct_finding_add_number(f, keys[i][0], (double)s.gaps[i].ns);
        ct_finding_add_number(f, keys[i][1], (double)s.gaps[i].start);
        ct_finding_add_number(f, keys[i][2], outside);
        if (line)
            ct_finding_add_number(f, keys[i][3], (double)line);
    }
    ends_apart(p, &s, from, to, stepped, f);
    if (!p->usage.gpu.gap_carried)
        from_kept_detail(p, f);
}

void ct_findings_usage(const struct ct_process_report *p, struct ct_findings *out)
{
    oom(p, out);
    launch_overhead(p, out);
    sync_stall(p, out);
    pageable_memcpy(p, out);
    small_copy_storm(p, out);
    memory_growth(p, out);
    slow_alloc(p, out);
    gpu_idle(p, out);
}
