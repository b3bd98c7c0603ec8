/*
 * The report/1 JSON of a job (docs/report-schema.md): the trace's own
 * facts, each process's object and each finding as their summaries hold
 * them (a finding that compares processes written here), and "job": its
 * hosts and job ids, the findings aggregated across its processes, its
 * figures across them with the processes that stand out, and the median
 * step time of each process that marks steps with the slowest by it.
 */
#include "viewer-export/output/job_output.h"

#include <stdlib.h>
#include <string.h>

#include "viewer-export/job/aggregate.h"
#include "viewer-export/job/figures.h"
#include "viewer-export/output/report_output.h"

static void process_fields(struct ct_json *j, const struct ct_job_process *p)
{
    ct_json_int(j, "pid", p->pid);
    ct_json_int_or_null(j, "rank", p->identity.rank);
    ct_json_text_or_null(j, "host", p->identity.host);
}

static void process_ref(struct ct_json *j, const char *key, const struct ct_job_process *p)
{
    ct_json_begin_object(j, key);
    process_fields(j, p);
    ct_json_end_object(j);
}

static void group_numbers(struct ct_json *j, const struct ct_job *job,
                          const struct ct_finding_group *g)
{
    const struct ct_finding *worst = &job->findings.items[g->members[0]];
    struct ct_spread s;
    ct_json_begin_object(j, "numbers");
    for (int k = 0; k < worst->number_count; k++) {
        if (!ct_finding_group_spread(job, g, worst->numbers[k].key, &s))
            continue;
        ct_json_begin_object(j, worst->numbers[k].key);
        ct_json_double(j, "min", s.min);
        ct_json_double(j, "median", s.median);
        ct_json_double(j, "max", s.max);
        ct_json_end_object(j);
    }
    ct_json_end_object(j);
}

static void group_json(struct ct_json *j, const struct ct_job *job,
                       const struct ct_finding_group *g, size_t *absent)
{
    const struct ct_finding *worst = &job->findings.items[g->members[0]];
    ct_json_begin_object(j, NULL);
    ct_json_string(j, "id", ct_finding_name(worst->id));
    ct_json_string(j, "severity", ct_severity_name(worst->severity));
    ct_json_text_or_null(j, "site", worst->where);
    ct_json_string(j, "message", worst->message);
    ct_json_uint(j, "processes", g->count);
    ct_json_uint(j, "of", g->of);
    ct_json_string(j, "kind", worst->across ? "compares processes" : "per process");
    process_ref(j, "worst", &job->processes[worst->process]);
    group_numbers(j, job, g);
    size_t n = ct_finding_group_absent(job, g, absent);
    ct_json_begin_array(j, "not_on");
    for (size_t i = 0; !worst->across && i < n; i++)
        process_ref(j, NULL, &job->processes[absent[i]]);
    ct_json_end_array(j);
    ct_json_end_object(j);
}

