/*
 * The text report of a job, shared by `cudatrace report` and `cudatrace
 * doctor`: with several processes a table of one line each first (by job,
 * host and rank), so the odd one out shows before the details; then each
 * process's part as its summary holds it; then the findings: aggregated
 * across the processes (one entry per finding and site, on how many of
 * them, the worst, the spread, where it did not fire), or with
 * --per-process, and always for a single process, under each process.
 */
#include "viewer-export/output/job_output.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "viewer-export/job/aggregate.h"
#include "viewer-export/output/human_units.h"
#include "viewer-export/output/report_output.h"

static void print_process_table(FILE *out, const struct ct_job *job)
{
    char wall[32], sync[32], peak[32], rank[24];
    fprintf(out, "%-8s %6s %-16s %12s %10s %10s %12s %12s  %s\n", "pid", "rank", "host", "wall",
            "calls", "launches", "sync", "peak memory", "exit");
    for (size_t i = 0; i < job->process_count; i++) {
        const struct ct_job_process *p = &job->processes[i];
        snprintf(rank, sizeof rank, "%lld", (long long)p->identity.rank);
        fprintf(out, "%-8d %6s %-16s %12s %10llu %10llu %12s %12s  %s\n", (int)p->pid,
                p->identity.rank >= 0 ? rank : "-", *p->identity.host ? p->identity.host : "-",
                ct_human_time(p->wall_ns, wall, sizeof wall), (unsigned long long)p->calls_recorded,
                (unsigned long long)p->launches, ct_human_time(p->sync_ns, sync, sizeof sync),
                ct_human_bytes((double)p->peak_bytes, peak, sizeof peak), p->exit);
    }
    fprintf(out, "\n");
}

static void print_own_findings(FILE *out, const struct ct_job *job, size_t process)
{
    int shown = 0;
    for (size_t i = 0; i < job->findings.count; i++)
        if (job->findings.items[i].process == process)
            ct_finding_text(out, &job->findings.items[i], !shown++);
    if (!shown)
        fprintf(out, "  findings       none\n");
}

static int ends_with(const char *key, const char *end)
{
    size_t n = strlen(key), m = strlen(end);
    return n >= m && strcmp(key + n - m, end) == 0;
}

/* A finding's number as its name says it is meant: bytes, nanoseconds, or
 * a plain number (docs/findings.md names them). */
static const char *human_number(const char *key, double value, char *buf, size_t size)
{
    if (ends_with(key, "bytes") && value >= 0)
        return ct_human_bytes(value, buf, size);
    if ((strcmp(key, "ns") == 0 || ends_with(key, "_ns")) && value >= 0)
        return ct_human_time((uint64_t)value, buf, size);
    snprintf(buf, size, "%.4g", value);
    return buf;
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
                human_number(key, s.min, a, sizeof a), human_number(key, s.max, b, sizeof b),
                human_number(key, s.median, c, sizeof c));
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
            ct_severity_name(worst->severity), worst->id, g->count, g->of, ct_job_members_word(job),
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

void ct_job_print_text(FILE *out, const struct ct_job *job, int per_process)
{
    if (job->truncated)
        fprintf(out, "note: the trace ends in a cut frame; reporting what came before it\n");
    if (job->jobs > 1)
        fprintf(out,
                "note: these traces come from %zu different jobs; processes are compared only "
                "with those of their own job\n",
                job->jobs);
    int several = job->process_count > 1;
    if (several)
        print_process_table(out, job);
    for (size_t i = 0; i < job->process_count; i++) {
        fputs(job->processes[i].text, out);
        if (!several || per_process)
            print_own_findings(out, job, i);
    }
    if (several && !per_process)
        print_aggregated(out, job);
}
