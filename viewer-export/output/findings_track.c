/*
 * `cudatrace report --annotate`: the findings written back into the trace
 * they came from, as instants on a "cudatrace findings" track in each
 * process, so they show in Perfetto beside the events they are about. The
 * report computes findings from the whole run, which the collector, writing
 * as it goes, never holds; so they are appended on request, after the run:
 * a trace is a sequence of packets, and a zstd frame, a gzip member or plain
 * packets added at the end extend it in its own format. The packets go on a
 * sequence of their own and name everything inline, so they need nothing
 * from the collector's interning. A trace that already has the track is
 * refused, so annotating twice cannot double the findings.
 */
#include "viewer-export/output/findings_track.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "cudatrace/trace_names.h"
#include "perfetto_trace.pb-c.h"
#include "viewer-export/read/trace_input.h"
#include "common/varint.h"
#include "common/write_all.h"

#define SEQUENCE_ID 0x7ffffff0u /* far from the collector's small ids */
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define MAX_ANNOTATIONS 24

struct packets {
    uint8_t *bytes;
    size_t len, capacity;
};

/* Appends one TracePacket as a Trace.packet field. */
static void add_packet(struct packets *out, const CtPb__TracePacket *p)
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

static uint64_t track_of(const struct ct_process_report *p)
{
    return (p->uuid ^ 0x66696e64696e6773ull) | 1; /* "findings" */
}

static void add_track(struct packets *out, const struct ct_process_report *p)
{
    CtPb__TrackDescriptor track = CT_PB__TRACK_DESCRIPTOR__INIT;
    track.has_uuid = track.has_parent_uuid = 1;
    track.uuid = track_of(p);
    track.parent_uuid = p->uuid;
    track.name = (char *)ct_track_findings;
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    packet.has_trusted_packet_sequence_id = packet.has_sequence_flags = 1;
    packet.trusted_packet_sequence_id = SEQUENCE_ID;
    packet.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED;
    packet.track_descriptor = &track;
    add_packet(out, &packet);
}

struct annotations {
    CtPb__DebugAnnotation items[MAX_ANNOTATIONS];
    CtPb__DebugAnnotation *list[MAX_ANNOTATIONS];
    char site_names[3][24], site_texts[3][700];
    size_t count;
};

static CtPb__DebugAnnotation *annotation(struct annotations *a, const char *name)
{
    CtPb__DebugAnnotation *d = &a->items[a->count];
    *d = (CtPb__DebugAnnotation)CT_PB__DEBUG_ANNOTATION__INIT;
    d->name = (char *)name;
    a->list[a->count++] = d;
    return d;
}

static void describe(struct annotations *a, const struct ct_finding *f)
{
    annotation(a, ct_key_id)->string_value = (char *)f->id;
    annotation(a, ct_key_severity)->string_value = (char *)ct_severity_name(f->severity);
    annotation(a, ct_key_message)->string_value = (char *)f->message;
    if (f->where)
        annotation(a, ct_key_site)->string_value = (char *)f->where;
    for (int i = 0; i < f->number_count && a->count < MAX_ANNOTATIONS - 3; i++) {
        CtPb__DebugAnnotation *d = annotation(a, f->numbers[i].key);
        d->has_double_value = 1;
        d->double_value = f->numbers[i].value;
    }
    for (int i = 0; i < f->site_count; i++) {
        snprintf(a->site_names[i], sizeof a->site_names[i], ct_key_top_site, i + 1);
        snprintf(a->site_texts[i], sizeof a->site_texts[i], "%s: %.0f%% (%llu calls)",
                 f->sites[i].site, 100 * f->sites[i].share, (unsigned long long)f->sites[i].calls);
        annotation(a, a->site_names[i])->string_value = a->site_texts[i];
    }
}

/* An oom sits at the failed call; the others sum up the run, at its end. */
static uint64_t time_of(const struct ct_finding *f, const struct ct_process_report *p)
{
    if (strcmp(f->id, "oom") == 0 && p->usage.oom_ts)
        return p->usage.oom_ts;
    return p->run.end_ns;
}

static void add_finding(struct packets *out, const struct ct_finding *f,
                        const struct ct_process_report *p)
{
    static struct annotations a;
    memset(&a, 0, sizeof a);
    describe(&a, f);
    char name[128];
    snprintf(name, sizeof name, ct_event_finding, ct_severity_name(f->severity), f->id);
    CtPb__TrackEvent event = CT_PB__TRACK_EVENT__INIT;
    event.has_type = event.has_track_uuid = 1;
    event.type = CT_PB__TRACK_EVENT__TYPE__TYPE_INSTANT;
    event.track_uuid = track_of(p);
    event.name = name;
    event.n_debug_annotations = a.count;
    event.debug_annotations = a.list;
    CtPb__TracePacket packet = CT_PB__TRACE_PACKET__INIT;
    packet.has_trusted_packet_sequence_id = packet.has_timestamp = 1;
    packet.trusted_packet_sequence_id = SEQUENCE_ID;
    packet.timestamp = time_of(f, p);
    packet.track_event = &event;
    add_packet(out, &packet);
}

static const struct ct_process_report *process_of(const struct ct_report *r, int32_t pid)
{
    for (size_t i = 0; i < r->process_count; i++)
        if (r->processes[i].pid == pid && r->processes[i].uuid)
            return &r->processes[i];
    return NULL;
}

static void build(struct packets *out, const struct ct_report *r, const struct ct_findings *f)
{
    for (size_t i = 0; i < r->process_count; i++) {
        const struct ct_process_report *p = &r->processes[i];
        int any = 0;
        for (size_t k = 0; k < f->count; k++)
            any |= f->items[k].pid == p->pid;
        if (any && p->uuid)
            add_track(out, p);
    }
    for (size_t k = 0; k < f->count; k++) {
        const struct ct_process_report *p = process_of(r, f->items[k].pid);
        if (p)
            add_finding(out, &f->items[k], p);
    }
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
static int encode(enum ct_trace_format format, const struct packets *in, uint8_t **out, size_t *len)
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

int ct_findings_annotate(const char *path, const struct ct_report *report,
                         const struct ct_findings *findings, char *error, size_t error_size)
{
    if (report->annotated) {
        snprintf(error, error_size, "already has its \"%s\" track", ct_track_findings);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    enum ct_trace_format format = fd < 0 ? CT_TRACE_UNKNOWN : format_of(path);
    if (fd < 0 || format == CT_TRACE_UNKNOWN) {
        snprintf(error, error_size, "cannot append to it: %s",
                 fd < 0 ? strerror(errno) : "not a plain, gzip or zstd trace");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct packets packets = {0};
    build(&packets, report, findings);
    uint8_t *encoded;
    size_t len;
    int rc = encode(format, &packets, &encoded, &len);
    if (rc == 0 && ct_write_all(fd, encoded ? encoded : packets.bytes, len) != len)
        rc = -1;
    if (close(fd) != 0)
        rc = -1;
    if (rc)
        snprintf(error, error_size, "appending the findings failed: %s", strerror(errno));
    free(encoded);
    free(packets.bytes);
    return rc;
}
