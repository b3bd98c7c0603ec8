/*
 * Groups the job's findings, which the job has ordered (errors first, the
 * costliest first): a group is made where its first member stands, so the
 * groups come in that order too and the first member is the worst.
 */
#include "viewer-export/job/aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "common/array.h"

static const char *job_of(const struct ct_job *job, const struct ct_finding *f)
{
    return job->processes[f->process].identity.job;
}

static int same_group(const struct ct_job *job, const struct ct_finding *a,
                      const struct ct_finding *b)
{
    if (a->across || b->across)
        return 0;
    return a->id == b->id && a->severity == b->severity &&
           (a->where == b->where || (a->where && b->where && strcmp(a->where, b->where) == 0)) &&
           strcmp(job_of(job, a), job_of(job, b)) == 0;
}

static size_t processes_of_job(const struct ct_job *job, const char *id)
{
    size_t n = 0;
    for (size_t i = 0; i < job->process_count; i++)
        n += strcmp(job->processes[i].identity.job, id) == 0;
    return n;
}

void ct_findings_aggregate(const struct ct_job *job, struct ct_finding_groups *out)
{
    memset(out, 0, sizeof *out);
    const struct ct_findings *all = &job->findings;
    for (size_t i = 0; i < all->count; i++) {
        struct ct_finding_group *g = NULL;
        for (size_t k = 0; k < out->count && !g; k++)
            if (same_group(job, &all->items[out->items[k].members[0]], &all->items[i]))
                g = &out->items[k];
        if (!g) {
            out->items = ct_array_grow(out->items, out->count, sizeof *out->items);
            g = &out->items[out->count++];
            *g = (struct ct_finding_group){calloc(all->count, sizeof *g->members), 0,
                                           processes_of_job(job, job_of(job, &all->items[i]))};
            if (!g->members)
                abort();
        }
        g->members[g->count++] = i;
    }
}

void ct_finding_groups_free(struct ct_finding_groups *groups)
{
    for (size_t i = 0; i < groups->count; i++)
        free(groups->items[i].members);
    free(groups->items);
    memset(groups, 0, sizeof *groups);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ct_spread_of(double *values, size_t n, struct ct_spread *out)
{
    qsort(values, n, sizeof *values, by_double);
    *out = (struct ct_spread){
        values[0], n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2, values[n - 1]};
}

int ct_finding_group_spread(const struct ct_job *job, const struct ct_finding_group *g,
                            const char *key, struct ct_spread *out)
{
    double *values = calloc(g->count, sizeof *values);
    size_t n = 0;
    if (!values)
        abort();
    for (size_t i = 0; i < g->count; i++) {
        const struct ct_finding *f = &job->findings.items[g->members[i]];
        for (int k = 0; k < f->number_count; k++)
            if (strcmp(f->numbers[k].key, key) == 0) {
                values[n++] = f->numbers[k].value;
                break;
            }
    }
    if (n)
        ct_spread_of(values, n, out);
    free(values);
    return n > 0;
}

size_t ct_finding_group_absent(const struct ct_job *job, const struct ct_finding_group *g,
                               size_t *out)
{
    const struct ct_finding *worst = &job->findings.items[g->members[0]];
    size_t n = 0;
    for (size_t p = 0; p < job->process_count; p++) {
        int fired = 0;
        for (size_t i = 0; i < g->count && !fired; i++)
            fired = job->findings.items[g->members[i]].process == p;
        if (!fired && strcmp(job->processes[p].identity.job, job_of(job, worst)) == 0)
            out[n++] = p;
    }
    return n;
}

const char *ct_job_members_word(const struct ct_job *job)
{
    for (size_t i = 0; i < job->process_count; i++)
        if (job->processes[i].identity.rank < 0)
            return "processes";
    return "ranks";
}
