/*
 * The step findings, over the steps named, marked or found (model/steps.c),
 * after the warm-up and with at least MIN_JUDGED_STEPS of them, each
 * saying which part of a step grew: the GPU's busy time, the time in
 * synchronising calls, in other CUDA calls, or outside CUDA calls (host
 * work, an input wait).
 * slow-steps: steps over `slow_step_factor` times the median, by number,
 * and what grew in them against the median step.
 * periodic-slowdown: three or more slow steps whose starts are as far
 * apart each time, within `step_period_spread` of their median spacing:
 * something outside the loop on a timer (a monitoring probe running
 * nvidia-smi every minute, a checkpoint, a logger).
 * step-drift: the median of the last tenth of the steps over the first
 * tenth's by `step_drift` and 1 ms, with what grew.
 * A steady loop is the twin of all three.
 */
#include <stdlib.h>

#include "viewer-export/findings/findings.h"
#include "viewer-export/findings/thresholds.h"
#include "viewer-export/model/steps.h"
#include "viewer-export/output/human_units.h"

#define MS 1000000.0
#define MIN_JUDGED_STEPS 8 /* after warm-up: fewer say nothing of a slow one */

enum part { GPU_BUSY, SYNC, OTHER_CUDA, OUTSIDE_CUDA, PARTS };

static const char *const part_names[PARTS] = {
    "the GPU's busy time", "time in synchronising calls", "time in other CUDA calls",
    "time outside CUDA calls (host work or an input wait)"};

static void parts_of(const struct ct_step *s, double *out)
{
    out[GPU_BUSY] += (double)s->gpu_busy_ns;
    out[SYNC] += (double)s->sync_ns;
    out[OTHER_CUDA] += (double)(s->in_cuda_ns - (s->sync_ns < s->in_cuda_ns ? s->sync_ns : 0));
    out[OUTSIDE_CUDA] += (double)(s->ns > s->in_cuda_ns ? s->ns - s->in_cuda_ns : 0);
}

static void mean_of(const struct ct_step *all, const size_t *steps, size_t n, double *out)
{
    for (int k = 0; k < PARTS; k++)
        out[k] = 0;
    for (size_t i = 0; i < n; i++)
        parts_of(&all[steps[i] - 1], out);
    for (int k = 0; k < PARTS; k++)
        out[k] /= (double)(n ? n : 1);
}

/* Which part grew most on average from the steps `base` to the steps
 * `grown` (numbers), and by how much a step. */
static enum part what_grew(const struct ct_step *all, const size_t *base, size_t nb,
                           const size_t *grown, size_t ng, double *by)
{
    double from[PARTS], to[PARTS];
    mean_of(all, base, nb, from);
    mean_of(all, grown, ng, to);
    enum part most = OUTSIDE_CUDA;
    for (int k = 0; k < PARTS; k++)
        if (to[k] - from[k] > to[most] - from[most])
            most = (enum part)k;
    *by = to[most] - from[most];
    return most;
}

