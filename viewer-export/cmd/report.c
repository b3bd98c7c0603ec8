/*
 * `cudatrace report [--json] TRACE|DIR...`: per traced process, wall time, the
 * CUDA versions, calls/errors/time per runtime function, launches, time in
 * synchronisation, allocator activity, dropped records and findings; over
 * several processes (the ranks of a job, a directory of their traces) the
 * job first: the findings aggregated across them and those that compare
 * them, its figures and the processes that stand out, a table by host and
 * only those processes' parts, or with --per-process every process's.
 * `--summary` writes the traces' summary instead, and `--merge` reports on
 * summaries, made on other nodes: the same report (job/summary.h). The
 * JSON form is a stable interface, documented in docs/report-schema.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cudatrace/trace_names.h"
#include "viewer-export/commands.h"
#include "viewer-export/findings/finding_list.h"
#include "viewer-export/findings/thresholds.h"
#include "viewer-export/job/inputs.h"
#include "viewer-export/job/summary.h"
#include "viewer-export/model/step_calls.h"
#include "viewer-export/output/findings_track.h"
#include "viewer-export/output/steps_track.h"
#include "viewer-export/output/job_output.h"

static const char help[] =
    "usage: cudatrace report [--json] [--per-process] [--fail-on=LEVEL]\n"
    "                        [--threshold NAME=VALUE]... [--step SPEC] TRACE|DIR...\n"
    "       cudatrace report --summary [--threshold NAME=VALUE]... [-o SUMMARY] TRACE|DIR...\n"
    "       cudatrace report --merge [--json] [--per-process] [--fail-on=LEVEL] SUMMARY...\n"
    "\n"
    "Sums up traces per process: wall time, CUDA versions, calls, errors and time\n"
    "per runtime function, launches, time in synchronisation, allocator activity,\n"
    "dropped records, the CUDA libraries loaded (each with the other names its\n"
    "requester probed for in vain), those an object got by no name it asked for\n"
    "(failed loads), RTLD_NOLOAD queries that found nothing (no failures: they\n"
    "load nothing), and findings. A directory stands for every trace in it (one\n"
    "per rank or worker), but the snapshots taken of them\n"
    "(NAME.snapshot-N.pftrace.zst: name one to read it). Over several processes\n"
    "(the ranks of a job) the report gives the job first: each finding once with\n"
    "the processes it fired on, and the findings that compare them; per figure\n"
    "(wall, calls, launches, sync, GPU busy, peak memory, exit) the median and\n"
    "range across the ranks and the ranks that stand out, by rank and host (at\n"
    "least half the median and 50 ms or 64 MiB from it, beyond the others' spread,\n"
    "or another exit than most). Then a table grouped by host (a line per host\n"
    "past 32 processes, at most 32 hosts) and the full part of each rank that\n"
    "stands out (at most five): a length that does not grow with the ranks.\n"
    "Traces are read in parallel, one reader per core. Reads zstd, gzip or plain\n"
    "traces, also ones cut short.\n"
    "\n"
    "options:\n"
    "  --json                  the report as JSON (a stable interface: docs/report-schema.md)\n"
    "  --per-process           the table of every process, then every process's part\n"
    "                          with its own findings under it, not aggregated\n"
    "  --fail-on=LEVEL         exit with status 3 when a finding of LEVEL (error or\n"
    "                          warning) or worse is found: a gate for CI\n"
    "  --threshold NAME=VALUE  change a finding's threshold (the thresholds below)\n"
    "  --step SPEC             what a training step is, over what the traced\n"
    "                          process's CUDATRACE_STEP said and over the steps found:\n"
    "                          nvtx:NAME (each NVTX range NAME), kernel:NAME (each\n"
    "                          launch of the kernel ends one), call:FUNCTION (each\n"
    "                          call of the CUDA function ends one), site:TEXT (each\n"
    "                          call at a line holding TEXT ends one)\n"
    "  --annotate              append the findings to the trace (one file) as instants\n"
    "                          on a \"cudatrace findings\" track, to see them in Perfetto\n"
    "  --summary               write the traces' summary instead (JSON; to SUMMARY with -o):\n"
    "                          on each node, over the traces written there\n"
    "  --merge                 report on summaries: exactly the report that reading all\n"
    "                          their traces at once gives\n"
    "  -o, --output SUMMARY    with --summary, the file to write (default: stdout)\n"
    "  --help                  this text\n"
    "\n"
    "Options go before or after the paths (--fail-on LEVEL and --fail-on=LEVEL\n"
    "alike); after `--` every argument is a path, even one that starts with '-'.\n";

/* After the findings and thresholds the list declares (finding_list.h). */
static const char examples[] =
    "\n"
    "examples:\n"
    "  cudatrace report cudatrace-1234.pftrace.zst\n"
    "  cudatrace report traces/          # every rank of a torchrun job\n"
    "  cudatrace report --json cudatrace-*.pftrace.zst > report.json\n"
    "  cudatrace report --fail-on=warning --threshold sync_share=0.5 run.pftrace.zst\n"
    "  cudatrace report --summary -o node3.json /scratch/traces/   # on each node\n"
    "  cudatrace report --merge node*.json                         # anywhere\n";

