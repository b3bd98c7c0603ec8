/*
 * The text report of a job, shared by `cudatrace report` and `cudatrace
 * doctor`. One process: its part as its summary holds it, its findings
 * under it. Several: the job first, its findings aggregated across the
 * processes (one entry per finding and site, on how many of them, the
 * worst, the spread, where it did not fire), its figures and the processes
 * that stand out, and its median step time per process (job_figures_text.c);
 * then the table grouped by host
 * (job_table_text.c); then only the parts of the processes that stand out,
 * each with its own findings. With --per-process: the table of every
 * process, then every process's part with its own findings.
 */
#include "viewer-export/output/job_output.h"

#include <stdlib.h>
#include <string.h>

#include "viewer-export/job/aggregate.h"
#include "viewer-export/output/human_units.h"
#include "viewer-export/output/report_output.h"

static void print_own_findings(FILE *out, const struct ct_job *job, size_t process)
{
    int shown = 0;
    for (size_t i = 0; i < job->findings.count; i++)
        if (job->findings.items[i].process == process)
            ct_finding_text(out, &job->findings.items[i], !shown++);
    if (!shown)
        fprintf(out, "  findings       none\n");
}

/* The worst's numbers that differ between the processes, as min .. max. */
static void print_spread(FILE *out, const struct ct_job *job, const struct ct_finding_group *g)
{
    const struct ct_finding *worst = &job->findings.items[g->members[0]];
    struct ct_spread s;
    char a[32], b[32], c[32];
    int shown = 0;
    for (int k = 0; k < worst->number_count; k++) {
        const char *key = worst->numbers[k].key;
        if (!ct_finding_group_spread(job, g, key, &s) || s.min == s.max)
            continue;
        fprintf(out, "%s %s %s .. %s (median %s)",
                shown++ ? ";" : "                   spread:", key,
                ct_human_number(key, s.min, a, sizeof a), ct_human_number(key, s.max, b, sizeof b),
                ct_human_number(key, s.median, c, sizeof c));
    }
    if (shown)
        fprintf(out, "\n");
}

static void print_group(FILE *out, const struct ct_job *job, const struct ct_finding_group *g,
                        int first)
{
    const struct ct_finding *worst = &job->findings.items[g->members[0]];
    char name[128], who[1024];
    if (worst->across) {
        ct_finding_text(out, worst, first);
        return;
    }
    fprintf(out, "  %-14s %s %s on %zu of %zu %s, worst %s: %s\n", first ? "findings" : "",
            ct_severity_name(worst->severity), ct_finding_name(worst->id), g->count, g->of,
            ct_job_members_word(job),
            ct_job_process_name(job, &job->processes[worst->process], name, sizeof name),
            worst->message);
    ct_finding_sites_text(out, worst);
    print_spread(out, job, g);
    size_t *absent = calloc(job->process_count + 1, sizeof *absent);
    if (!absent)
        abort();
    size_t n = ct_finding_group_absent(job, g, absent);
    if (n) {
        ct_job_describe_processes(job, absent, n, who, sizeof who);
        fprintf(out, "                   not on %s\n", who);
    }
    free(absent);
}

/* "job: 8 ranks on 2 hosts (job 4242)" */
static void print_job_line(FILE *out, const struct ct_job *job)
{
    size_t hosts = 0;
    for (size_t i = 0; i < job->process_count; i++) {
        const char *host = job->processes[i].identity.host;
        int seen = !*host;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(job->processes[k].identity.host, host) == 0;
        hosts += !seen;
    }
    fprintf(out, "job: %zu %s", job->process_count, ct_job_members_word(job));
    if (hosts)
        fprintf(out, " on %zu %s", hosts, hosts == 1 ? "host" : "hosts");
    /* processes without a job id sort first: the id is the last process's */
    if (job->jobs == 1)
        fprintf(out, " (job %s)", job->processes[job->process_count - 1].identity.job);
    fprintf(out, "\n");
}

static void print_aggregated(FILE *out, const struct ct_job *job)
{
    struct ct_finding_groups groups;
    ct_findings_aggregate(job, &groups);
    print_job_line(out, job);
    for (size_t i = 0; i < groups.count; i++)
        print_group(out, job, &groups.items[i], i == 0);
    if (!groups.count)
        fprintf(out, "  findings       none\n");
    ct_finding_groups_free(&groups);
}

/* Each process's part as its summary holds it, its own findings under it. */
static void print_section(FILE *out, const struct ct_job *job, size_t process)
{
    fputs(job->processes[process].text, out);
    print_own_findings(out, job, process);
}

/* Everything per process: the table of every process, then each one's section. */
static void print_every_process(FILE *out, const struct ct_job *job)
{
    ct_job_table_text(out, job, NULL);
    for (size_t i = 0; i < job->process_count; i++)
        print_section(out, job, i);
}

/* The job first, then its table, then the sections of the processes that
 * stand out: a report whose length does not grow with the job's size. */
static void print_job_view(FILE *out, const struct ct_job *job)
{
    struct ct_job_figures figures;
    ct_job_figures_make(job, &figures);
    print_aggregated(out, job);
    ct_job_figures_text(out, job, &figures);
    ct_job_steps_text(out, job, &figures);
    fputs("\n", out);
    ct_job_table_text(out, job, &figures);
    for (size_t i = 0; i < figures.stand_out_count && i < CT_JOB_SHOWN_PROCESSES; i++)
        print_section(out, job, figures.stand_out[i]);
    ct_job_figures_free(&figures);
}

void ct_job_print_text(FILE *out, const struct ct_job *job, int per_process)
{
    if (job->truncated)
        fprintf(out, "note: the trace ends in a cut frame; reporting what came before it\n");
    if (job->jobs > 1)
        fprintf(out,
                "note: these traces come from %zu different jobs; processes are compared only "
                "with those of their own job\n",
                job->jobs);
    if (job->process_count < 2)
        for (size_t i = 0; i < job->process_count; i++)
            print_section(out, job, i);
    else if (per_process)
        print_every_process(out, job);
    else
        print_job_view(out, job);
}