/* Who stands out on the figure, farthest first, each with its value. */
static void stand_out_json(struct ct_json *j, const struct ct_job *job,
                           const struct ct_figure_spread *s)
{
    double value;
    ct_json_begin_array(j, "stand_out");
    for (size_t i = 0; i < s->stand_out_count; i++) {
        const struct ct_job_process *p = &job->processes[s->stand_out[i]];
        ct_json_begin_object(j, NULL);
        process_fields(j, p);
        if (ct_job_figure_value(p, s->figure, &value))
            ct_json_double(j, "value", value);
        else
            ct_json_string(j, "value", p->exit);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

static void figure_json(struct ct_json *j, const struct ct_job *job,
                        const struct ct_figure_spread *s)
{
    ct_json_begin_object(j, NULL);
    ct_json_text_or_null(j, "job", job->processes[s->first].identity.job);
    ct_json_string(j, "name", ct_figure_names[s->figure].key);
    ct_json_uint(j, "processes", s->processes);
    if (s->figure == CT_FIGURE_EXIT) {
        ct_json_text_or_null(j, "usual", s->usual);
    } else {
        ct_json_double(j, "min", s->value.min);
        ct_json_double(j, "median", s->value.median);
        ct_json_double(j, "max", s->value.max);
        ct_json_double(j, "mad", s->mad);
    }
    stand_out_json(j, job, s);
    ct_json_end_object(j);
}

/* The figures per job id, then every process that stands out, farthest
 * first, with the figures it stands out on. */
static void figures_json(struct ct_json *j, const struct ct_job *job,
                         const struct ct_job_figures *figures)
{
    ct_json_begin_array(j, "figures");
    for (size_t i = 0; i < figures->count; i++)
        figure_json(j, job, &figures->spreads[i]);
    ct_json_end_array(j);
    ct_json_begin_array(j, "stand_out");
    for (size_t i = 0; i < figures->stand_out_count; i++) {
        size_t p = figures->stand_out[i];
        ct_json_begin_object(j, NULL);
        process_fields(j, &job->processes[p]);
        ct_json_begin_array(j, "figures");
        for (int f = 0; f < CT_FIGURES; f++)
            if (figures->figures_of[p] & 1u << f)
                ct_json_string(j, NULL, ct_figure_names[f].key);
        ct_json_end_array(j);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

static void step_process_json(struct ct_json *j, const char *key, const struct ct_job_process *p)
{
    ct_json_begin_object(j, key);
    process_fields(j, p);
    ct_json_uint(j, "count", p->steps);
    ct_json_uint(j, "median_ns", p->step_ns);
    ct_json_end_object(j);
}

/* Per job id where a process marks steps: the median step time of each
 * that does, in the job's order, and the slowest by it (the step figure's
 * spread has them). */
static void steps_json(struct ct_json *j, const struct ct_job *job,
                       const struct ct_job_figures *figures)
{
    ct_json_begin_array(j, "steps");
    for (size_t i = 0; i < figures->count; i++) {
        const struct ct_figure_spread *s = &figures->spreads[i];
        if (s->figure != CT_FIGURE_STEP)
            continue;
        size_t n, *slowest = ct_figure_spread_largest_first(job, s, &n);
        ct_json_begin_object(j, NULL);
        ct_json_text_or_null(j, "job", job->processes[s->first].identity.job);
        ct_json_double(j, "median_ns", s->value.median);
        ct_json_begin_array(j, "ranks");
        for (size_t p = s->first; p < s->end; p++)
            if (job->processes[p].steps)
                step_process_json(j, NULL, &job->processes[p]);
        ct_json_end_array(j);
        step_process_json(j, "slowest", &job->processes[slowest[0]]);
        ct_json_end_object(j);
        free(slowest);
    }
    ct_json_end_array(j);
}

/* The distinct values of an identity field, in the processes' order. */
static void distinct_list(struct ct_json *j, const char *key, const struct ct_job *job, int use_job)
{
    ct_json_begin_array(j, key);
    for (size_t i = 0; i < job->process_count; i++) {
        const char *value =
            use_job ? job->processes[i].identity.job : job->processes[i].identity.host;
        int seen = !*value;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(value, use_job ? job->processes[k].identity.job
                                         : job->processes[k].identity.host) == 0;
        if (!seen)
            ct_json_string(j, NULL, value);
    }
    ct_json_end_array(j);
}

static void job_json(struct ct_json *j, const struct ct_job *job)
{
    struct ct_finding_groups groups;
    struct ct_job_figures figures;
    ct_findings_aggregate(job, &groups);
    ct_job_figures_make(job, &figures);
    size_t *absent = calloc(job->process_count + 1, sizeof *absent);
    if (!absent)
        abort();
    ct_json_begin_object(j, "job");
    ct_json_uint(j, "processes", job->process_count);
    distinct_list(j, "hosts", job, 0);
    distinct_list(j, "jobs", job, 1);
    ct_json_begin_array(j, "findings");
    for (size_t i = 0; i < groups.count; i++)
        group_json(j, job, &groups.items[i], absent);
    ct_json_end_array(j);
    figures_json(j, job, &figures);
    steps_json(j, job, &figures);
    ct_json_end_object(j);
    free(absent);
    ct_job_figures_free(&figures);
    ct_finding_groups_free(&groups);
}

void ct_job_json_fields(struct ct_json *j, const struct ct_job *job)
{
    ct_json_string(j, "schema", "cudatrace.report/1");
    ct_json_begin_object(j, "trace");
    ct_json_uint(j, "packets", job->packets);
    ct_json_string(j, "tail", job->truncated ? "cut" : "complete");
    ct_json_uint(j, "unclosed_slices", job->unclosed);
    ct_json_end_object(j);
    ct_json_begin_array(j, "processes");
    for (size_t i = 0; i < job->process_count; i++)
        ct_json_raw(j, NULL, job->processes[i].report->raw, job->processes[i].report->raw_len);
    ct_json_end_array(j);
    ct_json_begin_array(j, "findings");
    for (size_t i = 0; i < job->findings.count; i++)
        ct_finding_json(j, NULL, &job->findings.items[i]);
    ct_json_end_array(j);
    job_json(j, job);
}