#define EXIT_FINDINGS 3

static int print_help(void)
{
    fputs(help, stdout);
    ct_findings_help(stdout);
    return fputs(examples, stdout) == EOF;
}

static int is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* --fail-on=LEVEL: the least severe finding that fails the run. */
static int parse_fail_on(const char *level, enum ct_severity *out)
{
    if (strcmp(level, "error") == 0)
        *out = CT_SEVERITY_ERROR;
    else if (strcmp(level, "warning") == 0)
        *out = CT_SEVERITY_WARNING;
    else
        return -1;
    return 0;
}

static int fails(const struct ct_findings *findings, int fail_on, enum ct_severity level)
{
    for (size_t i = 0; fail_on && i < findings->count; i++)
        if (findings->items[i].severity <= level)
            return 1;
    return 0;
}

struct options {
    int json, per_process, fail_on, annotate, summary, merge, thresholds;
    enum ct_severity fail_level;
    const char *output;
};

enum {
    OPT_JSON = 256,
    OPT_PER_PROCESS,
    OPT_FAIL_ON,
    OPT_THRESHOLD,
    OPT_ANNOTATE,
    OPT_STEP,
    OPT_HELP
};

static const struct option long_options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"per-process", no_argument, NULL, OPT_PER_PROCESS},
    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"step", required_argument, NULL, OPT_STEP},
    {"annotate", no_argument, NULL, OPT_ANNOTATE},
    {"summary", no_argument, NULL, 's'},
    {"merge", no_argument, NULL, 'm'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Options anywhere among the paths, up to a `--`, as GNU tools take them:
 * getopt_long moves the paths to the end. The index of the first path;
 * -1 after --help (printed) or a usage error (said), *status then set. */
static int parse_options(int argc, char **argv, struct options *o, int *status)
{
    char error[256];
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, ":o:", long_options, NULL)) != -1;) {
        if (c == OPT_JSON)
            o->json = 1;
        else if (c == OPT_PER_PROCESS)
            o->per_process = 1;
        else if (c == OPT_ANNOTATE)
            o->annotate = 1;
        else if (c == 's')
            o->summary = 1;
        else if (c == 'm')
            o->merge = 1;
        else if (c == 'o')
            o->output = optarg;
        else if (c == OPT_FAIL_ON && parse_fail_on(optarg, &o->fail_level))
            return *status =
                       ct_usage_error("report: --fail-on takes error or warning, not %s", optarg),
                   -1;
        else if (c == OPT_FAIL_ON)
            o->fail_on = 1;
        else if (c == OPT_THRESHOLD && ct_thresholds_set(optarg, error, sizeof error))
            return *status = ct_usage_error("report: %s", error), -1;
        else if (c == OPT_THRESHOLD)
            o->thresholds = 1;
        else if (c == OPT_STEP && ct_step_calls_name(optarg))
            return *status = ct_usage_error("report: --step takes nvtx:NAME, kernel:NAME, "
                                            "call:FUNCTION or site:TEXT, not %s",
                                            optarg),
                   -1;
        else if (c == OPT_STEP)
            continue;
        else if (c == OPT_HELP)
            return *status = print_help(), -1;
        else
            return *status = ct_option_error(c, argv, help), -1;
    }
    return optind;
}

