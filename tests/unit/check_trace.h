/*
 * A trace of its own for a unit check that makes a writer as the collector
 * does: a file in a new folder under /tmp, the writer over it, and the
 * trace read back once written, its zstd frames decompressed and the Trace
 * they make unpacked (check_trace.c).
 */
#ifndef CT_TESTS_UNIT_CHECK_TRACE_H
#define CT_TESTS_UNIT_CHECK_TRACE_H

#include <stdint.h>

#include "collector/perfetto/trace_file.h"
#include "collector/perfetto/writer.h"
#include "perfetto_trace.pb-c.h"

struct ct_check_trace {
    char dir[64], path[4096];
    struct ct_trace_file file;
    struct ct_writer *writer;
};

/* Makes the file and a writer of at most `max_bytes` (0: unbounded) over
 * it; 0, or -1 when it could not. */
int ct_check_trace_open(struct ct_check_trace *t, uint64_t max_bytes);
/* Flushes the writer, closes the file and reads it back: the trace, or
 * NULL, a failed check, when it does not decompress and unpack whole.
 * Freed with ct_pb__trace__free_unpacked(trace, NULL). */
CtPb__Trace *ct_check_trace_read(struct ct_check_trace *t);
/* Removes the file and its folder. */
void ct_check_trace_remove(struct ct_check_trace *t);

#endif
