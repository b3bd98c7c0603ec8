/*
 * Writes a trace's summary. Per process: "text", the process's part of the
 * text report; "report", its report/1 object; "findings", each of its own
 * findings as report/1 writes them with the cost that orders them;
 * "diff", what `cudatrace diff` compares beyond the report (diff/facts.h).
 * Around them, what the report says of the file itself (packets, a cut
 * tail, unclosed slices, an earlier --annotate) and the thresholds the
 * findings were made with.
 */
#include "viewer-export/job/summary.h"

#include <stdio.h>
#include <stdlib.h>

#include "viewer-export/diff/facts.h"
#include "viewer-export/findings/findings.h"
#include "viewer-export/findings/thresholds.h"
#include "viewer-export/output/report_output.h"

static char *process_text(const struct ct_process_report *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        abort();
    ct_process_text(out, p);
    fclose(out);
    return text;
}

static void process_summary(struct ct_json *j, const struct ct_process_report *p,
                            const struct ct_findings *findings)
{
    ct_json_begin_object(j, NULL);
    char *text = process_text(p);
    ct_json_string(j, "text", text);
    free(text);
    ct_process_json(j, "report", p);
    ct_json_begin_array(j, "findings");
    for (size_t i = 0; i < findings->count; i++) {
        const struct ct_finding *f = &findings->items[i];
        if (f->pid != p->pid)
            continue;
        ct_json_begin_object(j, NULL);
        ct_json_uint(j, "cost_ns", f->cost_ns);
        ct_finding_json(j, "finding", f);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_diff_facts_json(j, "diff", p);
    ct_json_end_object(j);
}

char *ct_summary_of_report(const struct ct_report *report, const char *path, size_t *len)
{
    char *text = NULL, thresholds[2048];
    FILE *out = open_memstream(&text, len);
    if (!out)
        abort();
    struct ct_findings findings;
    ct_findings_compute(report, &findings);
    ct_thresholds_describe(thresholds, sizeof thresholds);
    struct ct_json j = {.out = out};
    ct_json_begin_object(&j, NULL);
    ct_json_string(&j, "path", path);
    ct_json_string(&j, "thresholds", thresholds);
    ct_json_uint(&j, "packets", report->packets);
    ct_json_string(&j, "tail", report->truncated ? "cut" : "complete");
    ct_json_uint(&j, "unclosed_slices", report->unclosed);
    ct_json_uint(&j, "annotated", (uint64_t)report->annotated);
    ct_json_begin_array(&j, "processes");
    for (size_t i = 0; i < report->process_count; i++)
        process_summary(&j, &report->processes[i], &findings);
    ct_json_end_array(&j);
    ct_json_end_object(&j);
    fclose(out);
    ct_findings_free(&findings);
    return text;
}

char *ct_summary_of_trace(const char *path, size_t *len, char *error, size_t error_size)
{
    struct ct_report report = {0};
    char *text = NULL;
    if (ct_report_add_trace(&report, path, error, error_size) == 0)
        text = ct_summary_of_report(&report, path, len);
    ct_report_free(&report);
    return text;
}
