/*
 * `cudatrace report [--json] TRACE|DIR...`: per traced process, wall time, the
 * CUDA versions, calls/errors/time per runtime function, launches, time in
 * synchronisation, allocator activity, dropped records and findings; over
 * several processes (the ranks of a job, a directory of their traces) also
 * the findings that compare them. The
 * JSON form is a stable interface, documented in docs/report-schema.md.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "viewer-export/commands.h"
#include "viewer-export/output/findings_track.h"
#include "viewer-export/output/report_output.h"
#include "viewer-export/findings/thresholds.h"

static int add_file(struct ct_report *report, const char *path)
{
    char error[512];
    if (ct_report_add_trace(report, path, error, sizeof error) == 0)
        return 0;
    fprintf(stderr, "cudatrace: %s: %s\n", path, error);
    return -1;
}

static int is_trace_name(const struct dirent *entry)
{
    static const char *const endings[] = {".pftrace", ".pftrace.zst", ".pftrace.gz"};
    size_t len = strlen(entry->d_name);
    for (size_t i = 0; i < sizeof endings / sizeof endings[0]; i++) {
        size_t n = strlen(endings[i]);
        if (len > n && strcmp(entry->d_name + len - n, endings[i]) == 0)
            return 1;
    }
    return 0;
}

/* A file, or a directory of traces (one per rank or process of a job), in
 * the order of their names. */
static int add_path(struct ct_report *report, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return add_file(report, path);
    struct dirent **entries;
    int count = scandir(path, &entries, is_trace_name, alphasort), status = 0;
    if (count <= 0) {
        fprintf(stderr, "cudatrace: %s: %s\n", path,
                count < 0 ? strerror(errno)
                          : "holds no trace (*.pftrace, *.pftrace.zst, *.pftrace.gz)");
        return -1;
    }
    for (int i = 0; i < count; i++) {
        char file[8192];
        snprintf(file, sizeof file, "%s/%s", path, entries[i]->d_name);
        if (!status && add_file(report, file))
            status = -1;
        free(entries[i]);
    }
    free(entries);
    return status;
}

static const char help[] =
    "usage: cudatrace report [--json] [--fail-on=LEVEL] [--threshold NAME=VALUE]... TRACE|DIR...\n"
    "\n"
    "Sums up traces per process: wall time, CUDA versions, calls, errors and time\n"
    "per runtime function, launches, time in synchronisation, allocator activity,\n"
    "dropped records, the CUDA libraries loaded (and those that failed to load),\n"
    "and findings. A directory stands for every trace in it (one per rank or\n"
    "worker); over several processes the report starts with a line per process\n"
    "and adds the findings that compare them. Reads zstd, gzip or plain traces,\n"
    "also ones cut short.\n"
    "\n"
    "options:\n"
    "  --json                  the report as JSON (a stable interface: docs/report-schema.md)\n"
    "  --fail-on=LEVEL         exit with status 3 when a finding of LEVEL (error or\n"
    "                          warning) or worse is found: a gate for CI\n"
    "  --threshold NAME=VALUE  change a usage finding's threshold (docs/findings.md):\n"
    "                          launch_share, launch_rate, sync_share, sync_calls,\n"
    "                          pageable_copies, small_copy_bytes, small_copy_rate,\n"
    "                          small_copy_count, growth_bytes, growth_share,\n"
    "                          slow_alloc_ns, slow_alloc_factor, slow_alloc_calls,\n"
    "                          gpu_idle_share\n"
    "  --annotate              append the findings to the trace (one file) as instants\n"
    "                          on a \"cudatrace findings\" track, to see them in Perfetto\n"
    "  --help                  this text\n"
    "\n"
    "examples:\n"
    "  cudatrace report cudatrace-1234.pftrace.zst\n"
    "  cudatrace report traces/          # every rank of a torchrun job\n"
    "  cudatrace report --json cudatrace-*.pftrace.zst > report.json\n"
    "  cudatrace report --fail-on=warning --threshold sync_share=0.5 run.pftrace.zst\n";

#define EXIT_FINDINGS 3

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

int ct_cmd_report(int argc, char **argv)
{
    int json = 0, first = 1, fail_on = 0, annotate = 0;
    enum ct_severity fail_level = CT_SEVERITY_ERROR;
    char error[256];
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (strcmp(argv[first], "--help") == 0)
            return fputs(help, stdout) == EOF;
        if (strcmp(argv[first], "--json") == 0)
            json = 1;
        else if (strcmp(argv[first], "--annotate") == 0)
            annotate = 1;
        else if (strncmp(argv[first], "--fail-on=", 10) == 0) {
            if (parse_fail_on(argv[first] + 10, &fail_level))
                return ct_usage_error("report: --fail-on takes error or warning, not %s",
                                      argv[first] + 10);
            fail_on = 1;
        } else if (strcmp(argv[first], "--threshold") == 0 && first + 1 < argc) {
            if (ct_thresholds_set(argv[++first], error, sizeof error))
                return ct_usage_error("report: %s", error);
        } else if (strncmp(argv[first], "--threshold=", 12) == 0) {
            if (ct_thresholds_set(argv[first] + 12, error, sizeof error))
                return ct_usage_error("report: %s", error);
        } else if (strcmp(argv[first], "--") == 0) {
            first++;
            break;
        } else
            return ct_usage_error("report: unknown option %s", argv[first]);
    }
    if (first >= argc)
        return ct_usage_error("report: no trace file given");
    if (annotate && (argc - first != 1 || !is_regular_file(argv[first])))
        return ct_usage_error("report: --annotate takes exactly one trace file");
    struct ct_report report = {0};
    for (int i = first; i < argc; i++) {
        if (add_path(&report, argv[i])) {
            ct_report_free(&report);
            return 1;
        }
    }
    struct ct_findings findings;
    ct_findings_compute(&report, &findings);
    if (json) {
        struct ct_json j = {.out = stdout};
        ct_json_begin_object(&j, NULL);
        ct_report_json_fields(&j, &report, &findings);
        ct_json_end_object(&j);
    } else {
        ct_report_print_text(&report, &findings);
    }
    int status = fails(&findings, fail_on, fail_level) ? EXIT_FINDINGS : 0;
    if (annotate && ct_findings_annotate(argv[first], &report, &findings, error, sizeof error)) {
        fprintf(stderr, "cudatrace: %s: %s\n", argv[first], error);
        status = 1;
    }
    ct_findings_free(&findings);
    ct_report_free(&report);
    return status;
}
