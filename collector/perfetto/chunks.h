/*
 * The plan of a bounded trace file: the head, the chunks of the tail and
 * the gap between them (chunks.c). Each writer has one (perfetto/writer.c).
 */
#ifndef CT_COLLECTOR_CHUNKS_H
#define CT_COLLECTOR_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#define CT_CHUNKS_MAX 64 /* past that, the current chunk grows on */

struct ct_trace_file;
struct ct_writer;

/* The middle dropped so far, as the gap marker says it. */
struct ct_gap {
    uint64_t from_ns, to_ns; /* the start of the first dropped chunk and of the first kept */
    uint64_t bytes;          /* compressed bytes dropped */
    uint32_t chunks;         /* chunks dropped */
    uint32_t first_kept; /* the first chunk after the gap; those before, but the head, are gone */
};

struct ct_chunk {
    uint64_t offset, start_ns;
    uint32_t id;
};

struct ct_chunks {
    struct ct_trace_file *file;
    struct ct_writer *writer; /* who makes the gap marker's packets */
    uint64_t bound, head_target, chunk_target;
    /* chunk[0] is the head, at offset 0; a gap frame of gap_size bytes lies
     * between it (ending at head_end) and chunk[1]. */
    struct ct_chunk chunk[CT_CHUNKS_MAX];
    uint32_t count, next_id;
    uint64_t head_end, gap_size;
    struct ct_gap gap;
};

/* At most `max_bytes` of `file`, which `writer` writes; 0: unbounded, one
 * chunk for ever. */
void ct_chunks_init(struct ct_chunks *c, struct ct_trace_file *file, struct ct_writer *writer,
                    uint64_t max_bytes);
/* Whether the chunk being written is full. */
int ct_chunks_due(const struct ct_chunks *c);
/* The next chunk begins at the file's end; its events after `start_ns`. */
void ct_chunks_begin(struct ct_chunks *c, uint64_t start_ns);
uint32_t ct_chunks_current(const struct ct_chunks *c);
/* Before a frame of `size` bytes is appended: drops the oldest whole tail
 * chunks, if need be, so that the file stays within its bound. */
void ct_chunks_make_room(struct ct_chunks *c, size_t size);

/* Writes the gap marker again, with what its writer knows now. */
void ct_chunks_refresh_gap(struct ct_chunks *c);

#endif
