/*
 * A Python stack as a Perfetto callstack sample (TracePacket.perf_sample)
 * on the host sampler's sequence, with its frames interned there, so the
 * UI shows the samples on the thread's track and in its flame graph, and
 * the report finds the threads' and workers' Python lines in them.
 */
#ifndef CT_COLLECTOR_HOST_PYTHON_SAMPLES_H
#define CT_COLLECTOR_HOST_PYTHON_SAMPLES_H

#include <stdint.h>

#include "collector/host_sampling/python_stacks.h"
#include "collector/perfetto/writer.h"
#include "common/u64_map.h"

struct ct_python_callstack;

/* The distinct callstacks so far, and what the sequence they were last
 * written on has defined. All zero is none yet. */
struct ct_python_samples {
    struct ct_python_callstack *callstacks;
    size_t callstack_count;
    struct ct_u64_map callstack_index; /* hash -> iid */
    /* What the sequence has defined, by table: iid -> 1; for `defined_on`. */
    struct ct_u64_map defined_names, defined_frames, defined_mappings, defined_stacks;
    uint32_t defined_on;
};

/* Writes `stack` (innermost first) as thread `tid` of process `pid`'s
 * sample at `ts_ns` on `seq`, defining what it uses that `seq` lacks. */
void ct_python_sample_write(struct ct_python_samples *p, struct ct_sequence *seq, int32_t pid,
                            int32_t tid, uint64_t ts_ns, const struct ct_py_stack *stack);
void ct_python_samples_free(struct ct_python_samples *p);

#endif
