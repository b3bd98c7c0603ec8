/*
 * The capture windows of CUDATRACE_CAPTURE and `cudatrace ctl`: their flag
 * in the shared header, the time window the collector opens and closes
 * itself, and their slices in the trace (capture_windows.c).
 */
#ifndef CT_COLLECTOR_CAPTURE_WINDOWS_H
#define CT_COLLECTOR_CAPTURE_WINDOWS_H

#include <stdint.h>

#include "cudatrace/shm_layout.h"

void ct_capture_windows_start(struct ct_shm_header *shm);
/* A CT_REC_CAPTURE: the preload opened or closed the window. */
void ct_capture_windows_record(const struct ct_record *record);
/* Once per drain cycle: opens and closes the time window when it is due. */
void ct_capture_windows_tick(uint64_t now_ns);
/* Opens or closes the window from outside (`cudatrace ctl`); `by` says who. */
void ct_capture_windows_set(int open, uint64_t now_ns, const char *by);
/* Whether the window is open now. */
int ct_capture_windows_open(void);
/* The process ended: an open window ends with it. */
void ct_capture_windows_finish(uint64_t end_ns);

#endif
