/*
 * The table of a job's processes in its text report, grouped by host (in
 * the job's order: job id, host, rank): a line per process, under a line
 * per host that names its ranks; or, in a job of more than
 * CT_JOB_TABLE_ROWS processes, a line per host with its medians and how
 * many of its processes stand out, at most CT_JOB_TABLE_ROWS hosts (those
 * where a process stands out, then the first others) and one line for the
 * rest. --per-process always gives the line per process.
 */
#include "viewer-export/output/job_output.h"

#include <stdlib.h>
#include <string.h>

#include "viewer-export/output/human_units.h"

/* The end of the processes of `start`'s job id and host. */
static size_t host_end(const struct ct_job *job, size_t start)
{
    const struct ct_process_identity *a = &job->processes[start].identity;
    size_t end = start + 1;
    while (end < job->process_count && strcmp(job->processes[end].identity.host, a->host) == 0 &&
           strcmp(job->processes[end].identity.job, a->job) == 0)
        end++;
    return end;
}

static const char *host_name(const struct ct_job *job, size_t p)
{
    return *job->processes[p].identity.host ? job->processes[p].identity.host : "-";
}

/* "ranks 0-7" */
static void describe_range(const struct ct_job *job, size_t first, size_t end, char *out,
                           size_t size)
{
    size_t *which = calloc(end - first, sizeof *which);
    if (!which)
        abort();
    for (size_t i = first; i < end; i++)
        which[i - first] = i;
    ct_job_describe_processes(job, which, end - first, out, size);
    free(which);
}

static void print_process_row(FILE *out, const struct ct_job *job, size_t i)
{
    const struct ct_job_process *p = &job->processes[i];
    char wall[32], sync[32], peak[32], rank[24];
    snprintf(rank, sizeof rank, "%lld", (long long)p->identity.rank);
    fprintf(out, "%-8d %6s %-16s %12s %10llu %10llu %12s %12s  %s\n", (int)p->pid,
            p->identity.rank >= 0 ? rank : "-", host_name(job, i),
            ct_human_time(p->wall_ns, wall, sizeof wall), (unsigned long long)p->calls_recorded,
            (unsigned long long)p->launches, ct_human_time(p->sync_ns, sync, sizeof sync),
            ct_human_bytes((double)p->peak_bytes, peak, sizeof peak), p->exit);
}

static void print_process_rows(FILE *out, const struct ct_job *job)
{
    char who[1024];
    fprintf(out, "%-8s %6s %-16s %12s %10s %10s %12s %12s  %s\n", "pid", "rank", "host", "wall",
            "calls", "launches", "sync", "peak memory", "exit");
    for (size_t first = 0, end; first < job->process_count; first = end) {
        end = host_end(job, first);
        describe_range(job, first, end, who, sizeof who);
        fprintf(out, "host %s: %s\n", host_name(job, first), who);
        for (size_t i = first; i < end; i++)
            print_process_row(out, job, i);
    }
}

/* The median of a figure over the host's processes, in its unit. */
static const char *host_median(const struct ct_job *job, size_t first, size_t end,
                               enum ct_figure figure, char *buf, size_t size)
{
    double *values = calloc(end - first, sizeof *values);
    size_t n = 0;
    struct ct_spread s = {0};
    if (!values)
        abort();
    for (size_t i = first; i < end; i++)
        n += ct_job_figure_value(&job->processes[i], figure, &values[n]);
    if (n)
        ct_spread_of(values, n, &s);
    free(values);
    return ct_human_number(ct_figure_names[figure].key, s.median, buf, size);
}

static size_t standing_out(const struct ct_job_figures *figures, size_t first, size_t end)
{
    size_t n = 0;
    for (size_t i = first; i < end; i++)
        n += figures->figures_of[i] != 0;
    return n;
}

static void print_host_row(FILE *out, const struct ct_job *job,
                           const struct ct_job_figures *figures, size_t first, size_t end)
{
    char wall[32], calls[32], launches[32], sync[32], peak[32], who[1024];
    describe_range(job, first, end, who, sizeof who);
    fprintf(out, "%-16s %6zu %10zu %12s %10s %10s %12s %12s  %s\n", host_name(job, first),
            end - first, standing_out(figures, first, end),
            host_median(job, first, end, CT_FIGURE_WALL, wall, sizeof wall),
            host_median(job, first, end, CT_FIGURE_CALLS, calls, sizeof calls),
            host_median(job, first, end, CT_FIGURE_LAUNCHES, launches, sizeof launches),
            host_median(job, first, end, CT_FIGURE_SYNC, sync, sizeof sync),
            host_median(job, first, end, CT_FIGURE_PEAK, peak, sizeof peak), who);
}

/* The hosts where a process stands out, shown whatever their number up to
 * the table's rows; the first others fill the rows left. */
static void print_host_rows(FILE *out, const struct ct_job *job,
                            const struct ct_job_figures *figures)
{
    size_t marked = 0, shown = 0, hidden = 0, hidden_processes = 0;
    for (size_t first = 0; first < job->process_count; first = host_end(job, first))
        marked += standing_out(figures, first, host_end(job, first)) != 0;
    size_t others = marked < CT_JOB_TABLE_ROWS ? CT_JOB_TABLE_ROWS - marked : 0;
    fprintf(out, "%-16s %6s %10s %12s %10s %10s %12s %12s  (medians per host)\n", "host",
            ct_job_members_word(job), "stand out", "wall", "calls", "launches", "sync",
            "peak memory");
    for (size_t first = 0, end; first < job->process_count; first = end) {
        end = host_end(job, first);
        int mark = standing_out(figures, first, end) != 0;
        if (shown < CT_JOB_TABLE_ROWS && (mark || others)) {
            print_host_row(out, job, figures, first, end);
            shown++;
            others -= !mark;
        } else {
            hidden++;
            hidden_processes += end - first;
        }
    }
    if (hidden)
        fprintf(out, "and %zu more %s with %zu %s (--per-process lists every process)\n", hidden,
                hidden == 1 ? "host" : "hosts", hidden_processes, ct_job_members_word(job));
}

void ct_job_table_text(FILE *out, const struct ct_job *job, const struct ct_job_figures *figures)
{
    if (!figures || job->process_count <= CT_JOB_TABLE_ROWS)
        print_process_rows(out, job);
    else
        print_host_rows(out, job, figures);
    fputs("\n", out);
}
