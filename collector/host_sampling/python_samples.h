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

/* Writes `stack` (innermost first) as thread `tid` of process `pid`'s
 * sample at `ts_ns` on `seq`, defining what it uses that `seq` lacks. */
void ct_python_sample_write(struct ct_sequence *seq, int32_t pid, int32_t tid, uint64_t ts_ns,
                            const struct ct_py_stack *stack);
void ct_python_samples_free(void);

#endif
