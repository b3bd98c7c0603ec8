/*
 * Writing a report, as JSON fields or as text.
 */
#ifndef CT_REPORT_OUTPUT_H
#define CT_REPORT_OUTPUT_H

#include "viewer-export/findings/findings.h"
#include "viewer-export/output/json_writer.h"
#include "viewer-export/model/report.h"

/* The report/1 fields, into a JSON object the caller has opened. */
void ct_report_json_fields(struct ct_json *j, const struct ct_report *r,
                           const struct ct_findings *findings);
void ct_report_print_text(const struct ct_report *r, const struct ct_findings *findings);

#endif
