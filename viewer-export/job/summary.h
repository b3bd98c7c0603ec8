/*
 * A trace's summary: everything a report needs of one trace file, made where
 * the trace was read and merged anywhere (docs/report-schema.md, "summary"):
 * per process its report/1 part, its text, and its own findings with what
 * orders them. The rules that compare processes need only what a summary
 * holds, so `report --merge` of summaries gives the report reading every
 * trace at once gives: that report is made from the same summaries.
 */
#ifndef CT_JOB_SUMMARY_H
#define CT_JOB_SUMMARY_H

#include <stddef.h>

#include "viewer-export/model/report.h"

#define CT_SUMMARY_SCHEMA "cudatrace.summary/1"

/* The summary of one trace file, read into `report`, as a JSON object text
 * (malloc'd; its length in *len). */
char *ct_summary_of_report(const struct ct_report *report, const char *path, size_t *len);
/* Reads a trace file and summarises it; NULL with a reason on bad input. */
char *ct_summary_of_trace(const char *path, size_t *len, char *error, size_t error_size);

#endif
