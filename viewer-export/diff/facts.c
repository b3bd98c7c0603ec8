/*
 * Writes a process's facts for `cudatrace diff` into its summary: the
 * median, median absolute deviation and mean, over the steps after warm-up, of
 * the step time, of each part of a step (the GPU's busy time, time in
 * synchronising calls, in other CUDA calls, and outside CUDA calls), of
 * the live device memory at each step's end and, with the host sampler, of
 * the time the steps' thread waited for a CPU and the step without it (what
 * another load on the machine adds), and of its time outside CUDA calls on
 * a CPU (host work) and asleep (an input wait); the kernels by GPU time and
 * the lines whose calls held the host up, each list with whether it is
 * whole. A diff judges a change against the spread the steps show, so the
 * spread travels with the summary, and of the step time a bounded sample
 * of the steps' values for a rank test, not every step (a run may have a
 * million).
 */
#include "viewer-export/diff/facts.h"

#include <stdlib.h>

#include "viewer-export/job/aggregate.h"
#include "viewer-export/model/steps.h"

enum step_part {
    PART_STEP,
    PART_GPU_BUSY,
    PART_SYNC,
    PART_OTHER_CUDA,
    PART_OUTSIDE,
    PART_LIVE,
    /* With the host sampler: the thread on a run queue, waiting for a CPU;
     * the step less that; outside CUDA calls on a CPU (or waiting for
     * one), and asleep. */
    PART_CPU_WAIT,
    PART_LESS_WAIT,
    PART_OUTSIDE_RUNNING,
    PART_OUTSIDE_WAITING,
    PARTS
};

static const char *const part_keys[PARTS] = {
    "step_ns",           "gpu_busy_ns",           "sync_ns",
    "other_cuda_ns",     "outside_cuda_ns",       "end_live_bytes",
    "cpu_wait_ns",       "step_less_cpu_wait_ns", "outside_running_ns",
    "outside_waiting_ns"};

/* What the parts are read from: the process, its steps, and whether the
 * host sampler's counters cover the steps' thread (its parts of a step are
 * then the steps' own, model/steps.h). */
struct source {
    const struct ct_process_report *p;
    const struct ct_steps *steps;
    int sampled;
};

/* Step `i`'s part `k`. */
static double part_of(const struct source *from, size_t i, enum step_part k)
{
    const struct ct_step *s = &from->steps->all[i];
    uint64_t in_cuda = s->in_cuda_ns < s->ns ? s->in_cuda_ns : s->ns;
    uint64_t sync = s->sync_ns < in_cuda ? s->sync_ns : in_cuda;
    switch (k) {
    case PART_GPU_BUSY:
        return (double)s->gpu_busy_ns;
    case PART_SYNC:
        return (double)sync;
    case PART_OTHER_CUDA:
        return (double)(in_cuda - sync);
    case PART_OUTSIDE:
        return (double)(s->ns - in_cuda);
    case PART_LIVE:
        return (double)s->memory_end_bytes;
    case PART_CPU_WAIT:
        return (double)s->cpu_wait_ns;
    case PART_LESS_WAIT:
        return (double)s->ns - (double)s->cpu_wait_ns;
    case PART_OUTSIDE_RUNNING:
        return (double)s->host_running_ns;
    case PART_OUTSIDE_WAITING:
        return (double)s->host_waiting_ns;
    default:
        return (double)s->ns;
    }
}

/* Whether the host sampler's counters cover the thread that made the
 * steps. */
static int sampled(const struct ct_process_report *p, const struct ct_steps *s)
{
    const struct ct_step *first = &s->all[0], *last = &s->all[s->count - 1];
    for (size_t i = 0; i < p->host.thread_count; i++) {
        const struct ct_host_thread *t = &p->host.threads[i];
        if (t->tid == s->tid &&
            ct_timeline_sum(&t->measure[CT_HOST_COUNTED], first->start, last->start + last->ns) > 0)
            return 1;
    }
    return 0;
}

