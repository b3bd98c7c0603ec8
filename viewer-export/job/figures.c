/*
 * Spreads each figure over the processes of each job id (figures.h) and
 * picks the processes that stand out, farthest first: by how far their
 * farthest number lies from its median, relative to that median, with a
 * different exit before any number.
 */
#include "viewer-export/job/figures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"

const struct ct_figure_name ct_figure_names[CT_FIGURES] = {
    {"wall_ns", "wall"},         {"calls", "calls"},
    {"launches", "launches"},    {"sync_ns", "sync"},
    {"gpu_busy_ns", "GPU busy"}, {"peak_bytes", "peak memory"},
    {"step_ns", "median step"},  {"exit", "exit"},
};

/* Half the median away: jitter between healthy ranks is no story, and a
 * rank half again as slow, or using half the memory, is. */
#define STAND_OUT_SHARE 0.5
/* The modified z-score's cut (Iglewicz and Hoaglin): beyond it, a value is
 * not of the others' spread, however wide that is. */
#define STAND_OUT_Z 3.5
#define MAD_TO_SIGMA 1.4826
/* The least difference that stands out, per figure: of time the
 * straggler's margin (across.c), jitter a short run has between healthy
 * ranks; of memory 64 MiB, less being a buffer or two, not another
 * workload; of a step 1 ms, its median being steady where a run's time is
 * not (a slow step or a long warm-up moves it not at all). */
static const double least[CT_FIGURES] = {50e6, 1, 1, 50e6, 50e6, 64 << 20, 1e6, 0};

int ct_job_figure_value(const struct ct_job_process *p, enum ct_figure figure, double *value)
{
    const uint64_t numbers[] = {p->wall_ns,     p->calls_recorded, p->launches, p->sync_ns,
                                p->gpu_busy_ns, p->peak_bytes,     p->step_ns};
    if (figure == CT_FIGURE_EXIT || (figure == CT_FIGURE_GPU_BUSY && !p->has_gpu) ||
        (figure == CT_FIGURE_STEP && !p->steps))
        return 0;
    *value = (double)numbers[figure];
    return 1;
}

struct ranked {
    size_t process;
    double distance;
};

static int farthest_first(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->distance != y->distance)
        return x->distance > y->distance ? -1 : 1;
    return (x->process > y->process) - (x->process < y->process);
}

/* Sorts `n` ranked processes and keeps their indexes, in a new array. */
static size_t *in_order(struct ranked *ranked, size_t n)
{
    qsort(ranked, n, sizeof *ranked, farthest_first);
    size_t *order = calloc(n ? n : 1, sizeof *order);
    if (!order)
        abort();
    for (size_t i = 0; i < n; i++)
        order[i] = ranked[i].process;
    return order;
}

size_t *ct_figure_spread_largest_first(const struct ct_job *job, const struct ct_figure_spread *s,
                                       size_t *count)
{
    struct ranked *ranked = calloc(s->end - s->first, sizeof *ranked);
    double value;
    size_t n = 0;
    if (!ranked)
        abort();
    for (size_t p = s->first; p < s->end; p++)
        if (ct_job_figure_value(&job->processes[p], s->figure, &value))
            ranked[n++] = (struct ranked){p, value}; /* farthest first: the largest */
    size_t *order = in_order(ranked, n);
    free(ranked);
    *count = n;
    return order;
}

static double larger(double a, double b)
{
    return a > b ? a : b;
}

static double apart(double a, double b)
{
    return a > b ? a - b : b - a;
}

/* What a figure's spread is made with: a value, then a ranked process,
 * per process, and each process's largest distance so far. */
struct scratch {
    double *values;
    struct ranked *ranked;
    double *farthest;
};

/* The median and spread of the figure over the processes that have it,
 * and the median absolute deviation; how many have it. */
static size_t spread_numbers(const struct ct_job *job, struct ct_figure_spread *s, double *values)
{
    size_t n = 0;
    for (size_t i = s->first; i < s->end; i++)
        n += ct_job_figure_value(&job->processes[i], s->figure, &values[n]);
    if (!n)
        return 0;
    struct ct_spread deviation;
    ct_spread_of(values, n, &s->value);
    for (size_t i = 0; i < n; i++)
        values[i] = apart(values[i], s->value.median);
    ct_spread_of(values, n, &deviation);
    s->mad = deviation.median;
    return n;
}

