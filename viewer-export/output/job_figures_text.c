/*
 * The job's figures in its text report (job/figures.h): per job id a line
 * per figure, its median and range over the processes and the first few
 * that stand out on it, farthest first; then the processes that stand out
 * on any, each with its figures against the median, at most
 * CT_JOB_SHOWN_PROCESSES of them (--json names them all); and per job id
 * whose processes mark steps, their median step times, slowest first (as
 * many), and the slowest against the median of them.
 */
#include "viewer-export/output/job_output.h"

#include <stdlib.h>
#include <string.h>

#include "viewer-export/output/human_units.h"

/* Named on a figure's line; the rest counted. */
#define NAMED_PER_FIGURE 3

static void print_value(FILE *out, const struct ct_job_process *p, const struct ct_figure_spread *s)
{
    double value;
    char text[32];
    if (!ct_job_figure_value(p, s->figure, &value)) {
        fputs(p->exit, out);
        return;
    }
    fputs(ct_human_number(ct_figure_names[s->figure].key, value, text, sizeof text), out);
    if (s->value.median > 0)
        fprintf(out, " (%.1fx)", value / s->value.median);
}

static void print_figure(FILE *out, const struct ct_job *job, const struct ct_figure_spread *s)
{
    const char *key = ct_figure_names[s->figure].key;
    char median[32], min[32], max[32], name[128];
    if (s->figure == CT_FIGURE_EXIT)
        fprintf(out, "    %-14s %14s %30s  ", "exit", s->usual ? s->usual : "mixed", "");
    else
        fprintf(out, "    %-14s %14s %14s .. %-12s  ", ct_figure_names[s->figure].label,
                ct_human_number(key, s->value.median, median, sizeof median),
                ct_human_number(key, s->value.min, min, sizeof min),
                ct_human_number(key, s->value.max, max, sizeof max));
    for (size_t i = 0; i < s->stand_out_count && i < NAMED_PER_FIGURE; i++) {
        const struct ct_job_process *p = &job->processes[s->stand_out[i]];
        fprintf(out, "%s%s ", i ? ", " : "", ct_job_process_name(job, p, name, sizeof name));
        print_value(out, p, s);
    }
    if (s->stand_out_count > NAMED_PER_FIGURE)
        fprintf(out, " and %zu more", s->stand_out_count - NAMED_PER_FIGURE);
    fputs(s->stand_out_count ? "" : "none", out);
    /* GPU busy time, where only some traces have GPU timings */
    if (s->processes < s->end - s->first)
        fprintf(out, "; over the %zu that have it", s->processes);
    fputs("\n", out);
}

/* The heading of a job id's figures: "over 16 ranks", "job 77, over 2
 * ranks" where the traces hold several jobs. */
static void print_heading(FILE *out, const struct ct_job *job, const struct ct_figure_spread *s)
{
    const char *id = job->processes[s->first].identity.job;
    fputs("  figures        ", out);
    if (job->jobs > 1)
        fprintf(out, "%s%s, ", *id ? "job " : "no job id", id);
    fprintf(out, "over %zu %s: median, min .. max, and who stands out\n", s->end - s->first,
            ct_job_members_word(job));
}

static const struct ct_figure_spread *spread_of(const struct ct_job_figures *figures, size_t p,
                                                int figure)
{
    for (size_t i = 0; i < figures->count; i++) {
        const struct ct_figure_spread *s = &figures->spreads[i];
        if ((int)s->figure == figure && s->first <= p && p < s->end)
            return s;
    }
    return NULL;
}

/* "rank 11 (pid 25743 on node-b): wall 418.116 ms (12.2x), sync ..." */
static void print_process(FILE *out, const struct ct_job *job, const struct ct_job_figures *figures,
                          size_t p, int first)
{
    char name[128];
    fprintf(out, "  %-14s %s:", first ? "stand out" : "",
            ct_job_process_name(job, &job->processes[p], name, sizeof name));
    for (int f = 0, shown = 0; f < CT_FIGURES; f++) {
        if (!(figures->figures_of[p] & 1u << f))
            continue;
        fprintf(out, "%s %s ", shown++ ? "," : "", ct_figure_names[f].label);
        print_value(out, &job->processes[p], spread_of(figures, p, f));
    }
    fputs("\n", out);
}

static void print_stand_out(FILE *out, const struct ct_job *job,
                            const struct ct_job_figures *figures)
{
    size_t n = figures->stand_out_count;
    for (size_t i = 0; i < n && i < CT_JOB_SHOWN_PROCESSES; i++)
        print_process(out, job, figures, figures->stand_out[i], i == 0);
    if (n > CT_JOB_SHOWN_PROCESSES)
        fprintf(out, "%17sand %zu more (--json names them all)\n", "", n - CT_JOB_SHOWN_PROCESSES);
    if (!n)
        fprintf(out, "  %-14s none\n", "stand out");
}

/* "  step times     median step time per rank, slowest first: rank 3 (pid
 * 4567) 30.2 ms, rank 0 (pid 4564) 10.1 ms, ...; slowest rank 3 (pid 4567):
 * 30.2 ms against a median of 10.1 ms" */
static void print_steps(FILE *out, const struct ct_job *job, const struct ct_figure_spread *s)
{
    const char *id = job->processes[s->first].identity.job;
    size_t n, *order = ct_figure_spread_largest_first(job, s, &n);
    const struct ct_job_process *slowest = &job->processes[order[0]];
    char name[128], value[32], median[32];
    fputs("  step times     ", out);
    if (job->jobs > 1)
        fprintf(out, "%s%s, ", *id ? "job " : "no job id", id);
    fprintf(out, "median step time per %s, slowest first:",
            strcmp(ct_job_members_word(job), "ranks") == 0 ? "rank" : "process");
    for (size_t i = 0; i < n && i < CT_JOB_SHOWN_PROCESSES; i++) {
        const struct ct_job_process *p = &job->processes[order[i]];
        fprintf(out, "%s %s %s", i ? "," : "", ct_job_process_name(job, p, name, sizeof name),
                ct_human_time(p->step_ns, value, sizeof value));
    }
    if (n > CT_JOB_SHOWN_PROCESSES)
        fprintf(out, " and %zu more", n - CT_JOB_SHOWN_PROCESSES);
    fprintf(out, "; slowest %s: %s against a median of %s",
            ct_job_process_name(job, slowest, name, sizeof name),
            ct_human_time(slowest->step_ns, value, sizeof value),
            ct_human_time((uint64_t)s->value.median, median, sizeof median));
    if (n < s->end - s->first)
        fprintf(out, "; over the %zu that mark steps", n);
    fputs("\n", out);
    free(order);
}

void ct_job_steps_text(FILE *out, const struct ct_job *job, const struct ct_job_figures *figures)
{
    for (size_t i = 0; i < figures->count; i++)
        if (figures->spreads[i].figure == CT_FIGURE_STEP)
            print_steps(out, job, &figures->spreads[i]);
}

void ct_job_figures_text(FILE *out, const struct ct_job *job, const struct ct_job_figures *figures)
{
    for (size_t i = 0; i < figures->count; i++) {
        if (i == 0 || figures->spreads[i].first != figures->spreads[i - 1].first)
            print_heading(out, job, &figures->spreads[i]);
        print_figure(out, job, &figures->spreads[i]);
    }
    print_stand_out(out, job, figures);
}
