/*
 * A process's training steps (steps.c): named, marked by the program or
 * found in its calls, their times over the run and what each step is made
 * of; what the report's `steps` section, the step findings, the steps
 * track and the exports read.
 */
#ifndef CT_REPORT_STEPS_H
#define CT_REPORT_STEPS_H

#include <stddef.h>
#include <stdint.h>

struct ct_process_report;

#define CT_SLOW_STEPS 16 /* slow steps listed, the slowest first */

struct ct_step_time {
    size_t step; /* counted from 1 */
    uint64_t ns;
};

/* One step as it ran, and what it was made of: the GPU's busy time (0
 * without GPU timings, exact), the time in synchronising calls and in CUDA
 * calls, and of the rest (outside CUDA calls: host work, an input wait) the
 * step's thread on a CPU and asleep, from the host sampler (0 without it);
 * its launches (kernels and graphs), its copies, their bytes and the time
 * in them, and the live device memory at its end. All but the GPU's from
 * the report's timelines over the run, of 256 spans (4096 for launches and
 * copies): to within a span either side. */
struct ct_step {
    uint64_t start, ns;
    uint64_t gpu_busy_ns, sync_ns, in_cuda_ns;
    uint64_t host_running_ns, host_waiting_ns;
    uint64_t cpu_wait_ns; /* the thread runnable, waiting for a CPU (host sampler) */
    uint64_t launches, copies, copy_ns, copy_bytes;
    uint64_t memory_end_bytes;
};

struct ct_steps {
    /* Where the steps came from, as the report's steps.source says it:
     * "nvtx:NAME" (the ranges named NAME, up to a '#' as in PyTorch's
     * ProfilerStep#N), "nvtx-mark:NAME", "profiler:..." (cudaProfilerStart
     * and Stop windows), "inferred:CALLS" (CALLS ended each step) or
     * "CUDATRACE_STEP=SPEC"; and the thread that made them (0: not known). */
    char source[256];
    int64_t tid;
    size_t count; /* numbered, in all[]: those the trace kept */
    int cut;      /* more steps than are kept: those past `count` are not counted */
    /* A bounded trace's dropped middle: the NVTX steps in it (counted and in
     * the figures, not numbered: the worst's number is 0 when it is one),
     * or for steps found in the calls, that those in it are not counted. */
    size_t in_gap;
    int gap_uncounted;
    uint64_t first_ns; /* step 1, apart: warm-up */
    /* The first steps said apart as warm-up: 1, 2 for steps found in the
     * calls (0 when there are fewer than 3). */
    size_t warmup;
    /* Over steps warmup + 1 to count, and those in the dropped middle. */
    uint64_t median_ns, p90_ns, p99_ns;
    struct ct_step_time worst;
    struct ct_step_time slow[CT_SLOW_STEPS];
    size_t slow_count;
    /* The median step, and what it was made of (all[median_step.step - 1]). */
    struct ct_step_time median_step;
    struct ct_step *all; /* each step in time order, step N at all[N - 1] */
};

/* Finds `p`'s steps once every event is in (model/report.c): the many
 * readers of them (the report's sections and findings, the exports, the
 * summary) share one finding, which over a long run's steps costs more
 * than any of them. */
void ct_steps_settle(struct ct_process_report *p);
/* The steps of `p`, NULL when it has none. */
const struct ct_steps *ct_steps_of(const struct ct_process_report *p);
/* Moves them out of `p`, for a reader that outlives the report (the
 * chrome-json export); 0 when it has none. ct_steps_free frees them. */
int ct_steps_take(struct ct_process_report *p, struct ct_steps *out);
void ct_steps_free(struct ct_steps *s);

#endif
