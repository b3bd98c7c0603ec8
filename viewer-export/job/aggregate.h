/*
 * The job's findings aggregated: one entry per finding id, severity and call
 * site among the processes of one job id, "on 61 of 64 ranks", instead of a
 * copy per process, with its worst process (the first in the job's order:
 * the most severe and costliest), the spread of its numbers, and the
 * processes where it did not fire. A finding that compares processes is an
 * entry of its own. The spread of a set of numbers is made here for the
 * job's figures too (figures.h).
 */
#ifndef CT_JOB_AGGREGATE_H
#define CT_JOB_AGGREGATE_H

#include "viewer-export/job/job.h"

struct ct_finding_group {
    size_t *members; /* indexes into the job's findings; the first is the worst */
    size_t count;
    size_t of; /* the processes of its job id */
};

struct ct_finding_groups {
    struct ct_finding_group *items;
    size_t count;
};

void ct_findings_aggregate(const struct ct_job *job, struct ct_finding_groups *out);
void ct_finding_groups_free(struct ct_finding_groups *groups);

struct ct_spread {
    double min, median, max;
};
/* The spread of `n` (at least one) values, which it sorts. */
void ct_spread_of(double *values, size_t n, struct ct_spread *out);
/* The group's values of the worst's number `key` (the members that have
 * it); 0 when none has. */
int ct_finding_group_spread(const struct ct_job *job, const struct ct_finding_group *g,
                            const char *key, struct ct_spread *out);
/* The processes of the group's job id that it did not fire on, into `out`
 * (room for the job's processes); returns how many. */
size_t ct_finding_group_absent(const struct ct_job *job, const struct ct_finding_group *g,
                               size_t *out);
/* "ranks" when every process of the job has a rank, else "processes". */
const char *ct_job_members_word(const struct ct_job *job);

#endif
