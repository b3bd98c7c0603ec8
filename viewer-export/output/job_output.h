/*
 * Writing a job's report (job/job.h): as text (job_text.c), or as the
 * report/1 JSON fields (job_json.c).
 */
#ifndef CT_JOB_OUTPUT_H
#define CT_JOB_OUTPUT_H

#include <stdio.h>

#include "viewer-export/job/job.h"
#include "viewer-export/output/json_writer.h"

/* per_process: each process's findings under it, as one process's report
 * has them, rather than aggregated across the processes. */
void ct_job_print_text(FILE *out, const struct ct_job *job, int per_process);
/* The report/1 fields, into a JSON object the caller has opened. */
void ct_job_json_fields(struct ct_json *j, const struct ct_job *job);

#endif
