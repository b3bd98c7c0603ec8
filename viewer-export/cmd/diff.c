/*
 * `cudatrace diff [--json] [--html FILE] [--fail-on-regression PCT] BEFORE
 * AFTER`: what changed between two runs, each side a trace, a directory of
 * a job's traces or a summary (`report --summary`), read as the report
 * reads them (job/inputs.h); the comparison is diff/compare.h's, the output
 * output/diff_output.h's. Exit status as the report's: 1 for input that
 * cannot be read or a page that cannot be written, 2 for usage, 3 when
 * --fail-on-regression trips.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "viewer-export/commands.h"
#include "viewer-export/diff/compare.h"
#include "viewer-export/export/output.h"
#include "viewer-export/job/inputs.h"
#include "viewer-export/output/diff_output.h"

static const char help[] =
    "usage: cudatrace diff [--json] [--html FILE] [--fail-on-regression PCT] BEFORE AFTER\n"
    "\n"
    "What changed between two runs of a program. Each side is a trace, a directory\n"
    "of a job's traces (processes pair up by rank) or a summary (report --summary).\n"
    "Most important first, and only what moved beyond noise: the environment\n"
    "(libraries loaded on one side only, or from another file or at another version,\n"
    "the CUDA versions, the devices, their clocks, power limit and PCIe link, the\n"
    "recorded CUDA_*/NCCL_*/LD_LIBRARY_PATH variables), the median and p99 step and\n"
    "which parts of a step moved (GPU busy, synchronising, other CUDA calls, outside\n"
    "CUDA calls: host work or an input wait), the kernels whose GPU time per step\n"
    "moved most, the host calls and the lines that held the host up per step,\n"
    "memory (peak, and live at a step's end), and the findings that appeared or went\n"
    "away. The median step counts as moved past 5% of it where the two runs' steps\n"
    "also differ by rank (a rank-sum test), with the time its thread waited for a\n"
    "CPU (another load on the machine) taken out; the parts of a step past 3.5\n"
    "robust standard deviations of theirs; kernels and calls per step past 10% of\n"
    "their own and a share of the step. Without steps on a side, figures per second\n"
    "of the run stand in, and the output says so.\n"
    "\n"
    "options:\n"
    "  --json                     the diff as JSON (cudatrace.diff/1,\n"
    "                             docs/report-schema.md)\n"
    "  --html FILE                also write the diff as one self-contained html page\n"
    "                             (the --json document, drawn as tables) to FILE,\n"
    "                             which must not exist; - for standard output, in\n"
    "                             place of the text or the JSON\n"
    "  --fail-on-regression PCT   exit with status 3 when the median step time of a\n"
    "                             process rose by more than PCT percent, beyond noise:\n"
    "                             a gate for CI\n"
    "  --help                     this text\n"
    "\n"
    "Options go before or after BEFORE and AFTER; after `--` every argument is one.\n"
    "\n"
    "examples:\n"
    "  cudatrace diff yesterday.pftrace.zst today.pftrace.zst\n"
    "  cudatrace diff --json --fail-on-regression 5 baseline.json run/   # in CI\n"
    "  cudatrace diff --html diff.html before.pftrace.zst after.pftrace.zst\n"
    "  cudatrace diff traces-a/ traces-b/           # two runs of a job, rank by rank\n";

#define EXIT_REGRESSION 3

struct options {
    int json;
    const char *html; /* NULL: not asked */
    double fail_pct;  /* NAN: not asked */
};

enum { OPT_JSON = 256, OPT_HTML, OPT_FAIL, OPT_HELP };

static const struct option long_options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"html", required_argument, NULL, OPT_HTML},
    {"fail-on-regression", required_argument, NULL, OPT_FAIL},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int parse_percent(const char *text, double *out)
{
    char *end;
    double value = strtod(text, &end);
    if (end == text || *end || !(value >= 0) || value > 1e6)
        return -1;
    *out = value;
    return 0;
}

/* The index of BEFORE; -1 after --help or a usage error, *status then set. */
static int parse_options(int argc, char **argv, struct options *o, int *status)
{
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, ":", long_options, NULL)) != -1;) {
        if (c == OPT_JSON)
            o->json = 1;
        else if (c == OPT_HTML)
            o->html = optarg;
        else if (c == OPT_FAIL && parse_percent(optarg, &o->fail_pct))
            return *status = ct_usage_error("diff: --fail-on-regression takes a percentage, "
                                            "not %s",
                                            optarg),
                   -1;
        else if (c == OPT_FAIL)
            continue;
        else if (c == OPT_HELP)
            return *status = fputs(help, stdout) == EOF, -1;
        else
            return *status = ct_option_error(c, argv, help), -1;
    }
    if (argc - optind != 2)
        return *status = ct_usage_error("diff: takes two runs, BEFORE and AFTER (%d given)",
                                        argc - optind),
               -1;
    return optind;
}

/* One side, finished as a report's job; -1 after saying why. */
static int read_side(struct ct_job *job, char *operand)
{
    if (ct_job_read_inputs(job, &operand, 1, CT_INPUTS_EITHER))
        return -1;
    if (!job->process_count) {
        fprintf(stderr, "cudatrace: %s: holds no traced process\n", operand);
        return -1;
    }
    ct_job_finish(job);
    return 0;
}

/* The text or the JSON on standard output, and the page where asked; the
 * exit status: 1 when the page could not be written. */
static int print(const struct options *o, const struct ct_diff *d,
                 const struct ct_diff_operands *what)
{
    char error[512];
    int page_on_stdout = o->html && ct_export_output_is_stdout(o->html);
    if (o->json && !page_on_stdout)
        ct_diff_print_json(stdout, d, what);
    else if (!page_on_stdout)
        ct_diff_print_text(stdout, d, what);
    if (o->html && ct_diff_write_html(o->html, d, what, error, sizeof error)) {
        fprintf(stderr, "cudatrace: %s: %s\n", o->html, error);
        return 1;
    }
    return 0;
}

int ct_cmd_diff(int argc, char **argv)
{
    struct options o = {.fail_pct = NAN};
    int status = 0, first = parse_options(argc, argv, &o, &status);
    if (first < 0)
        return status;
    struct ct_job jobs[2] = {{0}, {0}};
    if (read_side(&jobs[0], argv[first]) || read_side(&jobs[1], argv[first + 1])) {
        ct_job_free(&jobs[0]);
        ct_job_free(&jobs[1]);
        return 1;
    }
    struct ct_diff d;
    struct ct_diff_operands what = {argv[first], argv[first + 1]};
    ct_diff_make(&jobs[0], &jobs[1], &d);
    status = print(&o, &d, &what);
    if (!status && !isnan(o.fail_pct) && ct_diff_worst_rise(&d) * 100 > o.fail_pct)
        status = EXIT_REGRESSION;
    ct_diff_free(&d);
    ct_job_free(&jobs[0]);
    ct_job_free(&jobs[1]);
    return status;
}
