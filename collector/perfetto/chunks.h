/*
 * The plan of a bounded trace file: the head, the chunks of the tail and
 * the gap between them (chunks.c).
 */
#ifndef CT_COLLECTOR_CHUNKS_H
#define CT_COLLECTOR_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

/* At most `max_bytes` of file; 0: unbounded, one chunk for ever. */
void ct_chunks_bound(uint64_t max_bytes);
/* Whether the chunk being written is full. */
int ct_chunks_due(void);
/* The next chunk begins at the file's end; its events after `start_ns`. */
void ct_chunks_begin(uint64_t start_ns);
uint32_t ct_chunks_current(void);
/* Before a frame of `size` bytes is appended: drops the oldest whole tail
 * chunks, if need be, so that the file stays within its bound. */
void ct_chunks_make_room(size_t size);

/* Writes the gap marker again, with what its writer knows now. */
void ct_chunks_refresh_gap(void);

#endif