/* How far the process's number lies from the median, as a share of the
 * median (of the least difference, where the median is smaller); 0 where
 * it does not stand out. A different exit is farther than any number. */
static double distance_of(const struct ct_job *job, const struct ct_figure_spread *s, size_t p)
{
    double x, median = s->value.median;
    if (s->figure == CT_FIGURE_EXIT)
        return s->usual && strcmp(job->processes[p].exit, s->usual) != 0 ? INFINITY : 0;
    if (s->processes < 3 || !ct_job_figure_value(&job->processes[p], s->figure, &x))
        return 0;
    double off = apart(x, median);
    if (off < STAND_OUT_SHARE * median || off < least[s->figure] ||
        off <= STAND_OUT_Z * MAD_TO_SIGMA * s->mad)
        return 0;
    return off / larger(median, least[s->figure]);
}

/* The exit more than half of the processes gave, if one did. */
static const char *usual_exit(const struct ct_job *job, size_t first, size_t end)
{
    for (size_t i = first; i < end; i++) {
        size_t same = 0;
        for (size_t k = first; k < end; k++)
            same += strcmp(job->processes[k].exit, job->processes[i].exit) == 0;
        if (2 * same > end - first)
            return job->processes[i].exit;
    }
    return NULL;
}

/* Marks the processes that stand out on the spread's figure. */
static void pick(const struct ct_job *job, struct ct_job_figures *out, struct ct_figure_spread *s,
                 struct scratch *w)
{
    size_t n = 0;
    for (size_t p = s->first; p < s->end; p++) {
        double d = distance_of(job, s, p);
        if (d == 0)
            continue;
        w->ranked[n++] = (struct ranked){p, d};
        out->figures_of[p] |= 1u << s->figure;
        w->farthest[p] = larger(w->farthest[p], d);
    }
    s->stand_out_count = n;
    s->stand_out = in_order(w->ranked, n);
}

static void spread_group(const struct ct_job *job, struct ct_job_figures *out, size_t first,
                         size_t end, struct scratch *w)
{
    for (int f = 0; f < CT_FIGURES; f++) {
        struct ct_figure_spread s = {.figure = (enum ct_figure)f, .first = first, .end = end};
        s.processes = f == CT_FIGURE_EXIT ? end - first : spread_numbers(job, &s, w->values);
        if (!s.processes)
            continue;
        if (f == CT_FIGURE_EXIT)
            s.usual = usual_exit(job, first, end);
        pick(job, out, &s, w);
        out->spreads = ct_array_grow(out->spreads, out->count, sizeof *out->spreads);
        out->spreads[out->count++] = s;
    }
}

void ct_job_figures_make(const struct ct_job *job, struct ct_job_figures *out)
{
    size_t n = job->process_count ? job->process_count : 1;
    memset(out, 0, sizeof *out);
    out->figures_of = calloc(n, sizeof *out->figures_of);
    struct scratch w = {calloc(n, sizeof *w.values), calloc(n, sizeof *w.ranked),
                        calloc(n, sizeof *w.farthest)};
    if (!out->figures_of || !w.values || !w.ranked || !w.farthest)
        abort();
    for (size_t first = 0; first < job->process_count;) {
        size_t end = ct_job_group_end(job, first);
        spread_group(job, out, first, end, &w);
        first = end;
    }
    for (size_t p = 0; p < job->process_count; p++)
        if (out->figures_of[p])
            w.ranked[out->stand_out_count++] = (struct ranked){p, w.farthest[p]};
    out->stand_out = in_order(w.ranked, out->stand_out_count);
    free(w.values);
    free(w.ranked);
    free(w.farthest);
}

void ct_job_figures_free(struct ct_job_figures *figures)
{
    for (size_t i = 0; i < figures->count; i++)
        free(figures->spreads[i].stand_out);
    free(figures->spreads);
    free(figures->stand_out);
    free(figures->figures_of);
    memset(figures, 0, sizeof *figures);
}
