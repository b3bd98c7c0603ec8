/*
 * The step findings, over the steps named, marked or found (model/steps.c),
 * after the warm-up and with at least MIN_JUDGED_STEPS of them, each
 * saying which part of a step grew: the GPU's busy time, the time in
 * synchronising calls, in other CUDA calls, or outside CUDA calls (host
 * work, an input wait).
 * slow-steps: steps over `slow_step_factor` times the median, by number,
 * what grew in them against the median step and, from the host sampler's
 * Python stacks, the line the extra time went to.
 * periodic-slowdown: three or more slow steps whose starts are as far
 * apart each time, within `step_period_spread` of their median spacing:
 * something outside the loop on a timer (a monitoring probe running
 * nvidia-smi every minute, a checkpoint, a logger); and where NVML ran,
 * what else happened on the GPU in them against the other steps: another
 * process, a lower clock, a busier GPU.
 * step-drift: the median of the last tenth of the steps over the first
 * tenth's by `step_drift` and 1 ms, with what grew.
 * A steady loop is the twin of all three.
 */
#include <stdio.h>
#include <stdlib.h>

#include "viewer-export/findings/findings.h"
#include "viewer-export/findings/thresholds.h"
#include "viewer-export/model/steps.h"
#include "viewer-export/output/human_units.h"

#define MS 1000000.0
#define MIN_JUDGED_STEPS 8 /* after warm-up: fewer say nothing of a slow one */
/* Percentage points NVML's utilisation must be higher by in the slow steps to
 * be said: a steady loop's wanders by a few. */
#define BUSIER_POINTS 20

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

/* The steps after the warm-up, split: the slow ones the steps list (the
 * CT_SLOW_STEPS slowest) by number, in order, and how many others there
 * are. */
struct split {
    const struct ct_steps *s;
    size_t slow[CT_SLOW_STEPS], slow_count, others;
};

static void split_steps(const struct ct_steps *s, struct split *out)
{
    out->s = s;
    out->slow_count = s->slow_count;
    for (size_t i = 0; i < s->slow_count; i++)
        out->slow[i] = s->slow[i].step;
    qsort(out->slow, out->slow_count, sizeof *out->slow, by_number);
    out->others = s->count - s->warmup - s->slow_count;
}

enum kind { NO_STEP, SLOW_STEP, OTHER_STEP };

static enum kind kind_of(const struct split *sp, size_t step)
{
    if (step <= sp->s->warmup)
        return NO_STEP;
    for (size_t i = 0; i < sp->slow_count; i++)
        if (sp->slow[i] == step)
            return SLOW_STEP;
    return OTHER_STEP;
}

/* Which of the split's steps time `ts` fell in (none: the warm-up, before
 * the first step or after the last). */
static enum kind kind_at(const struct split *sp, uint64_t ts)
{
    const struct ct_steps *s = sp->s;
    size_t after = 0, to = s->count; /* the first step that starts after ts */
    while (after < to) {
        size_t mid = after + (to - after) / 2;
        if (s->all[mid].start <= ts)
            after = mid + 1;
        else
            to = mid;
    }
    if (!after || ts >= s->all[after - 1].start + s->all[after - 1].ns)
        return NO_STEP;
    return kind_of(sp, after);
}

static int in_slow(const void *sp, uint64_t ts)
{
    return kind_at(sp, ts) == SLOW_STEP;
}

