/*
 * `cudatrace report [--json] TRACE...`: per traced process, wall time, the
 * CUDA versions, calls/errors/time per runtime function, launches, time in
 * synchronisation, allocator activity, dropped records and findings. The
 * JSON form is a stable interface, documented in docs/report-schema.md.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "report_output.h"

int ct_cmd_report(int argc, char **argv)
{
    int json = 0, first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (strcmp(argv[first], "--json") == 0)
            json = 1;
        else if (strcmp(argv[first], "--") == 0) {
            first++;
            break;
        } else
            return ct_usage_error("report: unknown option %s", argv[first]);
    }
    if (first >= argc)
        return ct_usage_error("report: no trace file given");
    struct ct_report report = {0};
    char error[512];
    for (int i = first; i < argc; i++) {
        if (ct_report_add_trace(&report, argv[i], error, sizeof error)) {
            fprintf(stderr, "cudatrace: %s: %s\n", argv[i], error);
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
    ct_findings_free(&findings);
    ct_report_free(&report);
    return 0;
}
