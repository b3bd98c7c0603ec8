/*
 * The version of what cudatrace writes into a Perfetto trace (the names and
 * arguments of its tracks and events), as opposed to the ring format of
 * record.h. The collector states it in the first event of every trace; the
 * report refuses a trace of another version rather than misread it.
 */
#ifndef CUDATRACE_TRACE_FORMAT_H
#define CUDATRACE_TRACE_FORMAT_H

#define CT_TRACE_FORMAT 1
/* instant; args "format" and "clock" (what the host timestamps were read
 * from: "tsc", mapped to CLOCK_BOOTTIME by the collector, or "boottime") */
#define CT_TRACE_FORMAT_EVENT "cudatrace.trace"

#endif
