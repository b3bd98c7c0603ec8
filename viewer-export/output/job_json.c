/*
 * The report/1 JSON of a job (docs/report-schema.md): the trace's own
 * facts, each process's object and each finding as their summaries hold
 * them (a finding that compares processes written here), and "job": its
 * hosts and job ids and the findings aggregated across its processes.
 */
#include "viewer-export/output/job_output.h"

#include <stdlib.h>
#include <string.h>

#include "viewer-export/job/aggregate.h"
#include "viewer-export/output/report_output.h"

static void process_ref(struct ct_json *j, const char *key, const struct ct_job_process *p)
{
    ct_json_begin_object(j, key);
    ct_json_int(j, "pid", p->pid);
    ct_json_int_or_null(j, "rank", p->identity.rank);
    ct_json_text_or_null(j, "host", p->identity.host);
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
    ct_json_string(j, "id", worst->id);
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
    ct_findings_aggregate(job, &groups);
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
    ct_json_end_object(j);
    free(absent);
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
