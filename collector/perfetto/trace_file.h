/*
 * The trace file the collector writes: zstd frames, appended as it goes
 * (struct ct_trace_file, opened by main.c and written through the writer).
 */
#ifndef CT_COLLECTOR_TRACE_FILE_H
#define CT_COLLECTOR_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* zstd's fastest level: the collector must keep up with the program, and
 * level 1 already takes a launch to a few bytes. */
#define CT_TRACE_ZSTD_LEVEL 1

struct ZSTD_CCtx_s;

/* A compressed frame, in memory grown to fit. */
struct ct_trace_frame {
    unsigned char *data;
    size_t capacity, size;
};

struct ct_trace_file {
    int fd;
    struct ZSTD_CCtx_s *cctx;
    /* The next frame of the trace, the gap frame of a splice and the last
     * frame of a snapshot's copy. */
    struct ct_trace_frame frame, gap, closing;
    uint64_t size;
    int write_error;
    int next_snapshot; /* the number the next snapshot's copy tries first */
    char path[4096];
};

/* Creates the file at `path` (or path-1, path-2, ... when taken) and writes
 * the name used back into `path`. Returns 0, an errno value, or
 * CT_ERROR_NOT_A_FILE when `path` names a device, FIFO, socket or folder. */
int ct_trace_file_open(struct ct_trace_file *f, char *path, size_t path_size);
/* Compresses encoded packets into one complete frame, held until appended;
 * returns its size, 0 when there is nothing to write. */
size_t ct_trace_file_compress(struct ct_trace_file *f, const void *data, size_t size);
/* Writes that frame at the end, readable on disk once this returns. */
void ct_trace_file_append(struct ct_trace_file *f);
/* Replaces the file by its first `keep` bytes, a frame of `packets` and
 * what follows `tail_from` (all on frame boundaries), atomically for a
 * reader of the path; the new frame's size in *gap_size. -1 when it could
 * not, the file unchanged. */
int ct_trace_file_splice(struct ct_trace_file *f, uint64_t keep, uint64_t tail_from,
                         const void *packets, size_t size, uint64_t *gap_size);
/* Copies the trace as it is now, followed by a frame of `packets`, to the
 * next free trace.snapshot-N.pftrace.zst beside it, whose name goes into
 * `path`. Returns 0 or an errno value; the trace itself is not touched. */
int ct_trace_file_copy(struct ct_trace_file *f, const void *packets, size_t size, char *path,
                       size_t path_size);
/* Closes the file and lets go of what it held; its size and error stay. */
void ct_trace_file_close(struct ct_trace_file *f);
/* The file's size now. */
uint64_t ct_trace_file_bytes(const struct ct_trace_file *f);
/* errno of the first write that failed, or 0. */
int ct_trace_file_error(const struct ct_trace_file *f);

#endif
