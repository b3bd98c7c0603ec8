/*
 * What a summary keeps of a process for `cudatrace diff` (facts.c), beyond
 * its report: the spread of its steps and of their parts, the live memory
 * each step ended at, the GPU time of more kernels than the report lists,
 * and the lines that held the host up. The summary's "diff" member
 * (docs/report-schema.md), so a diff reads traces, directories and
 * summaries alike.
 */
#ifndef CT_DIFF_FACTS_H
#define CT_DIFF_FACTS_H

#include "viewer-export/model/report.h"
#include "viewer-export/output/json_writer.h"

#define CT_DIFF_KERNELS 32        /* kernels kept, by GPU time */
#define CT_DIFF_BLOCKING_SITES 16 /* lines that held the host up, by calls */
#define CT_DIFF_STEP_VALUES 128   /* step times kept, evenly through the run */

void ct_diff_facts_json(struct ct_json *j, const char *key, const struct ct_process_report *p);

#endif
