/*
 * `--format perfetto` and `perfetto-gz`: the trace's packets copied byte for
 * byte into a new Trace, uncompressed or gzip, for Perfetto before v58 (which
 * reads no zstd) and other protobuf readers. Packets stream through one at
 * a time, so memory is bounded by the largest packet whatever the trace's
 * size. Each is checked to be a TracePacket, so what `report` refuses as
 * not a trace is refused here too; a cut tail ends the copy after the last
 * whole packet, which leaves a valid trace.
 */
#include <stdint.h>
#include <string.h>

#include "viewer-export/export/formats.h"
#include "perfetto_trace.pb-c.h"
#include "viewer-export/read/trace_input.h"
#include "common/varint.h"

/* Writes Trace.packet's tag and length, then the packet; 0 or -1. */
static int write_packet(struct ct_export_output *out, const uint8_t *packet, size_t size)
{
    uint8_t header[11];
    size_t n = ct_put_packet_header(header, size);
    if (ct_export_output_write(out, header, n))
        return -1;
    return ct_export_output_write(out, packet, size);
}

static int is_trace_packet(const uint8_t *packet, size_t size)
{
    CtPb__TracePacket *p = ct_pb__trace_packet__unpack(NULL, size, packet);
    int valid = p != NULL;
    ct_pb__trace_packet__free_unpacked(p, NULL);
    return valid;
}

int ct_export_perfetto(struct ct_export_job *job)
{
    struct ct_trace_input *in = ct_trace_input_open(job->trace, job->error, sizeof job->error);
    if (!in)
        return -1;
    const uint8_t *packet;
    size_t size;
    int r;
    while ((r = ct_trace_input_next(in, &packet, &size, job->error, sizeof job->error)) > 0) {
        if (!is_trace_packet(packet, size)) {
            snprintf(job->error, sizeof job->error, "packet %llu is not a valid TracePacket",
                     (unsigned long long)job->result.packets);
            r = -1;
            break;
        }
        if (write_packet(job->out, packet, size))
            break;
        job->result.packets++;
        ct_progress_update(&job->progress, ct_trace_input_bytes_read(in));
    }
    job->result.truncated = ct_trace_input_truncated(in);
    ct_trace_input_close(in);
    if (r == 0 && job->result.packets == 0) {
        snprintf(job->error, sizeof job->error, "holds no complete trace packet");
        r = -1;
    }
    return r < 0 ? -1 : 0;
}
