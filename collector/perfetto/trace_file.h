/*
 * The trace file the collector writes: zstd frames, appended as it goes.
 */
#ifndef CT_COLLECTOR_TRACE_FILE_H
#define CT_COLLECTOR_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Creates the file at `path` (or path-1, path-2, ... when taken) and writes
 * the name used back into `path`. Returns 0, an errno value, or
 * CT_ERROR_NOT_A_FILE when `path` names a device, FIFO, socket or folder. */
int ct_trace_file_open(char *path, size_t path_size);
/* Writes encoded packets as one complete frame, readable on disk once this
 * returns. */
void ct_trace_file_write_frame(const void *data, size_t size);
void ct_trace_file_close(void);
uint64_t ct_trace_file_bytes(void);
/* errno of the first write that failed, or 0. */
int ct_trace_file_error(void);

#endif
