/*
 * Perfetto packet encoding: sequences with their interning state, track
 * descriptors, slices, instants and counter values.
 */
#ifndef CT_COLLECTOR_PERFETTO_WRITER_H
#define CT_COLLECTOR_PERFETTO_WRITER_H

#include <stdint.h>

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

/* One trusted_packet_sequence_id with the interned ids defined on it. */
struct ct_sequence {
    uint32_t id;
    int started;
    uint64_t default_track;
    struct ct_bitset event_names, annotation_names, string_values;
    /* The body of a slice end on the default track, the same every time:
     * half of all events, written without a cache lookup once it is known. */
    uint8_t end_body[32];
    uint32_t end_len;
};

enum ct_counter_unit { CT_UNIT_COUNT = 2, CT_UNIT_BYTES = 3 };

void ct_sequence_init(struct ct_sequence *seq, uint64_t default_track);
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
/* Flow ids a slice starts (out) or ends (in); 0 for none. */
struct ct_flow {
    uint64_t out, in;
};
/* A slice with a flow: Perfetto draws an arrow between the slices that
 * carry the same id. */
void ct_write_flow_slice(struct ct_sequence *seq, uint64_t track, uint64_t begin_ns,
                         uint64_t end_ns, uint32_t name, const struct ct_arg *args, int nargs,
                         const struct ct_flow *flow);
void ct_write_instant(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, uint32_t name,
                      const struct ct_arg *args, int nargs);
void ct_write_counter(struct ct_sequence *seq, uint64_t track, uint64_t ts_ns, int64_t value);

/* Hands buffered packets to the trace file. */
void ct_writer_flush(void);

#endif
