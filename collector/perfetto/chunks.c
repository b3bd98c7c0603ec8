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
#define MAX_CHUNKS 64           /* past that, the current chunk grows on */
#define GAP_RESERVE (64 * 1024) /* room kept for the gap frame, more than it takes */

struct chunk {
    uint64_t offset, start_ns;
    uint32_t id;
};

static uint64_t bound, head_target, chunk_target;
/* chunks[0] is the head, at offset 0; a gap frame of gap_size bytes lies
 * between it (ending at head_end) and chunks[1]. */
static struct chunk chunks[MAX_CHUNKS];
static uint32_t count = 1, next_id = 1;
static uint64_t head_end, gap_size;
static struct ct_gap gap;

void ct_chunks_bound(uint64_t max_bytes)
{
    bound = max_bytes;
    head_target = max_bytes / 4;
    chunk_target = (max_bytes - head_target - GAP_RESERVE) / TAIL_CHUNKS;
}

int ct_chunks_due(void)
{
    if (!bound || count == MAX_CHUNKS)
        return 0;
    uint64_t written = ct_trace_file_bytes() - chunks[count - 1].offset;
    return written >= (count == 1 ? head_target : chunk_target);
}

void ct_chunks_begin(uint64_t start_ns)
{
    if (!bound || count == MAX_CHUNKS)
        return;
    uint64_t end = ct_trace_file_bytes();
    if (count == 1)
        head_end = end;
    chunks[count++] = (struct chunk){end, start_ns, next_id++};
}

uint32_t ct_chunks_current(void)
{
    return chunks[count - 1].id;
}

/* How many of the oldest tail chunks must go for `size` more bytes to fit;
 * never the chunk being written. */
static uint32_t chunks_to_drop(size_t size)
{
    uint64_t reserve = gap_size ? 0 : GAP_RESERVE, file = ct_trace_file_bytes();
    uint32_t drop = 0;
    while (drop + 2 < count &&
           file - (chunks[1 + drop].offset - chunks[1].offset) + size + reserve > bound)
        drop++;
    return drop;
}

/* The gap once chunks[1..1+drop) are gone too. */
static struct ct_gap grown_gap(uint32_t drop)
{
    struct ct_gap g = gap;
    if (!g.chunks)
        g.from_ns = chunks[1].start_ns;
    g.bytes += chunks[1 + drop].offset - chunks[1].offset;
    g.chunks += drop;
    g.to_ns = chunks[1 + drop].start_ns;
    g.first_kept = chunks[1 + drop].id;
    return g;
}

/* Drops chunks[1..1+drop) and writes the gap marker again. */
static void splice_gap(uint32_t drop)
{
    struct ct_gap g = drop ? grown_gap(drop) : gap;
    const uint8_t *packets;
    size_t packets_size = ct_writer_gap_packets(&g, &packets);
    uint64_t kept_from = chunks[1 + drop].offset, new_gap_size;
    if (ct_trace_file_splice(head_end, kept_from, packets, packets_size, &new_gap_size))
        return; /* the file as it was: it grows past the bound rather than break */
    gap = g;
    gap_size = new_gap_size;
    uint64_t moved_to = head_end + gap_size;
    count -= drop;
    for (uint32_t i = 1; i < count; i++) {
        chunks[i] = chunks[i + drop];
        chunks[i].offset = chunks[i].offset - kept_from + moved_to;
    }
}

void ct_chunks_make_room(size_t size)
{
    uint32_t drop = bound ? chunks_to_drop(size) : 0;
    if (drop)
        splice_gap(drop);
}

void ct_chunks_refresh_gap(void)
{
    if (gap.chunks)
        splice_gap(0);
}
