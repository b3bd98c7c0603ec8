/*
 * Reading back, for the unit checks that make a writer of their own, the
 * trace file it wrote: its zstd frames decompressed and the Trace message
 * they make unpacked (trace_read.c).
 */
#ifndef CT_TESTS_UNIT_TRACE_READ_H
#define CT_TESTS_UNIT_TRACE_READ_H

#include "perfetto_trace.pb-c.h"

/* The trace in the file at `path`, or NULL when it does not decompress and
 * unpack whole; freed with ct_pb__trace__free_unpacked(trace, NULL). */
CtPb__Trace *ct_trace_read(const char *path);

#endif
