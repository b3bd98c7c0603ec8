/*
 * What changed between two runs (compare.c and the files beside it): the
 * processes of two jobs paired up (by rank, else by command line), and per
 * pair only what moved beyond noise: the environment (environment.c), the
 * step time and its parts, the GPU work and host calls per step (work.c),
 * memory, and the findings that appeared or went away. The noise rules
 * are docs/report-schema.md's ("cudatrace diff"): a step figure moves when
 * its change exceeds the spread the steps themselves show.
 */
#ifndef CT_DIFF_COMPARE_H
#define CT_DIFF_COMPARE_H

#include <stddef.h>

#include "viewer-export/job/job.h"

/* What the per-run figures are divided by: a step, or, when either side
 * has no steps, a second of the CUDA part of the run. */
enum ct_diff_basis { CT_DIFF_PER_STEP, CT_DIFF_PER_SECOND };

/* A number on each side (NAN where a side has none), the least change that
 * counts, and whether it moved by more. */
struct ct_diff_number {
    double before, after, noise;
    int moved;
};

/* What a step is made of (facts.h), the parts a diff says moved; the last
 * two only where the host sampler read the steps' thread often enough
 * (NAN else): of the time outside CUDA calls, on a CPU (host work) and
 * asleep (an input wait). */
enum ct_diff_part {
    CT_DIFF_GPU_BUSY,
    CT_DIFF_SYNC,
    CT_DIFF_OTHER_CUDA,
    CT_DIFF_OUTSIDE_CUDA,
    CT_DIFF_HOST_WORK,
    CT_DIFF_INPUT_WAIT,
    CT_DIFF_PARTS
};
extern const char *const ct_diff_part_keys[CT_DIFF_PARTS];

struct ct_diff_steps {
    uint64_t count[2]; /* before, after; 0: no steps */
    const char *source[2];
    /* spread: the judged figure's (below), 1.4826 x its MAD, never judged */
    struct ct_diff_number median, p99, spread;
    /* With the host sampler on both sides, the time the steps' thread
     * waited for a CPU (NAN without), and the figure judged for the
     * median: the step less that wait (another load on the machine is no
     * change of the program's), else the step. */
    struct ct_diff_number cpu_wait, judged;
    double rank_z; /* the rank-sum test's on the judged figure; NAN when not made */
    struct ct_diff_number parts[CT_DIFF_PARTS];
};

/* A kernel, a CUDA function or a line that held the host up: how often and
 * how long per step (or second), and how long each time. `only`: -1 on the
 * before side only, 1 on the after side only, 0 on both (or not known:
 * the side's list was not whole). A line is named as the after side has
 * it; `was`, its name before where the code around it moved, else NULL. */
struct ct_diff_item {
    const char *name, *was;
    struct ct_diff_number count, time;
    int only;
};

struct ct_diff_items {
    struct ct_diff_item *items; /* those that moved, the largest change first */
    size_t count;
};

enum ct_diff_env_kind {
    CT_DIFF_ENV_PROGRAM,
    CT_DIFF_ENV_HOST,
    CT_DIFF_ENV_LIBRARY,
    CT_DIFF_ENV_VERSION,
    CT_DIFF_ENV_DEVICE,
    CT_DIFF_ENV_VARIABLE
};

/* One difference of the environment: a library ("cudnn"), a version, a
 * device figure, a variable; its value on each side ("" where it had
 * none; a library's as "VERSION (REALPATH)", and its versions alone in
 * `versions`) and how it differs ("from another file", "only after"). */
struct ct_diff_env {
    enum ct_diff_env_kind kind;
    char name[96];
    char before[512], after[512];
    char versions[2][128];
    const char *how;
};

struct ct_diff_pair {
    size_t before, after; /* process indexes in each job */
    enum ct_diff_basis basis;
    struct ct_diff_env *env;
    size_t env_count;
    struct ct_diff_steps steps;
    struct ct_diff_items kernels, calls, sites;
    struct ct_diff_number copies;         /* the GPU's copies and sets */
    struct ct_diff_number peak, step_end; /* live device bytes */
    const struct ct_finding **appeared, **went_away;
    size_t appeared_count, went_away_count;
    int changed; /* anything above moved */
};

struct ct_diff {
    const struct ct_job *before, *after;
    struct ct_diff_pair *pairs;
    size_t pair_count;
    size_t *only_before, *only_after; /* unpaired processes */
    size_t only_before_count, only_after_count;
};

/* Pairs the two finished jobs' processes and compares each pair. */
void ct_diff_make(const struct ct_job *before, const struct ct_job *after, struct ct_diff *out);
void ct_diff_free(struct ct_diff *d);

/* The rise of the median step time (the judged figure), as a share of the
 * before side's, of the pair that rose most beyond noise; 0 when none did. */
double ct_diff_worst_rise(const struct ct_diff *d);

/* The parts of a pair's comparison, each in its own file. */
void ct_diff_environment(const struct ct_job_process *before, const struct ct_job_process *after,
                         struct ct_diff_pair *pair);
void ct_diff_work(const struct ct_job_process *before, const struct ct_job_process *after,
                  struct ct_diff_pair *pair);

/* The number at a dotted path ("steps.median_ns") in a report or facts
 * object; NAN where there is none. */
double ct_diff_value(const struct ct_json_value *v, const char *path);
/* The rank-sum test's z of sample b against sample a (rank_sum.c):
 * positive when b's values tend to be the larger, beyond +-3.29 for a
 * chance of one in a thousand that samples of one spread differ so. */
double ct_diff_rank_sum_z(const double *a, size_t na, const double *b, size_t nb);

/* Whether a finding that appeared or went away counts as a change: not
 * one whose rule judges how long the host took in this run (slow steps,
 * a periodic slowdown, a drift, a busy or waiting launching thread, a rank
 * that waited longer than the others), which another load on the machine
 * makes and unmakes; those are said, and not counted. */
int ct_diff_counts_finding(const struct ct_finding *f);

/* Judges a number: moved when both sides have it (a side without it did
 * not measure it: a summary from before a figure was kept, a trace
 * without GPU timings) and it changed by more than its noise. */
void ct_diff_judge(struct ct_diff_number *n);

#endif
