/*
 * Writing one process's part of a report, as JSON (report_json.c) or as
 * text (report_text.c); the job's outputs (job_json.c, job_text.c) put the
 * parts together.
 */
#ifndef CT_REPORT_OUTPUT_H
#define CT_REPORT_OUTPUT_H

#include <stdio.h>

#include "viewer-export/findings/findings.h"
#include "viewer-export/output/json_writer.h"
#include "viewer-export/model/report.h"

/* One process's part of the report: its report/1 object, and its text
 * (the finding lines are the job's to print: job_text.c). */
void ct_process_json(struct ct_json *j, const char *key, const struct ct_process_report *p);
void ct_process_text(FILE *out, const struct ct_process_report *p);
/* The host section (host_output.c); nothing when the trace has no host
 * sampling. */
void ct_host_json(struct ct_json *j, const struct ct_process_report *p);
void ct_host_text(FILE *out, const struct ct_process_report *p);
/* The steps section (steps_output.c); nothing when the trace marks no
 * steps. */
void ct_steps_json(struct ct_json *j, const struct ct_process_report *p);
void ct_steps_text(FILE *out, const struct ct_process_report *p);
/* The CUDA graphs section (graphs_output.c); nothing when the process
 * made no graph. */
void ct_graphs_json(struct ct_json *j, const struct ct_process_report *p);
void ct_graphs_text(FILE *out, const struct ct_process_report *p);
/* A finding's lines in the text; `first` labels them "findings". */
void ct_finding_text(FILE *out, const struct ct_finding *f, int first);
/* Its top sites, each with its share of what the finding counts. */
void ct_finding_sites_text(FILE *out, const struct ct_finding *f);

/* The parts of the JSON that other outputs write too. */
void ct_finding_json(struct ct_json *j, const char *key, const struct ct_finding *f);
void ct_failed_load_json(struct ct_json *j, const struct ct_failed_load *load);
/* A finding's "failed_loads": the one load it is about. */
void ct_failed_loads_json(struct ct_json *j, const struct ct_failed_load *load);
/* What each CUDA library held: live (and peak) bytes, by library family. */
void ct_holders_json(struct ct_json *j, const char *key, const struct ct_holders *h, int with_peak);
/* A `separator`-separated list in the trace as a JSON array of strings. */
void ct_json_list(struct ct_json *j, const char *key, const char *list, char separator);
/* One entry of the report's `libraries` array. */
void ct_library_json(struct ct_json *j, const struct ct_library_entry *lib);

/* The NVTX ranges both forms list, by total time. */
#define CT_TOP_NVTX_RANGES 10

#endif
