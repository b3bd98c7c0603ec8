/*
 * Writing a job's report (job/job.h): as text (job_text.c, with its
 * figures in job_figures_text.c and its table in job_table_text.c), or as
 * the report/1 JSON fields (job_json.c).
 */
#ifndef CT_JOB_OUTPUT_H
#define CT_JOB_OUTPUT_H

#include <stdio.h>

#include "viewer-export/job/figures.h"
#include "viewer-export/job/job.h"
#include "viewer-export/output/json_writer.h"

/* The processes that stand out which the text names, farthest first, and
 * gives the sections of; and the lines of its table. Bounds on a job's
 * report, whatever its size. */
#define CT_JOB_SHOWN_PROCESSES 5
#define CT_JOB_TABLE_ROWS 32

/* Several processes: the job's findings, its figures and the processes
 * that stand out, the table grouped by host, and the sections of those
 * that stand out; per_process: the table of every process and each's
 * section with its own findings under it. One process: its section. */
void ct_job_print_text(FILE *out, const struct ct_job *job, int per_process);
/* The report/1 fields, into a JSON object the caller has opened. */
void ct_job_json_fields(struct ct_json *j, const struct ct_job *job);

/* Parts of the text: the figures and who stands out; the median step time
 * per process and the slowest by it, where processes mark steps; the
 * table, a line per process where `figures` is NULL. */
void ct_job_figures_text(FILE *out, const struct ct_job *job, const struct ct_job_figures *figures);
void ct_job_steps_text(FILE *out, const struct ct_job *job, const struct ct_job_figures *figures);
void ct_job_table_text(FILE *out, const struct ct_job *job, const struct ct_job_figures *figures);

#endif
