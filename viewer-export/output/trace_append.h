/*
 * Packets appended to a finished trace (trace_append.c): what the report
 * writes back into it, on a sequence of its own.
 */
#ifndef CT_TRACE_APPEND_H
#define CT_TRACE_APPEND_H

#include <stddef.h>
#include <stdint.h>

#include "perfetto_trace.pb-c.h"

#define CT_APPENDED_SEQUENCE 0x7ffffff0u /* far from the collector's small ids */

/* Packets as a Trace's bytes, growing. */
struct ct_packets {
    uint8_t *bytes;
    size_t len, capacity;
};

void ct_packets_add(struct ct_packets *out, const CtPb__TracePacket *p);
/* A track `name` under `parent` (a process's track). */
void ct_packets_track(struct ct_packets *out, uint64_t uuid, uint64_t parent, const char *name);
/* A track event at `ts`. */
void ct_packets_event(struct ct_packets *out, uint64_t ts, CtPb__TrackEvent *event);
/* Appends `packets` to the trace at `path` in its own format (plain, gzip
 * or zstd); 0, or -1 with the reason in `error`. */
int ct_trace_append(const char *path, const struct ct_packets *packets, char *error,
                    size_t error_size);

#endif
