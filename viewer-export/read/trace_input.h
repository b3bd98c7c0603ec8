/*
 * Reading a trace file's packets, whatever its compression.
 */
#ifndef CT_TRACE_INPUT_H
#define CT_TRACE_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ct_trace_input;

enum ct_trace_format { CT_TRACE_UNKNOWN, CT_TRACE_PLAIN, CT_TRACE_GZIP, CT_TRACE_ZSTD };

/* What a file's first `n` bytes say it is: a zstd frame, a gzip member,
 * plain packets (a Trace.packet tag), or none of those. */
enum ct_trace_format ct_trace_format_of(const unsigned char *head, size_t n);

/* Opens `path`; on failure returns NULL with a one-line reason in `error`. */
struct ct_trace_input *ct_trace_input_open(const char *path, char *error, size_t error_size);
/* The next TracePacket's bytes: 1 on success, 0 at the end, -1 on a
 * malformed file (reason in `error`). The bytes live until the next call. */
int ct_trace_input_next(struct ct_trace_input *in, const uint8_t **packet, size_t *size,
                        char *error, size_t error_size);
/* Whether the file ended inside a zstd frame or gzip member (a cut tail). */
int ct_trace_input_truncated(const struct ct_trace_input *in);
/* The bytes of the file read so far, to measure progress against its size. */
uint64_t ct_trace_input_bytes_read(const struct ct_trace_input *in);
void ct_trace_input_close(struct ct_trace_input *in);

#endif
