/*
 * Steps written back into their trace (steps_track.c).
 */
#ifndef CT_STEPS_TRACK_H
#define CT_STEPS_TRACK_H

#include "viewer-export/model/report.h"
#include "viewer-export/output/trace_append.h"

/* Adds each process's steps as packets to `out`. */
void ct_steps_track(struct ct_packets *out, const struct ct_report *report);

#endif