static int in_other(const void *sp, uint64_t ts)
{
    return kind_at(sp, ts) == OTHER_STEP;
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

/* Where the slow steps' extra time went by `py`'s samples: the site whose
 * samples in them most exceed what the other steps had there, step for
 * step, in *out with its samples in the slow steps (out->samples); all of
 * those in *in_slow, and the site's a step in the others in *per_other. 0
 * when no site's exceed them. */
static int grown_site(const struct ct_host_python *py, const struct split *sp,
                      struct ct_host_site *out, uint64_t *in_slow, double *per_other)
{
    uint64_t slow[CT_HOST_SITES] = {0}, other[CT_HOST_SITES] = {0};
    *in_slow = 0;
    for (size_t i = 0; i < py->stamp_count; i++) {
        enum kind kind = kind_at(sp, py->stamps[i].ts);
        slow[py->stamps[i].site] += kind == SLOW_STEP;
        other[py->stamps[i].site] += kind == OTHER_STEP;
        *in_slow += kind == SLOW_STEP;
    }
    int best = -1;
    double most = 0; /* in samples times the other steps' count */
    for (int i = 0; i < py->count; i++) {
        double extra =
            (double)slow[i] * (double)sp->others - (double)other[i] * (double)sp->slow_count;
        if (extra > most) {
            most = extra;
            best = i;
        }
    }
    if (best < 0)
        return 0;
    *out = py->sites[best];
    out->samples = slow[best];
    *per_other = (double)other[best] / (double)sp->others;
    return 1;
}

/* ", mostly at FILE:LINE in FUNCTION (...)": the line the slow steps' extra
 * time went to, by the Python samples of the thread that ran the steps (the
 * launching thread where that is not known): the program's own line, as
 * input-bound's loop line (where `for batch in loader` stands while the
 * loader waits in threading.py, whose line would say nothing); "" without
 * such samples in them (no Python, sampling off). Its line, or 0. */
static int64_t grown_line(const struct ct_process_report *p, const struct split *sp, char *text,
                          size_t size, struct ct_host_site *site, uint64_t *in_slow,
                          double *per_other)
{
    const struct ct_host_thread *launching = ct_host_launching_thread(&p->host);
    int64_t tid = sp->s->tid ? sp->s->tid : launching ? launching->tid : 0;
    const struct ct_host_python *py = tid ? ct_host_python_since(&p->host, tid, 0) : NULL;
    *text = 0;
    if (!py || !py->program_lines || !grown_site(py->program_lines, sp, site, in_slow, per_other))
        return 0;
    snprintf(text, size,
             ", mostly at %s:%lld in %s (the loop's thread there in %llu of its %llu samples in "
             "them, %.1f a step in the other steps)",
             site->file, (long long)site->line, site->function, (unsigned long long)site->samples,
             (unsigned long long)*in_slow, *per_other);
    return site->line;
}

static void slow(const struct ct_process_report *p, const struct split *sp, struct ct_findings *out)
{
    const struct ct_steps *s = sp->s;
    if (!slow_steps_matter(s, 1))
        return;
    size_t median = s->median_step.step;
    double by;
    enum part part = what_grew(s->all, &median, 1, sp->slow, sp->slow_count, &by);
    char a[32], b[32], c[32], where[1024];
    struct ct_host_site site;
    uint64_t in_slow;
    double per_other;
    int64_t line = grown_line(p, sp, where, sizeof where, &site, &in_slow, &per_other);
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_SLOW_STEPS, p->pid,
        "%zu of %zu steps took over %.1f times the median step (%s), the worst step %zu (%s): "
        "%s grew most in them, by %s a step%s",
        s->slow_count, s->count + s->in_gap, ct_thresholds.slow_step_factor,
        ct_human_time(s->median_ns, a, sizeof a), s->worst.step,
        ct_human_time(s->worst.ns, b, sizeof b), part_names[part],
        ct_human_time((uint64_t)(by > 0 ? by : 0), c, sizeof c), where);
    ct_finding_append(f, "; slow steps:");
    for (size_t i = 0; i < sp->slow_count; i++)
        ct_finding_append(f, "%s %zu", i ? "," : "", sp->slow[i]);
    f->cost_ns = 0;
    for (size_t i = 0; i < s->slow_count; i++)
        f->cost_ns += s->slow[i].ns - s->median_ns;
    ct_finding_add_number(f, "slow_steps", (double)s->slow_count);
    ct_finding_add_number(f, "median_ns", (double)s->median_ns);
    ct_finding_add_number(f, "worst_step", (double)s->worst.step);
    ct_finding_add_number(f, "worst_ns", (double)s->worst.ns);
    ct_finding_add_number(f, "grew_part", (double)part);
    ct_finding_add_number(f, "grew_ns", by);
    if (line) {
        ct_finding_add_number(f, "python_line", (double)line);
        ct_finding_add_number(f, "python_line_samples", (double)site.samples);
        ct_finding_add_number(f, "python_samples", (double)in_slow);
        ct_finding_add_number(f, "python_line_other_per_step", per_other);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether NVML saw process `q` on its device at some time in step `st`. */
static int present_in(const struct ct_health_process *q, const struct ct_step *st)
{
    return q->first_ns < st->start + st->ns && (!q->last_ns || q->last_ns > st->start);
}

/* The other processes NVML saw on device `d` in the slow steps, said when
 * one was there in a larger share of them than of the other steps (a
 * neighbour there all along explains none of them); with the evidence when
 * `evidence`. */
static void processes_then(const struct ct_process_report *p, const struct split *sp,
                           const struct ct_health_device *d, int evidence, struct ct_finding *f)
{
    const struct ct_steps *s = sp->s;
    size_t slow_with = 0, other_with = 0, slow_steps_of[CT_HEALTH_PROCESSES] = {0};
    for (size_t n = s->warmup + 1; n <= s->count; n++) {
        enum kind kind = kind_of(sp, n);
        int any = 0;
        for (int i = 0; i < d->process_count; i++)
            if (d->processes[i].pid != (uint32_t)p->pid &&
                present_in(&d->processes[i], &s->all[n - 1])) {
                any = 1;
                slow_steps_of[i] += kind == SLOW_STEP;
            }
        slow_with += any && kind == SLOW_STEP;
        other_with += any && kind == OTHER_STEP;
    }
    if (!slow_with || slow_with * sp->others <= other_with * sp->slow_count)
        return;
    ct_finding_append(f,
                      "; another process was on GPU %u in %zu of the %zu slow steps and %zu of "
                      "the %zu others:",
                      d->ordinal, slow_with, sp->slow_count, other_with, sp->others);
    int most = -1;
    for (int i = 0, said = 0; i < d->process_count; i++) {
        const struct ct_health_process *q = &d->processes[i];
        if (!slow_steps_of[i])
            continue;
        ct_finding_append(f, "%s pid %u%s%s%s", said++ ? "," : "", q->pid, *q->name ? " (" : "",
                          q->name, *q->name ? ")" : "");
        most = most < 0 || slow_steps_of[i] > slow_steps_of[most] ? i : most;
    }
    if (!evidence)
        return;
    ct_finding_add_number(f, "process_slow_steps", (double)slow_with);
    ct_finding_add_number(f, "process_other_steps", (double)other_with);
    ct_finding_add_number(f, "pid", d->processes[most].pid);
}

/* Device `d`'s SM clock while busy and its utilisation in the slow steps
 * against the other steps, from NVML's samples taken in them: said when
 * the clock was lower by `clocks_low_ratio` or the GPU busier by
 * BUSIER_POINTS; with the evidence when `evidence`. */
static void clocks_then(const struct split *sp, const struct ct_health_device *d, int evidence,
                        struct ct_finding *f)
{
    struct ct_health_stat clock[2] = {ct_gpu_health_stat_when(d, CT_GPU_SM_CLOCK, 1, in_slow, sp),
                                      ct_gpu_health_stat_when(d, CT_GPU_SM_CLOCK, 1, in_other, sp)};
    struct ct_health_stat used[2] = {
        ct_gpu_health_stat_when(d, CT_GPU_UTILIZATION, 0, in_slow, sp),
        ct_gpu_health_stat_when(d, CT_GPU_UTILIZATION, 0, in_other, sp)};
    if (clock[0].samples && clock[1].samples) {
        if ((double)clock[0].median < ct_thresholds.clocks_low_ratio * (double)clock[1].median)
            ct_finding_append(f,
                              "; GPU %u's SM clock was lower in them while busy: median %lld MHz "
                              "against %lld MHz in the other steps",
                              d->ordinal, (long long)clock[0].median, (long long)clock[1].median);
        if (evidence) {
            ct_finding_add_number(f, "slow_sm_clock_mhz", (double)clock[0].median);
            ct_finding_add_number(f, "other_sm_clock_mhz", (double)clock[1].median);
        }
    }
    if (used[0].samples && used[1].samples) {
        if (used[0].median >= used[1].median + BUSIER_POINTS)
            ct_finding_append(f,
                              "; GPU %u was busier in them: utilisation median %lld%% against "
                              "%lld%% in the other steps",
                              d->ordinal, (long long)used[0].median, (long long)used[1].median);
        if (evidence) {
            ct_finding_add_number(f, "slow_utilization_percent", (double)used[0].median);
            ct_finding_add_number(f, "other_utilization_percent", (double)used[1].median);
        }
    }
}

/* What else happened on the GPUs in the slow steps, where NVML ran: each
 * device's message, the first one's evidence (its ordinal as
 * `nvml_device`). */
static void gpu_then(const struct ct_process_report *p, const struct split *sp,
                     struct ct_finding *f)
{
    int evidence = 1;
    for (int i = 0; i < CT_HEALTH_DEVICES; i++) {
        const struct ct_health_device *d = &p->gpu_health.devices[i];
        if (!d->known || !d->row_count)
            continue;
        if (evidence)
            ct_finding_add_number(f, "nvml_device", d->ordinal);
        processes_then(p, sp, d, evidence, f);
        clocks_then(sp, d, evidence, f);
        evidence = 0;
    }
}

static void periodic(const struct ct_process_report *p, const struct split *sp,
                     struct ct_findings *out)
{
    const struct ct_steps *s = sp->s;
    if (!slow_steps_matter(s, 3))
        return;
    size_t n = sp->slow_count;
    const size_t *numbers = sp->slow;
    double spacing[CT_SLOW_STEPS];
    for (size_t i = 1; i < n; i++)
        spacing[i - 1] = (double)(s->all[numbers[i] - 1].start - s->all[numbers[i - 1] - 1].start);
    qsort(spacing, n - 1, sizeof *spacing, by_value);
    double period = spacing[(n - 2) / 2];
    if (period <= 0 || spacing[0] < period * (1 - ct_thresholds.step_period_spread) ||
        spacing[n - 2] > period * (1 + ct_thresholds.step_period_spread))
        return;
    char a[32];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_PERIODIC_SLOWDOWN, p->pid,
        "slow steps recur every %s of wall time (%zu of them, steps %zu to %zu): something "
        "outside the loop runs on a timer (a monitoring probe such as nvidia-smi, a checkpoint, "
        "a logger)",
        ct_human_time((uint64_t)period, a, sizeof a), n, numbers[0], numbers[n - 1]);
    ct_finding_add_number(f, "period_ns", period);
    ct_finding_add_number(f, "slow_steps", (double)n);
    gpu_then(p, sp, f);
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
            out, CT_FINDING_STEP_DRIFT, p->pid,
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
    const struct ct_steps *s = ct_steps_of(p);
    if (!s)
        return;
    struct split sp;
    split_steps(s, &sp);
    slow(p, &sp, out);
    periodic(p, &sp, out);
    drift(p, s, out);
}
