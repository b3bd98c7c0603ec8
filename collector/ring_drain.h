/*
 * The consumer side of the per-thread rings.
 */
#ifndef CT_COLLECTOR_RING_DRAIN_H
#define CT_COLLECTOR_RING_DRAIN_H

#include <stdint.h>

#include "cudatrace/shm_layout.h"
#include "collector/trace_builder.h"

/* Hands every published record to the trace builder; returns how many.
 * `*oldest_call` is the earliest begin (in ticks) of a call some thread was
 * inside as its ring was drained, 0 when none was: no record still to come
 * from a thread with a ring begins before that. */
uint64_t ct_drain_rings(struct ct_shm_header *shm, uint64_t *oldest_call);
/* How far (in the records' ticks) one ring may run ahead of the others
 * before the merge turns to them: 0 (the default) merges record by record. */
void ct_drain_order_slack(uint64_t ticks);
/* Once the process has ended: each live thread's totals, and the calls its
 * threads were still inside, written as slices that last until `end_ns`. */
void ct_drain_finish(struct ct_shm_header *shm, uint64_t end_ns);

/* The calls the running threads are inside now, into `calls` (room for
 * every ring); how many. Read from the rings alone: nothing is drained. */
uint32_t ct_drain_calls_now(struct ct_shm_header *shm, struct ct_call_now *calls);
/* Gives every running thread its track in the trace, if it has none yet. */
void ct_drain_describe_live(struct ct_shm_header *shm);
/* Every running thread's state at `now_ns` (ct_builder_thread_now): for a
 * snapshot's closing frame, written aside (perfetto/writer.h). */
void ct_drain_write_live(struct ct_shm_header *shm, uint64_t now_ns);

/* Gives back the pages of the spill segments used since the last call that
 * no ring holds now: a burst's memory outlasts it by one call at most. */
void ct_drain_trim_spill(struct ct_shm_header *shm);

#endif
