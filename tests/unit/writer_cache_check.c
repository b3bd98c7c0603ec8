/*
 * Checks the writer's cache of packed bodies against the gap marker,
 * which a bounded trace writes from inside a flush: the flush may come
 * while a cached body is being copied into the batch, so the gap's own
 * events must leave the cache alone (perfetto/writer.c, write_event).
 * The chunks, replay and trace file are stood in for here: every flush
 * hands its bytes to this check and writes a gap of many distinct events,
 * enough to pass through every cache slot; each packet of the frames must
 * then unpack whole, on the program's sequence, as many as were written.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/perfetto/chunk_replay.h"
#include "collector/perfetto/chunks.h"
#include "collector/perfetto/trace_file.h"
#include "collector/perfetto/writer.h"
#include "common/string_table.h"
#include "perfetto_trace.pb-c.h"
#include "tests/unit/check.h"

#define EVENTS 60000
#define GAP_EVENTS 8192 /* twice the cache's slots */

static uint8_t *frames;
static size_t frames_used, flushes;
static struct ct_gap gap;

size_t ct_trace_file_compress(struct ct_trace_file *f, const void *data, size_t size)
{
    (void)f;
    uint8_t *grown = realloc(frames, frames_used + size);
    if (!grown)
        abort();
    frames = grown;
    memcpy(frames + frames_used, data, size);
    frames_used += size;
    return size;
}

void ct_trace_file_append(struct ct_trace_file *f)
{
    (void)f;
}

static struct ct_writer *writer;

void ct_chunks_make_room(struct ct_chunks *c, size_t size)
{
    (void)c, (void)size;
    const uint8_t *packets;
    flushes++;
    ct_writer_gap_packets(writer, &gap, &packets);
}

void ct_chunks_init(struct ct_chunks *c, struct ct_trace_file *file, struct ct_writer *w,
                    uint64_t max_bytes)
{
    (void)c, (void)file, (void)w, (void)max_bytes;
}
int ct_chunks_due(const struct ct_chunks *c)
{
    (void)c;
    return 0;
}
void ct_chunks_begin(struct ct_chunks *c, uint64_t start_ns)
{
    (void)c, (void)start_ns;
}
uint32_t ct_chunks_current(const struct ct_chunks *c)
{
    (void)c;
    return 0;
}
void ct_chunks_refresh_gap(struct ct_chunks *c)
{
    (void)c;
}
void ct_replay_register(struct ct_replay *r, struct ct_sequence *seq)
{
    (void)r, (void)seq;
}
void ct_replay_forget(struct ct_replay *r, struct ct_sequence *seq)
{
    (void)r, (void)seq;
}
void ct_replay_descriptor(struct ct_replay *r, struct ct_sequence *seq, uint64_t uuid,
                          const uint8_t *packed, size_t len)
{
    (void)r, (void)seq, (void)uuid, (void)packed, (void)len;
}
void ct_replay_counter(struct ct_replay *r, uint64_t uuid, uint64_t ts, int64_t value)
{
    (void)r, (void)uuid, (void)ts, (void)value;
}
void ct_replay_all(struct ct_replay *r, void (*restart)(struct ct_sequence *seq),
                   void (*describe)(struct ct_sequence *seq, const uint8_t *packed, size_t len))
{
    (void)r, (void)restart, (void)describe;
}

static uint32_t event_name, arg_name;

/* Distinct events, each cacheable had it been written to the batch. */
static void write_gap(struct ct_sequence *seq, const struct ct_gap *g)
{
    (void)g;
    for (uint64_t i = 0; i < GAP_EVENTS; i++) {
        struct ct_arg arg = {arg_name, CT_ARG_UINT, i + 1000};
        ct_write_instant(seq, 0, 1000 + i, event_name, &arg, 1);
    }
}

static uint64_t varint(const uint8_t **at)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t byte = *(*at)++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
}

/* Each packet of the frames unpacked: how many are whole and on `id`. */
static size_t whole_packets(uint32_t id, size_t *packets)
{
    size_t whole = 0;
    *packets = 0;
    for (const uint8_t *at = frames, *end = frames + frames_used; at < end;) {
        varint(&at); /* Trace.packet's tag */
        size_t len = (size_t)varint(&at);
        CtPb__TracePacket *p = ct_pb__trace_packet__unpack(NULL, len, at);
        whole += p && p->trusted_packet_sequence_id == id && p->track_event;
        if (p)
            ct_pb__trace_packet__free_unpacked(p, NULL);
        ++*packets;
        at += len;
    }
    return whole;
}

int main(void)
{
    event_name = ct_strings_intern_cstr("cached event");
    arg_name = ct_strings_intern_cstr("step");
    writer = ct_writer_create(NULL, 512 * 1024); /* a small batch: many flushes */
    ct_writer_on_gap(writer, 7, write_gap);
    struct ct_sequence seq = {0};
    ct_sequence_init(&seq, writer, 9);
    struct ct_arg arg = {arg_name, CT_ARG_UINT, 1};
    for (uint64_t i = 0; i < EVENTS; i++)
        ct_write_instant(&seq, 0, 5000 + i, event_name, &arg, 1);
    ct_writer_flush(writer);
    ct_check(flushes > 10, "the batch flushed %zu times, with a gap each", flushes);
    size_t packets, whole = whole_packets(seq.id, &packets);
    ct_check_u64(packets, EVENTS, "packets in the frames");
    ct_check_u64(whole, EVENTS, "packets whole, on the program's sequence");
    ct_sequence_release(&seq);
    free(frames);
    return ct_check_finish();
}
