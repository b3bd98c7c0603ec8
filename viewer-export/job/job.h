/*
 * A job: the processes of every trace or summary given to `cudatrace
 * report`, ordered by job, host, rank and pid, with every finding, their
 * own and those that compare them, each tied to its process. Read from
 * summaries only (summary.h), however the traces came: that is what makes a
 * merged report the same as a direct one.
 */
#ifndef CT_JOB_H
#define CT_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "viewer-export/findings/findings.h"
#include "viewer-export/read/json_reader.h"

struct ct_job_process {
    int32_t pid;
    struct ct_process_identity identity;     /* strings point into the summary */
    const struct ct_json_value *environment; /* the identity's variables, an object */
    const struct ct_json_value *report;      /* its report/1 object */
    const struct ct_json_value *facts;       /* what `cudatrace diff` reads (diff/facts.h) */
    const char *text;                        /* its part of the text report */
    const char *path;                        /* the trace it came from */
    uint64_t wall_ns, calls_recorded, launches, sync_calls, sync_ns, peak_bytes;
    uint64_t gpu_busy_ns; /* with has_gpu: only a trace with GPU timings has it */
    int has_gpu;
    uint64_t steps, step_ns; /* the report's steps: how many, their median */
    const char *exit;
    struct ct_library_entry *libraries; /* mapped, as the report lists them */
    size_t library_count;
    size_t summary_index; /* where it was read: the order findings were made in */
};

struct ct_job_document {
    char *text;
    size_t len;
    struct ct_json_value root;
};

struct ct_job {
    struct ct_job_document *documents;
    size_t document_count;
    struct ct_job_process *processes;
    size_t process_count;
    struct ct_findings findings; /* ordered; finding.process indexes processes */
    uint64_t packets, unclosed;
    int truncated, annotated;
    const char *thresholds;
    size_t jobs; /* distinct job ids among the processes (0: none said) */
};

/* Adds a trace's summary (the text is the job's from now on, even on
 * failure), or a summary file's document of many; -1 with a reason. */
int ct_job_add_summary(struct ct_job *job, char *text, size_t len, char *error, size_t error_size);
/* Reads trace files (in parallel where there are several and cores to
 * spare, parallel.c) and adds their summaries; -1 with the first failing
 * file's reason, in the order given. */
int ct_job_read_traces(struct ct_job *job, char *const *paths, size_t count, char *error,
                       size_t error_size);
/* The finished job of one trace read already (doctor, the html export). */
int ct_job_of_report(struct ct_job *job, const struct ct_report *report, const char *path);
/* Orders the processes, adds the findings that compare them and orders
 * every finding. */
void ct_job_finish(struct ct_job *job);
void ct_job_free(struct ct_job *job);

/* The end of the processes of `start`'s job id: the job orders its
 * processes by job id, so they stand in a row from `start`. */
size_t ct_job_group_end(const struct ct_job *job, size_t start);

/* How findings name a process: "rank 3 (pid 1234)", or "pid 1234" where no
 * launcher gave it a rank; with "on HOST" when the job spans hosts. */
const char *ct_job_process_name(const struct ct_job *job, const struct ct_job_process *p, char *buf,
                                size_t size);

/* Some of the job's processes (indexes) in words: "ranks 0-6, 9" when each
 * has a rank, else the first few names and how many more. */
void ct_job_describe_processes(const struct ct_job *job, const size_t *which, size_t count,
                               char *out, size_t size);

/* Adds the findings that compare the job's processes (findings/across.c). */
void ct_findings_across(struct ct_job *job);

#endif
