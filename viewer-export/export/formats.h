/*
 * The formats `cudatrace export` writes: each reads one trace file and
 * streams it into an output already created for it.
 */
#ifndef CT_EXPORT_FORMATS_H
#define CT_EXPORT_FORMATS_H

#include "viewer-export/export/output.h"
#include "viewer-export/export/progress.h"
#include "viewer-export/read/trace_decode.h"

struct ct_export_job {
    const char *trace; /* the input file */
    struct ct_export_output *out;
    struct ct_progress progress;
    struct ct_decode_result result; /* packets read, a cut tail, slices left open */
    char error[512];                /* why the input could not be exported */
};

/* Each returns 0, or -1 with the reason in job->error. A write error is
 * left for ct_export_output_finish to report. */
int ct_export_perfetto(struct ct_export_job *job);
int ct_export_chrome_json(struct ct_export_job *job);
int ct_export_html(struct ct_export_job *job);

#endif
