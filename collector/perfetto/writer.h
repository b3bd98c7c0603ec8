/*
 * Perfetto packet encoding: sequences with their interning state, track
 * descriptors, slices, instants and counter values. A writer (struct
 * ct_writer, made by ct_writer_create) holds what the packets go through on
 * their way to the file; every sequence belongs to one, so what is written
 * on a sequence needs no writer of its own.
 */
#ifndef CT_COLLECTOR_PERFETTO_WRITER_H
#define CT_COLLECTOR_PERFETTO_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "collector/perfetto/chunks.h"

struct ct_writer;

enum ct_arg_type { CT_ARG_UINT, CT_ARG_INT, CT_ARG_POINTER, CT_ARG_STRING };

/* A debug annotation: `name` and, for CT_ARG_STRING, `value` are string ids. */
struct ct_arg {
    uint32_t name;
    uint32_t type;
    uint64_t value;
};

struct ct_bitset {
    uint64_t *words;
    uint32_t count;
};

/* One trusted_packet_sequence_id with the interned ids defined on it. A
 * sequence made with ct_sequence_init is live (chunk_replay.c) until
 * released: when a bounded trace begins a chunk it gets a fresh id. */
struct ct_sequence {
    struct ct_writer *writer;
    uint32_t id;
    int started;
    int live;
    uint64_t default_track;
    uint64_t last_ts; /* the latest timestamp of an event written on it */
    struct ct_sequence *prev_live, *next_live;
    struct ct_bitset event_names, annotation_names, string_values;
    /* The body of a slice end on the default track, the same every time:
     * half of all events, written without a cache lookup once it is known. */
    uint8_t end_body[32];
    uint32_t end_len;
};

enum ct_counter_unit { CT_UNIT_COUNT = 2, CT_UNIT_BYTES = 3 };

/* A writer of the trace in `file`, of at most `max_bytes` (0: unbounded):
 * past it, the middle is dropped in whole chunks (perfetto/chunks.c). */
struct ct_writer *ct_writer_create(struct ct_trace_file *file, uint64_t max_bytes);

void ct_sequence_init(struct ct_sequence *seq, struct ct_writer *w, uint64_t default_track);
void ct_sequence_release(struct ct_sequence *seq);

void ct_write_process_track(struct ct_sequence *seq, uint64_t uuid, int32_t pid, const char *name,
                            const char *const *cmdline, int argc);
void ct_write_thread_track(struct ct_sequence *seq, uint64_t uuid, int32_t pid, int32_t tid,
                           const char *name);
void ct_write_named_track(struct ct_sequence *seq, uint64_t uuid, uint64_t parent,
                          const char *name);
void ct_write_counter_track(struct ct_sequence *seq, uint64_t uuid, uint64_t parent,
                            const char *name, enum ct_counter_unit unit);

/* track 0 means the sequence's default track. A slice whose end is known
 * is written at once; one that is open for a while (an NVTX range) as a
 * begin, then an end. */
void ct_write_slice_begin(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, uint32_t name,
                          const struct ct_arg *args, int nargs);
void ct_write_slice_end(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns);
void ct_write_slice(struct ct_sequence *seq, uint64_t track, uint64_t begin_ns, uint64_t end_ns,
                    uint32_t name, const struct ct_arg *args, int nargs);
/* Flow ids a slice starts (out) or ends (in), and the GpuRenderStageEvent
 * it submitted (written as the gpu_correlation extension); 0 for none. A
 * slice that starts several flows (a graph launch, one to each node it ran)
 * lists them in outs[0..out_count) instead of out. */
struct ct_flow {
    uint64_t out, in, submits;
    const uint64_t *outs;
    uint32_t out_count;
};
/* A slice with a flow: Perfetto draws an arrow between the slices that
 * carry the same id. */
void ct_write_flow_slice(struct ct_sequence *seq, uint64_t track, uint64_t begin_ns,
                         uint64_t end_ns, uint32_t name, const struct ct_arg *args, int nargs,
                         const struct ct_flow *flow);
void ct_write_instant(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, uint32_t name,
                      const struct ct_arg *args, int nargs);
void ct_write_counter(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, int64_t value);

/* A packet its caller built (a callstack sample), at `ts_ns`, with the
 * sequence id and flags set here: what it interns its caller keeps track
 * of, and defines again once the sequence's id changes (a new chunk). */
struct CtPb__TracePacket;
void ct_write_packet(struct ct_sequence *seq, struct CtPb__TracePacket *packet, uint64_t ts_ns);

/* Hands buffered packets to the trace file. */
void ct_writer_flush(struct ct_writer *w);

/* Whether the current chunk is full: the builder then ends it with
 * ct_writer_new_chunk at a point where no slice is half written. */
int ct_writer_chunk_due(const struct ct_writer *w);
/* Ends the current chunk and begins the next, at `start_ns` (0: the
 * latest event written), where the gap that its dropping would leave
 * ends: every live sequence starts afresh, with its track descriptors
 * and the last value of each counter said again, so the chunk reads alone. */
void ct_writer_new_chunk(struct ct_writer *w, uint64_t start_ns);
/* The number of the chunk being written: 0 for the head, kept always. */
uint32_t ct_writer_chunk(const struct ct_writer *w);

/* Who writes the gap marker (struct ct_gap, perfetto/chunks.h) each time
 * the gap grows: `write`, given `ctx`, on a sequence of its own whose
 * default track is `track`, which it describes first. */
void ct_writer_on_gap(struct ct_writer *w, uint64_t track,
                      void (*write)(struct ct_sequence *seq, const struct ct_gap *gap, void *ctx),
                      void *ctx);
/* Writes the gap marker again, if there is one: at the end, once the
 * figures it carries are final. */
void ct_writer_refresh_gap(struct ct_writer *w);
/* What of the packets written aside so far (the gap marker's, a
 * snapshot's) did not fit their buffer and is not in the trace. */
struct ct_writer_cut {
    uint64_t packets, bytes;
};
struct ct_writer_cut ct_writer_aside_cut(const struct ct_writer *w);
/* Opens to the gap marker's last packets the room its buffer keeps back,
 * so that a note of what was cut still fits. */
void ct_writer_aside_release_room(struct ct_writer *w);
/* The gap marker's packets, made by that writer (for perfetto/chunks.c). */
size_t ct_writer_gap_packets(struct ct_writer *w, const struct ct_gap *gap,
                             const uint8_t **packets);

/* Packets written by `write` into a buffer of their own instead of the
 * trace (a snapshot's closing frame, collector/snapshot/); their size, and
 * where they are until the next call. `write` writes on sequences made
 * with ct_sequence_aside, which define all they use and are not the
 * trace's: what they intern is not taken as defined on the trace's own. */
size_t ct_writer_aside(struct ct_writer *w, void (*write)(void *ctx), void *ctx,
                       const uint8_t **packets);
void ct_sequence_aside(struct ct_sequence *seq, struct ct_writer *w, uint64_t default_track);
void ct_sequence_aside_done(struct ct_sequence *seq);

#endif
