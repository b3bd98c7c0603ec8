/*
 * GPU work a host call launched that never completed, per stream
 * (unfinished.c): what a stuck job is waiting for.
 */
#ifndef CT_VIEWER_MODEL_UNFINISHED_H
#define CT_VIEWER_MODEL_UNFINISHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"
#include "viewer-export/read/trace_decode.h"

/* A launch whose GPU work has not been seen: a free slot has flow 0. */
struct ct_unfinished_launch {
    uint64_t flow, stream, ts; /* stream: the handle the call was given */
    int64_t tid;
    const char *what, *site; /* the kernel (else the function) and its call site, or "" */
};

struct ct_unfinished_work {
    struct ct_unfinished_launch *launches;
    size_t count;
    struct ct_u64_map by_flow;    /* flow id -> slot + 1 */
    struct ct_u64_map stream_ids; /* stream handle + 1 -> CUPTI's stream id + 1 */
    size_t *free_slots;           /* slots whose work completed, to reuse */
    size_t free_count;
};

/* What one stream still waits for: its unfinished launches, the first. */
struct ct_unfinished_stream {
    uint64_t stream;
    int64_t stream_id; /* CUPTI's id, -1 where no work of the stream ever completed */
    uint64_t launches;
    const struct ct_unfinished_launch *first;
};

/* A call slice that began flow e->flow_out, whose GPU work `ended` already. */
void ct_unfinished_call(struct ct_unfinished_work *u, int64_t tid, const char *function,
                        const struct ct_event *e, int ended);
/* A GPU slice, which ends flow e->flow_in. */
void ct_unfinished_gpu(struct ct_unfinished_work *u, const struct ct_event *e);
/* The streams with unfinished work launched from `after_ns` (past a
 * bounded trace's gap, whose completions may be gone) to before
 * `before_ns`, the one whose first launch is earliest first, into `out`
 * (room for `most`). */
size_t ct_unfinished_streams(const struct ct_unfinished_work *u, uint64_t after_ns,
                             uint64_t before_ns, struct ct_unfinished_stream *out, size_t most);
void ct_unfinished_free(struct ct_unfinished_work *u);

#endif