/* What does not go together; 0 when all is well. */
static int check_options(const struct options *o, int paths, char *const *argv)
{
    if (!paths)
        return ct_usage_error(o->merge ? "report: no summary given"
                                       : "report: no trace file given");
    if (o->summary && o->merge)
        return ct_usage_error("report: --summary and --merge: summarise on each node, then merge");
    if (o->merge && o->thresholds)
        return ct_usage_error("report: --threshold applies when summaries are made (--summary), "
                              "not when they are merged");
    if (o->output && !o->summary)
        return ct_usage_error("report: -o is for --summary; a report goes to standard output");
    if (o->summary && (o->json || o->per_process || o->fail_on || o->annotate))
        return ct_usage_error("report: --summary writes a summary; --json, --per-process, "
                              "--fail-on and --annotate are for the report");
    if (o->annotate && (o->merge || paths != 1 || !is_regular_file(argv[0])))
        return ct_usage_error("report: --annotate takes exactly one trace file");
    return 0;
}

/* The summary document: each trace's summary as its reader wrote it. */
static int write_summary(const struct ct_job *job, const char *output)
{
    FILE *out = output ? fopen(output, "we") : stdout;
    if (!out) {
        fprintf(stderr, "cudatrace: %s: %s\n", output, strerror(errno));
        return 1;
    }
    struct ct_json j = {.out = out};
    ct_json_begin_object(&j, NULL);
    ct_json_string(&j, "schema", CT_SUMMARY_SCHEMA);
    ct_json_begin_array(&j, "traces");
    for (size_t i = 0; i < job->document_count; i++)
        ct_json_raw(&j, NULL, job->documents[i].root.raw, job->documents[i].root.raw_len);
    ct_json_end_array(&j);
    ct_json_end_object(&j);
    int failed = ferror(out) | (output ? fclose(out) != 0 : fflush(out) != 0);
    if (failed)
        fprintf(stderr, "cudatrace: %s: writing the summary failed\n", output ? output : "stdout");
    return failed;
}

static int annotate(const char *path, const struct ct_job *job)
{
    struct ct_report report = {0};
    struct ct_packets packets = {0};
    char error[512];
    int failed = ct_report_add_trace(&report, path, error, sizeof error);
    if (!failed && report.annotated) {
        snprintf(error, sizeof error, "already has its \"%s\" track", ct_track_findings);
        failed = 1;
    }
    if (!failed) {
        ct_findings_track(&packets, &report, &job->findings);
        ct_steps_track(&packets, &report);
        failed = ct_trace_append(path, &packets, error, sizeof error) != 0;
    }
    free(packets.bytes);
    if (failed)
        fprintf(stderr, "cudatrace: %s: %s\n", path, error);
    ct_report_free(&report);
    return failed;
}

int ct_cmd_report(int argc, char **argv)
{
    struct options o = {.fail_level = CT_SEVERITY_ERROR};
    int status = 0, first = parse_options(argc, argv, &o, &status);
    if (first < 0)
        return status;
    if (check_options(&o, argc - first, argv + first))
        return 2;
    struct ct_job job = {0};
    if (ct_job_read_inputs(&job, argv + first, (size_t)(argc - first),
                           o.merge ? CT_INPUTS_SUMMARIES : CT_INPUTS_TRACES)) {
        ct_job_free(&job);
        return 1;
    }
    if (o.summary) {
        status = write_summary(&job, o.output);
        ct_job_free(&job);
        return status;
    }
    ct_job_finish(&job);
    if (o.json) {
        struct ct_json j = {.out = stdout};
        ct_json_begin_object(&j, NULL);
        ct_job_json_fields(&j, &job);
        ct_json_end_object(&j);
    } else {
        ct_job_print_text(stdout, &job, o.per_process);
    }
    status = fails(&job.findings, o.fail_on, o.fail_level) ? EXIT_FINDINGS : 0;
    if (o.annotate && annotate(argv[first], &job))
        status = 1;
    ct_job_free(&job);
    return status;
}
