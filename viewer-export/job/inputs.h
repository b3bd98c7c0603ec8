/*
 * The operands of a command that reads traces (inputs.c): trace files,
 * directories of them (one per rank or worker of a job) and summaries
 * (summary.h), read into one job.
 */
#ifndef CT_JOB_INPUTS_H
#define CT_JOB_INPUTS_H

#include <stddef.h>

#include "viewer-export/job/job.h"

enum ct_job_inputs {
    CT_INPUTS_TRACES,    /* trace files and directories of them */
    CT_INPUTS_SUMMARIES, /* summary files */
    CT_INPUTS_EITHER,    /* each file as its first byte says: '{' opens a summary */
};

/* Reads every operand into `job`, the traces in parallel; -1 after saying
 * why on stderr, in one line, for the first that cannot be read. */
int ct_job_read_inputs(struct ct_job *job, char *const *operands, size_t count,
                       enum ct_job_inputs kind);

#endif
