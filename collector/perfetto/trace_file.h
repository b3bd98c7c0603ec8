/*
 * The trace file the collector writes: zstd frames, appended as it goes.
 */
#ifndef CT_COLLECTOR_TRACE_FILE_H
#define CT_COLLECTOR_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* zstd's fastest level: the collector must keep up with the program, and
 * level 1 already takes a launch to a few bytes. */
#define CT_TRACE_ZSTD_LEVEL 1

/* Creates the file at `path` (or path-1, path-2, ... when taken) and writes
 * the name used back into `path`. Returns 0, an errno value, or
 * CT_ERROR_NOT_A_FILE when `path` names a device, FIFO, socket or folder. */
int ct_trace_file_open(char *path, size_t path_size);
/* Compresses encoded packets into one complete frame, held until appended;
 * returns its size, 0 when there is nothing to write. */
size_t ct_trace_file_compress(const void *data, size_t size);
/* Writes that frame at the end, readable on disk once this returns. */
void ct_trace_file_append(void);
/* Replaces the file by its first `keep` bytes, a frame of `packets` and
 * what follows `tail_from` (all on frame boundaries), atomically for a
 * reader of the path; the new frame's size in *gap_size. -1 when it could
 * not, the file unchanged. */
int ct_trace_file_splice(uint64_t keep, uint64_t tail_from, const void *packets, size_t size,
                         uint64_t *gap_size);
/* Copies the trace as it is now, followed by a frame of `packets`, to the
 * next free trace.snapshot-N.pftrace.zst beside it, whose name goes into
 * `path`. Returns 0 or an errno value; the trace itself is not touched. */
int ct_trace_file_copy(const void *packets, size_t size, char *path, size_t path_size);
void ct_trace_file_close(void);
/* The file's size now. */
uint64_t ct_trace_file_bytes(void);
/* errno of the first write that failed, or 0. */
int ct_trace_file_error(void);

#endif
