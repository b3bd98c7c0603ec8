/*
 * Turns drained records into the trace: tracks, slices, counters, instants.
 */
#ifndef CT_COLLECTOR_TRACE_BUILDER_H
#define CT_COLLECTOR_TRACE_BUILDER_H

#include <stdint.h>

#include "collector/perfetto/trace_file.h"
#include "cudatrace/shm_layout.h"

/* Starts the trace of the process whose header is `shm`, into `file`. */
void ct_builder_start(struct ct_shm_header *shm, struct ct_trace_file *file);
/* A new thread's records begin on ring `index`. */
void ct_builder_thread(uint32_t index, int32_t tid, const char *name);
/* The thread on ring `index` ended and its records are all drained. */
void ct_builder_thread_end(uint32_t index);
void ct_builder_record(uint32_t index, const struct ct_record *record);
/* The totals of the thread on ring `index`, per function, once it ended. */
void ct_builder_thread_calls(uint32_t index, const struct ct_call_stats *stats);
/* The call a running thread is inside: ring, thread, function, its begin
 * in ticks (0: none) and the return address into its caller. */
struct ct_call_now {
    uint32_t index;
    int32_t tid;
    uint32_t func;
    uint64_t begin_ticks, caller;
};
/* A call a thread was still inside when the process ended. */
void ct_builder_inflight(struct ct_call_now call, uint64_t end_ns);
/* The thread on ring `index` as it is at `now_ns`, on a sequence of its own
 * (ct_sequence_aside): its track, its totals so far and the call it is
 * inside, as a slice marked in_flight that lasts until now. */
void ct_builder_thread_now(uint32_t index, const char *name, const struct ct_call_stats *stats,
                           struct ct_call_now call, uint64_t now_ns);
/* Writes the CUDA-stack libraries the process has mapped, and the loads and
 * failed loads its loader logged, since the last scan; 0 when the process
 * no longer maps the rings (it has exec'd), else 1, or -1 when it is gone. */
int ct_builder_scan_libraries(int process_ended);
/* Once per drain cycle, which began at `drained_from_ns`, with the drain's
 * oldest call in flight (ct_drain_rings): counters that depend on time or
 * totals, and those that wait until the events before a time have all come. */
void ct_builder_tick(uint64_t dropped, uint64_t drained_from_ns, uint64_t oldest_call_ticks);
/* For a trace read as it stands (a snapshot), after a drain that began at
 * `drained_from_ns`: what ct_builder_tick holds back is applied up to then,
 * or to the oldest call in flight if earlier, without the tick's slack. A
 * record drained later comes from a call in flight then or one that ended
 * after, and counts no earlier, but for two: a call whose record was not
 * yet published as the drain passed (the microseconds after its end, as
 * its call site is captured), and a thread's first call, made before it
 * had a ring. Those are counted late (memory_counters.h), at the
 * snapshot's time, rather than every event of the last second missing. */
void ct_builder_settle_now(uint64_t drained_from_ns, uint64_t oldest_call_ticks);
void ct_builder_finish(uint64_t end_ns, uint64_t dropped, int exited_normally);
/* Hands what is written so far to the trace file, as a frame of its own. */
void ct_builder_flush(void);
uint64_t ct_builder_calls(void);

#endif
