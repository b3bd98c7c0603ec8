/*
 * Writing a report, as JSON fields (report_json.c) or as text
 * (report_text.c).
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

/* The parts of the JSON that other outputs write too. */
void ct_finding_json(struct ct_json *j, const struct ct_finding *f);
void ct_failed_load_json(struct ct_json *j, const struct ct_failed_load *load);
/* One entry of the report's `libraries` array. */
void ct_library_json(struct ct_json *j, const struct ct_library_entry *lib);

/* The NVTX ranges both forms list, by total time. */
#define CT_TOP_NVTX_RANGES 10

#endif
