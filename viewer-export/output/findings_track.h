/*
 * Findings written back into their trace (findings_track.c).
 */
#ifndef CT_FINDINGS_TRACK_H
#define CT_FINDINGS_TRACK_H

#include "viewer-export/findings/findings.h"
#include "viewer-export/output/trace_append.h"

/* Adds the findings of `report`'s processes as packets to `out`. */
void ct_findings_track(struct ct_packets *out, const struct ct_report *report,
                       const struct ct_findings *findings);

#endif
