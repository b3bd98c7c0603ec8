/*
 * `--format perfetto` and `perfetto-gz`: the trace's packets copied byte for
 * byte into a new Trace, uncompressed or gzip, for Perfetto before v58 (which
 * reads no zstd) and other protobuf readers. The packets go through the
 * decoder as for every other format, one at a time, and are copied as it
 * takes them: what `report` refuses (a packet that is no TracePacket or
 * costs too much to decode, a trace of another format) is refused here too,
 * and memory holds the interning tables, not the events (no slices are
 * paired for a copy). A cut tail ends the copy after the last whole packet,
 * which leaves a valid trace.
 */
#include <stdint.h>

#include "viewer-export/export/formats.h"
#include "common/varint.h"

/* Writes Trace.packet's tag and length, then the packet. A write error is
 * kept by the output, which reports it at the end. */
static void write_packet(void *ctx, const uint8_t *packet, size_t size)
{
    struct ct_export_job *job = ctx;
    uint8_t header[11];
    size_t n = ct_put_packet_header(header, size);
    if (ct_export_output_write(job->out, header, n) == 0)
        ct_export_output_write(job->out, packet, size);
}

static void on_progress(void *ctx, uint64_t bytes_read)
{
    struct ct_export_job *job = ctx;
    ct_progress_update(&job->progress, bytes_read);
}

int ct_export_perfetto(struct ct_export_job *job)
{
    struct ct_trace_visitor visitor = {.ctx = job, .packet = write_packet, .progress = on_progress};
    return ct_trace_decode(job->trace, &visitor, &job->result, job->error, sizeof job->error);
}
