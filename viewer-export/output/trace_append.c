/*
 * What `cudatrace report --annotate` adds to a finished trace: packets
 * appended at its end. The report works from the whole run, which the
 * collector, writing as it goes, never holds; so what it says is appended
 * on request, after the run: a trace is a sequence of packets, and a zstd
 * frame, a gzip member or plain packets added at the end extend it in its
 * own format. The packets go on a sequence of their own and name everything
 * inline, so they need nothing from the collector's interning.
 */
#include "viewer-export/output/trace_append.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "viewer-export/read/trace_input.h"
#include "common/varint.h"
#include "common/write_all.h"

#define SEQ_INCREMENTAL_STATE_CLEARED 1

void ct_packets_add(struct ct_packets *out, const CtPb__TracePacket *p)
{
    size_t size = ct_pb__trace_packet__get_packed_size(p);
    if (out->len + size + 16 > out->capacity) {
        out->capacity = (out->len + size + 16) * 2;
        out->bytes = realloc(out->bytes, out->capacity);
        if (!out->bytes)
            abort();
    }
    out->len += ct_put_packet_header(out->bytes + out->len, size);
    out->len += ct_pb__trace_packet__pack(p, out->bytes + out->len);
}

void ct_packets_track(struct ct_packets *out, uint64_t uuid, uint64_t parent, const char *name)
{
    CtPb__TrackDescriptor track = CT_PB__TRACK_DESCRIPTOR__INIT;
    track.has_uuid = track.has_parent_uuid = 1;
    track.uuid = uuid;
    track.parent_uuid = parent;
    track.name = (char *)name;
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    packet.has_trusted_packet_sequence_id = packet.has_sequence_flags = 1;
    packet.trusted_packet_sequence_id = CT_APPENDED_SEQUENCE;
    packet.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED;
    packet.track_descriptor = &track;
    ct_packets_add(out, &packet);
}

void ct_packets_event(struct ct_packets *out, uint64_t ts, CtPb__TrackEvent *event)
{
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    packet.has_trusted_packet_sequence_id = packet.has_timestamp = 1;
    packet.trusted_packet_sequence_id = CT_APPENDED_SEQUENCE;
    packet.timestamp = ts;
    packet.track_event = event;
    ct_packets_add(out, &packet);
}

static enum ct_trace_format format_of(const char *path)
{
    unsigned char head[4] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : pread(fd, head, sizeof head, 0);
    if (fd >= 0)
        close(fd);
    return ct_trace_format_of(head, got > 0 ? (size_t)got : 0);
}

/* The packets as one gzip member, or one zstd frame, or as they are. */
static int encode(enum ct_trace_format format, const struct ct_packets *in, uint8_t **out,
                  size_t *len)
{
    if (format == CT_TRACE_PLAIN) {
        *out = NULL;
        *len = in->len;
        return 0;
    }
    size_t capacity = format == CT_TRACE_ZSTD ? ZSTD_compressBound(in->len) : in->len + 1024;
    *out = malloc(capacity);
    if (!*out)
        abort();
    if (format == CT_TRACE_ZSTD) {
        *len = ZSTD_compress(*out, capacity, in->bytes, in->len, 3);
        return ZSTD_isError(*len) ? -1 : 0;
    }
    z_stream z = {0};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    z.next_in = in->bytes;
    z.avail_in = (uInt)in->len;
    z.next_out = *out;
    z.avail_out = (uInt)capacity;
    int rc = deflate(&z, Z_FINISH);
    *len = z.total_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

int ct_trace_append(const char *path, const struct ct_packets *packets, char *error,
                    size_t error_size)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    enum ct_trace_format format = fd < 0 ? CT_TRACE_UNKNOWN : format_of(path);
    if (fd < 0 || format == CT_TRACE_UNKNOWN) {
        snprintf(error, error_size, "cannot append to it: %s",
                 fd < 0 ? strerror(errno) : "not a plain, gzip or zstd trace");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uint8_t *encoded;
    size_t len;
    int rc = encode(format, packets, &encoded, &len);
    if (rc == 0 && ct_write_all(fd, encoded ? encoded : packets->bytes, len) != len)
        rc = -1;
    if (close(fd) != 0)
        rc = -1;
    if (rc)
        snprintf(error, error_size, "appending to it failed: %s", strerror(errno));
    free(encoded);
    return rc;
}
