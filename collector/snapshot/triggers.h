/*
 * The snapshots the collector takes by itself (triggers.c): on a CUDA
 * error, an out-of-memory and a hang, as CUDATRACE_SNAPSHOT_ON says.
 */
#ifndef CT_COLLECTOR_SNAPSHOT_TRIGGERS_H
#define CT_COLLECTOR_SNAPSHOT_TRIGGERS_H

#include <stdint.h>

#include "cudatrace/shm_layout.h"

/* Reads CUDATRACE_SNAPSHOT_ON, CUDATRACE_HANG_S and CUDATRACE_SNAPSHOT_MAX
 * from the process's environment (once its tracks are started). */
void ct_snapshot_triggers_start(void);
/* A call the drain handed the builder returned `result`. */
void ct_snapshot_note_result(uint32_t func, int32_t result);
/* Looks at the calls the running threads are inside (not draining). */
void ct_snapshot_check_hangs(struct ct_shm_header *shm);
/* Writes the snapshots the triggers asked for since the last call: between
 * drain passes, where the trace holds every record taken. */
void ct_snapshot_run_pending(void);

#endif