static int by_number(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Whether the slow steps say something: enough steps to judge, and time
 * lost over the median that matters (a few scheduler hiccups of a fast
 * loop lose milliseconds). */
static int slow_steps_matter(const struct ct_steps *s, size_t at_least)
{
    uint64_t lost = 0;
    for (size_t i = 0; i < s->slow_count; i++)
        lost += s->slow[i].ns - s->median_ns;
    return s->slow_count >= at_least && s->count - s->warmup >= MIN_JUDGED_STEPS &&
           (double)lost >= ct_thresholds.slow_step_lost_ns;
}

static void slow(const struct ct_process_report *p, const struct ct_steps *s,
                 struct ct_findings *out)
{
    if (!slow_steps_matter(s, 1))
        return;
    size_t numbers[CT_SLOW_STEPS], median = s->median_step.step;
    for (size_t i = 0; i < s->slow_count; i++)
        numbers[i] = s->slow[i].step;
    qsort(numbers, s->slow_count, sizeof *numbers, by_number);
    double by;
    enum part part = what_grew(s->all, &median, 1, numbers, s->slow_count, &by);
    char a[32], b[32], c[32];
    struct ct_finding *f = ct_finding_add(
        out, "slow-steps", CT_SEVERITY_WARNING, p->pid,
        "%zu of %zu steps took over %.1f times the median step (%s), the worst step %zu (%s): "
        "%s grew most in them, by %s a step",
        s->slow_count, s->count + s->in_gap, ct_thresholds.slow_step_factor,
        ct_human_time(s->median_ns, a, sizeof a), s->worst.step,
        ct_human_time(s->worst.ns, b, sizeof b), part_names[part],
        ct_human_time((uint64_t)(by > 0 ? by : 0), c, sizeof c));
    ct_finding_append(f, "; slow steps:");
    for (size_t i = 0; i < s->slow_count; i++)
        ct_finding_append(f, "%s %zu", i ? "," : "", numbers[i]);
    f->cost_ns = 0;
    for (size_t i = 0; i < s->slow_count; i++)
        f->cost_ns += s->slow[i].ns - s->median_ns;
    ct_finding_add_number(f, "slow_steps", (double)s->slow_count);
    ct_finding_add_number(f, "median_ns", (double)s->median_ns);
    ct_finding_add_number(f, "worst_step", (double)s->worst.step);
    ct_finding_add_number(f, "worst_ns", (double)s->worst.ns);
    ct_finding_add_number(f, "grew_part", (double)part);
    ct_finding_add_number(f, "grew_ns", by);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void periodic(const struct ct_process_report *p, const struct ct_steps *s,
                     struct ct_findings *out)
{
    if (!slow_steps_matter(s, 3))
        return;
    size_t numbers[CT_SLOW_STEPS], n = s->slow_count;
    double spacing[CT_SLOW_STEPS];
    for (size_t i = 0; i < n; i++)
        numbers[i] = s->slow[i].step;
    qsort(numbers, n, sizeof *numbers, by_number);
    for (size_t i = 1; i < n; i++)
        spacing[i - 1] = (double)(s->all[numbers[i] - 1].start - s->all[numbers[i - 1] - 1].start);
    qsort(spacing, n - 1, sizeof *spacing, by_value);
    double period = spacing[(n - 2) / 2];
    if (period <= 0 || spacing[0] < period * (1 - ct_thresholds.step_period_spread) ||
        spacing[n - 2] > period * (1 + ct_thresholds.step_period_spread))
        return;
    char a[32];
    struct ct_finding *f = ct_finding_add(
        out, "periodic-slowdown", CT_SEVERITY_WARNING, p->pid,
        "slow steps recur every %s of wall time (%zu of them, steps %zu to %zu): something "
        "outside the loop runs on a timer (a monitoring probe such as nvidia-smi, a checkpoint, "
        "a logger)",
        ct_human_time((uint64_t)period, a, sizeof a), n, numbers[0], numbers[n - 1]);
    ct_finding_add_number(f, "period_ns", period);
    ct_finding_add_number(f, "slow_steps", (double)n);
}

static int by_time(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median time of steps from..to (numbers), and their steps' numbers in `steps`. */
static uint64_t median_of(const struct ct_steps *s, size_t from, size_t to, size_t *steps)
{
    size_t n = to - from + 1;
    uint64_t *t = malloc(n * sizeof *t);
    if (!t)
        abort();
    for (size_t i = 0; i < n; i++) {
        steps[i] = from + i;
        t[i] = s->all[from + i - 1].ns;
    }
    qsort(t, n, sizeof *t, by_time);
    uint64_t median = t[(n - 1) / 2];
    free(t);
    return median;
}

static void drift(const struct ct_process_report *p, const struct ct_steps *s,
                  struct ct_findings *out)
{
    size_t m = s->count - s->warmup;
    if (m < 20)
        return;
    size_t tenth = m / 10, *first = malloc(tenth * sizeof *first),
           *last = malloc(tenth * sizeof *last);
    if (!first || !last)
        abort();
    uint64_t early = median_of(s, s->warmup + 1, s->warmup + tenth, first);
    uint64_t late = median_of(s, s->count - tenth + 1, s->count, last);
    if ((double)late > (double)early * (1 + ct_thresholds.step_drift) && late - early > MS) {
        double by;
        enum part part = what_grew(s->all, first, tenth, last, tenth, &by);
        char a[32], b[32], c[32];
        struct ct_finding *f = ct_finding_add(
            out, "step-drift", CT_SEVERITY_WARNING, p->pid,
            "steps got slower over the run: the median step of the last tenth took %s, of the "
            "first %s; %s grew most, by %s a step",
            ct_human_time(late, a, sizeof a), ct_human_time(early, b, sizeof b), part_names[part],
            ct_human_time((uint64_t)(by > 0 ? by : 0), c, sizeof c));
        ct_finding_add_number(f, "first_tenth_median_ns", (double)early);
        ct_finding_add_number(f, "last_tenth_median_ns", (double)late);
        ct_finding_add_number(f, "grew_part", (double)part);
        ct_finding_add_number(f, "grew_ns", by);
    }
    free(first);
    free(last);
}

void ct_findings_steps(const struct ct_process_report *p, struct ct_findings *out)
{
    struct ct_steps s;
    if (!ct_steps_find(p, &s))
        return;
    slow(p, &s, out);
    periodic(p, &s, out);
    drift(p, &s, out);
    ct_steps_free(&s);
}
