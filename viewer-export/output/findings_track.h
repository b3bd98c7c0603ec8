/*
 * Findings written back into their trace (findings_track.c).
 */
#ifndef CT_FINDINGS_TRACK_H
#define CT_FINDINGS_TRACK_H

#include <stddef.h>

#include "viewer-export/findings/findings.h"

/* Appends `findings` to the trace at `path` (the one `report` was read
 * from), in its own format; 0, or -1 with the reason in `error`. */
int ct_findings_annotate(const char *path, const struct ct_report *report,
                         const struct ct_findings *findings, char *error, size_t error_size);

#endif
