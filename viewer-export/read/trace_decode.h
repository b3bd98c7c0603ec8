/*
 * A trace file decoded into resolved events: interned names looked up,
 * default tracks applied, slice begins and ends paired.
 */
#ifndef CT_TRACE_DECODE_H
#define CT_TRACE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"

#define CT_MAX_EVENT_ARGS 16

enum ct_value_type { CT_VALUE_UINT, CT_VALUE_INT, CT_VALUE_DOUBLE, CT_VALUE_STRING, CT_VALUE_BOOL };

struct ct_annotation {
    const char *name; /* stable for the life of the process */
    enum ct_value_type type;
    uint64_t u;
    int64_t i;
    double d;
    const char *s;
};

struct ct_event {
    uint64_t track;
    uint64_t ts;
    uint64_t end; /* slices only */
    const char *name;
    struct ct_annotation args[CT_MAX_EVENT_ARGS];
    int nargs;
    double counter; /* counters only */
    /* The first flow id the event begins, and the first it ends; 0: none. */
    uint64_t flow_out, flow_in;
};

struct ct_track_info {
    uint64_t uuid, parent;
    int32_t pid; /* process or thread tracks */
    int64_t tid; /* thread tracks, else 0 */
    int is_process, is_counter;
    const char *name;
    const char *const *cmdline;
    size_t cmdline_len;
};

/* A callstack sample (TracePacket.perf_sample) by its innermost frame: the
 * frame's name, its mapping's path and its rel_pc, which for the
 * collector's Python samples are "FUNCTION (FILE:LINE)", the file and the
 * line (trace_names.h, ct_frame_python); and the names of all its frames
 * defined on the sequence, outermost first (valid during the callback). */
struct ct_sample {
    uint64_t ts;
    int32_t pid, tid;
    const char *frame, *path;
    uint64_t rel_pc;
    const char *const *frames;
    size_t depth;
};

struct ct_trace_visitor {
    void *ctx;
    void (*track)(void *ctx, const struct ct_track_info *track);
    void (*slice)(void *ctx, const struct ct_event *slice);
    void (*instant)(void *ctx, const struct ct_event *instant);
    void (*counter)(void *ctx, const struct ct_event *counter);
    /* Optional: each callstack sample whose callstack and innermost frame
     * were defined on its sequence. */
    void (*sample)(void *ctx, const struct ct_sample *sample);
    /* Optional: each slice still open when the trace ends (its end is 0).
     * Slices are paired only for a visitor that takes them (slice set). */
    void (*unclosed)(void *ctx, const struct ct_event *slice);
    /* Optional: each packet's bytes as the file holds them, once decoded. */
    void (*packet)(void *ctx, const uint8_t *bytes, size_t size);
    /* Optional: after each packet, the bytes of the file read so far. */
    void (*progress)(void *ctx, uint64_t bytes_read);
};

struct ct_decode_result {
    uint64_t packets;
    int truncated;     /* the file ended inside a compressed frame */
    uint64_t unclosed; /* slices begun and never ended (a crash mid-call) */
};

/* Decodes `path`; returns 0, or -1 with a one-line reason in `error` (a
 * file that is no trace, a malformed packet or one too costly to decode, a
 * trace of another trace format). */
int ct_trace_decode(const char *path, const struct ct_trace_visitor *visitor,
                    struct ct_decode_result *result, char *error, size_t error_size);

/* The annotation called `name`, or NULL. */
const struct ct_annotation *ct_event_arg(const struct ct_event *event, const char *name);
/* Its integer (an unsigned one or a pointer as is), or `fallback` when the
 * event has no such annotation. */
int64_t ct_event_int(const struct ct_event *event, const char *name, int64_t fallback);
/* Its string, or "" when it has none or another type. */
const char *ct_event_text(const struct ct_event *event, const char *name);

/* Interning as the decoder does it, for the readers of other packets
 * (gpu_records.c): `text`'s string id (NULL reads as ""), and the text
 * interned under `iid` in `table` (iid -> string id), "" if none. */
uint32_t ct_intern_text(const char *text);
const char *ct_interned_text(const struct ct_u64_map *table, uint64_t iid);

#endif
