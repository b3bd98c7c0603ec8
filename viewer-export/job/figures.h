/*
 * The job's figures across its processes: per job id and figure (wall
 * time, calls, launches, time in synchronisation, GPU busy time, peak
 * memory, median step time, how the process ended) the median and spread
 * over the processes that have it, and the processes that stand out: what
 * lets a report of a thousand ranks name the few to read. A process stands
 * out on a number when, among at least three, it lies from the median at
 * least half the median, at least the figure's least difference (50 ms of
 * time, 1 ms of a step, 64 MiB of memory, 1 of a count) and more than 3.5
 * robust standard deviations
 * (1.4826 times the median absolute deviation); on its exit when it ended
 * otherwise than more than half of its job did. Identical processes never
 * stand out.
 */
#ifndef CT_JOB_FIGURES_H
#define CT_JOB_FIGURES_H

#include "viewer-export/job/aggregate.h"
#include "viewer-export/job/job.h"

enum ct_figure {
    CT_FIGURE_WALL,
    CT_FIGURE_CALLS,
    CT_FIGURE_LAUNCHES,
    CT_FIGURE_SYNC,
    CT_FIGURE_GPU_BUSY,
    CT_FIGURE_PEAK,
    CT_FIGURE_STEP, /* the median step time, of the processes that mark steps */
    CT_FIGURE_EXIT, /* a word, not a number: the last */
    CT_FIGURES
};

/* Its name in the JSON ("wall_ns": the suffix says the unit) and in the text. */
struct ct_figure_name {
    const char *key, *label;
};
extern const struct ct_figure_name ct_figure_names[CT_FIGURES];

struct ct_figure_spread {
    enum ct_figure figure;
    size_t first, end;      /* the processes of one job id */
    size_t processes;       /* of them, those that have the figure */
    struct ct_spread value; /* a number's */
    double mad;             /* its median absolute deviation */
    const char *usual;      /* the exit of more than half of them; NULL when none has */
    size_t *stand_out;      /* process indexes, farthest first */
    size_t stand_out_count;
};

struct ct_job_figures {
    struct ct_figure_spread *spreads; /* per job id, each figure that some process has */
    size_t count;
    size_t *stand_out; /* every process that stands out on any figure, farthest first */
    size_t stand_out_count;
    unsigned *figures_of; /* per process: bit f where it stands out on figure f */
};

void ct_job_figures_make(const struct ct_job *job, struct ct_job_figures *out);
void ct_job_figures_free(struct ct_job_figures *figures);

/* A process's number for a figure; 0 when it has none (a trace without
 * GPU timings has no GPU busy time, one without steps no step time; an
 * exit is no number). */
int ct_job_figure_value(const struct ct_job_process *p, enum ct_figure figure, double *value);
/* The processes of the spread's job id that have its figure, a number, the
 * largest first (in the job's order among equals): a new array, *count
 * long. */
size_t *ct_figure_spread_largest_first(const struct ct_job *job, const struct ct_figure_spread *s,
                                       size_t *count);

#endif
