/*
 * A bounded trace (CUDATRACE_MAX_MB) is a flight recorder: it keeps its
 * head (the first quarter of the bound: the libraries, the first steps)
 * and as much of the most recent detail as fits, and drops the middle in
 * whole chunks, the oldest first, when the next frame would not fit. Each
 * chunk begins where the builder found no slice half written, and reads
 * alone (chunk_replay.c), so any chunks may go. A dropped range is said in
 * a gap frame between the head and the first kept chunk, written again as
 * the gap grows (perfetto/trace_file.c splices the file). The tail is cut
 * into about TAIL_CHUNKS chunks: fewer would drop more at a time, more
 * would copy the file more often (each drop copies it once).
 */
#include "collector/perfetto/chunks.h"

#include "collector/perfetto/trace_file.h"
#include "collector/perfetto/writer.h"

#define TAIL_CHUNKS 8
#define GAP_RESERVE (64 * 1024) /* room kept for the gap frame, more than it takes */

void ct_chunks_init(struct ct_chunks *c, struct ct_trace_file *file, struct ct_writer *writer,
                    uint64_t max_bytes)
{
    *c = (struct ct_chunks){.file = file, .writer = writer, .count = 1, .next_id = 1};
    c->bound = max_bytes;
    c->head_target = max_bytes / 4;
    c->chunk_target = (max_bytes - c->head_target - GAP_RESERVE) / TAIL_CHUNKS;
}

int ct_chunks_due(const struct ct_chunks *c)
{
    if (!c->bound || c->count == CT_CHUNKS_MAX)
        return 0;
    uint64_t written = ct_trace_file_bytes(c->file) - c->chunk[c->count - 1].offset;
    return written >= (c->count == 1 ? c->head_target : c->chunk_target);
}

void ct_chunks_begin(struct ct_chunks *c, uint64_t start_ns)
{
    if (!c->bound || c->count == CT_CHUNKS_MAX)
        return;
    uint64_t end = ct_trace_file_bytes(c->file);
    if (c->count == 1)
        c->head_end = end;
    c->chunk[c->count++] = (struct ct_chunk){end, start_ns, c->next_id++};
}

uint32_t ct_chunks_current(const struct ct_chunks *c)
{
    return c->chunk[c->count - 1].id;
}

/* How many of the oldest tail chunks must go for `size` more bytes to fit;
 * never the chunk being written. */
static uint32_t chunks_to_drop(const struct ct_chunks *c, size_t size)
{
    uint64_t reserve = c->gap_size ? 0 : GAP_RESERVE, file = ct_trace_file_bytes(c->file);
    uint32_t drop = 0;
    while (drop + 2 < c->count &&
           file - (c->chunk[1 + drop].offset - c->chunk[1].offset) + size + reserve > c->bound)
        drop++;
    return drop;
}

/* The gap once chunk[1..1+drop) are gone too. */
static struct ct_gap grown_gap(const struct ct_chunks *c, uint32_t drop)
{
    struct ct_gap g = c->gap;
    if (!g.chunks)
        g.from_ns = c->chunk[1].start_ns;
    g.bytes += c->chunk[1 + drop].offset - c->chunk[1].offset;
    g.chunks += drop;
    g.to_ns = c->chunk[1 + drop].start_ns;
    g.first_kept = c->chunk[1 + drop].id;
    return g;
}

/* Drops chunk[1..1+drop) and writes the gap marker again. */
static void splice_gap(struct ct_chunks *c, uint32_t drop)
{
    struct ct_gap g = drop ? grown_gap(c, drop) : c->gap;
    const uint8_t *packets;
    size_t packets_size = ct_writer_gap_packets(c->writer, &g, &packets);
    uint64_t kept_from = c->chunk[1 + drop].offset, new_gap_size;
    if (ct_trace_file_splice(c->file, c->head_end, kept_from, packets, packets_size, &new_gap_size))
        return; /* the file as it was: it grows past the bound rather than break */
    c->gap = g;
    c->gap_size = new_gap_size;
    uint64_t moved_to = c->head_end + c->gap_size;
    c->count -= drop;
    for (uint32_t i = 1; i < c->count; i++) {
        c->chunk[i] = c->chunk[i + drop];
        c->chunk[i].offset = c->chunk[i].offset - kept_from + moved_to;
    }
}

void ct_chunks_make_room(struct ct_chunks *c, size_t size)
{
    uint32_t drop = c->bound ? chunks_to_drop(c, size) : 0;
    if (drop)
        splice_gap(c, drop);
}

void ct_chunks_refresh_gap(struct ct_chunks *c)
{
    if (c->gap.chunks)
        splice_gap(c, 0);
}