/* Up to CT_DIFF_STEP_VALUES of the steps' values after warm-up, evenly
 * through the run: what a rank test compares. */
static void values_json(struct ct_json *j, const struct source *from, enum step_part k)
{
    const struct ct_steps *s = from->steps;
    size_t n = s->count - s->warmup, kept = n < CT_DIFF_STEP_VALUES ? n : CT_DIFF_STEP_VALUES;
    ct_json_begin_array(j, "values");
    for (size_t i = 0; i < kept; i++)
        ct_json_double(j, NULL, part_of(from, s->warmup + i * n / kept, k));
    ct_json_end_array(j);
}

/* {"median", "mad", "mean"} of one part over the steps after warm-up, and
 * of the step's own figures their values. */
static void part_json(struct ct_json *j, const struct source *from, enum step_part k,
                      double *scratch)
{
    const struct ct_steps *s = from->steps;
    size_t n = 0;
    double sum = 0;
    for (size_t i = s->warmup; i < s->count; i++)
        sum += scratch[n++] = part_of(from, i, k);
    struct ct_spread value, deviation;
    ct_spread_of(scratch, n, &value);
    for (size_t i = 0; i < n; i++)
        scratch[i] =
            scratch[i] > value.median ? scratch[i] - value.median : value.median - scratch[i];
    ct_spread_of(scratch, n, &deviation);
    ct_json_begin_object(j, part_keys[k]);
    ct_json_double(j, "median", value.median);
    ct_json_double(j, "mad", deviation.median);
    ct_json_double(j, "mean", sum / (double)n);
    if (k == PART_STEP)
        values_json(j, from, k);
    ct_json_end_object(j);
}

static void steps_json(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_steps *s = ct_steps_of(p);
    if (!s)
        return;
    double *scratch = malloc((s->count + 1) * sizeof *scratch);
    if (!scratch)
        abort();
    struct source from = {p, s, sampled(p, s)};
    ct_json_begin_object(j, "steps");
    for (enum step_part k = PART_STEP; k < (from.sampled ? PARTS : PART_CPU_WAIT); k++)
        part_json(j, &from, k, scratch);
    ct_json_end_object(j);
    free(scratch);
}

static void kernels_json(struct ct_json *j, const struct ct_gpu_work *g)
{
    struct ct_kernel_cost *sorted = ct_gpu_kernels_by_time(g);
    ct_json_begin_array(j, "kernels");
    for (size_t i = 0; i < g->kernel_count && i < CT_DIFF_KERNELS; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "name", sorted[i].name);
        ct_json_uint(j, "count", sorted[i].count);
        ct_json_uint(j, "total_ns", sorted[i].ns);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_uint(j, "kernels_left_out",
                 g->kernel_count > CT_DIFF_KERNELS ? g->kernel_count - CT_DIFF_KERNELS : 0);
    free(sorted);
}

static void blocking_sites_json(struct ct_json *j, const struct ct_site_costs *sites)
{
    struct ct_site_cost *sorted = ct_site_costs_sorted(sites, CT_SITE_BY_CALLS);
    ct_json_begin_array(j, "blocking_sites");
    for (size_t i = 0; i < sites->count && i < CT_DIFF_BLOCKING_SITES; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "site", sorted[i].site);
        ct_json_uint(j, "calls", sorted[i].calls);
        ct_json_uint(j, "ns", sorted[i].ns);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_uint(j, "blocking_sites_left_out",
                 sites->count > CT_DIFF_BLOCKING_SITES ? sites->count - CT_DIFF_BLOCKING_SITES : 0);
    free(sorted);
}

void ct_diff_facts_json(struct ct_json *j, const char *key, const struct ct_process_report *p)
{
    ct_json_begin_object(j, key);
    ct_json_uint(j, "cuda_part_ns", ct_cuda_part_ns(p));
    steps_json(j, p);
    if (ct_gpu_seen(&p->usage.gpu))
        kernels_json(j, &p->usage.gpu);
    blocking_sites_json(j, &p->usage.sync_sites);
    ct_json_end_object(j);
}
