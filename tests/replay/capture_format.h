/*
 * The file tests/replay/ passes from a traced run to a replay: every call
 * the collector's drain loop made into the trace builder, in order, each with
 * the collector clock's reading at that moment, after a copy of the rings'
 * header and the clock's reading at the start. Replaying it through the builder of any build gives that build's
 * trace of the same run, so two builds can be compared byte for byte on one
 * workload (tools/compare_builds.sh). Test-only: nothing here ships.
 */
#ifndef CT_TESTS_REPLAY_CAPTURE_FORMAT_H
#define CT_TESTS_REPLAY_CAPTURE_FORMAT_H

#include <stdint.h>

#define CT_CAPTURE_MAGIC 0x31504143u /* "CAP1" */

/* What the builder was asked to do; the payload follows each event header. */
enum ct_capture_op {
    CT_CAP_THREAD = 1,     /* payload: int32 tid, char name[16]              */
    CT_CAP_THREAD_END = 2, /* none                                           */
    CT_CAP_RECORD = 3,     /* payload: struct ct_record                      */
    CT_CAP_CALLS = 4,      /* payload: struct ct_call_stats[CT_FN_COUNT]     */
    CT_CAP_INFLIGHT = 5,   /* payload: struct ct_call_now, uint64 end */
    CT_CAP_SCAN = 6,       /* payload: int32 process_ended                   */
    CT_CAP_TICK = 7,       /* payload: uint64 dropped                        */
    CT_CAP_FINISH = 8,     /* payload: uint64 end_ns, dropped, int32 exited  */
    CT_CAP_FLUSH = 9,      /* none: the collector ended a frame              */
};

struct ct_capture_event {
    uint32_t op;
    uint32_t ring; /* the ring index the builder was given, or 0 */
    uint64_t now_ns; /* the collector's clock when the call was made */
};

#endif
