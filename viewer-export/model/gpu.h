/*
 * The GPU's own timeline as the trace's GPU tracks give it (gpu.c):
 * when work ran, what each kernel cost, and where the GPU sat idle. The
 * tracks are those whose name starts with "GPU " under a process; each
 * slice is one kernel, copy or memset, said by its `gpu_kind` annotation
 * (docs/findings.md, "GPU timings").
 */
#ifndef CT_GPU_MODEL_H
#define CT_GPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "viewer-export/read/trace_decode.h"
#include "common/u64_map.h"

#define CT_GPU_GAPS 3
#define CT_GPU_TOP_KERNELS 5

struct ct_gpu_interval {
    uint64_t start, end;
};

struct ct_kernel_cost {
    const char *name;
    uint64_t count, ns;
};

struct ct_gpu_work {
    struct ct_gpu_interval *intervals; /* bounded: merged when they fill */
    size_t interval_count, interval_capacity;
    struct ct_u64_map kernel_index; /* name pointer -> index + 1 in kernels */
    struct ct_kernel_cost *kernels;
    size_t kernel_count;
    uint64_t kernel_runs, kernel_ns, copies, sets;
    /* Flow ids (their low 32 bits: CUPTI's correlation ids, dense from 1)
     * that host calls began, and that GPU work ended: one bit each. */
    struct ct_gpu_flow_bits {
        uint64_t *words;
        size_t count;
    } host_flows, gpu_flows;
    /* A bounded trace's gap carries the dropped middle's work as busy
     * blocks (ct_gpu_gap_block): each is an interval, and the time within
     * them that was idle is taken off the busy time. */
    int gap_carried;
    uint64_t gap_idle_ns;
};

/* GPU work that ended a flow, and how much of it a host call began. */
struct ct_gpu_flows {
    uint64_t gpu_work, from_host_call;
};

/* Busy time and the longest idle gaps over [from, to): gaps between two
 * pieces of work only; the idle time before the first piece (start-up) and
 * after the last (shutdown) apart, as no gap of the work's. */
struct ct_gpu_summary {
    uint64_t span_ns; /* the time summarised: `to` - `from` */
    uint64_t busy_ns;
    struct ct_gpu_gap {
        uint64_t start, ns;
    } gaps[CT_GPU_GAPS];                           /* longest first; ns 0 past the last */
    uint64_t before_first_ns, after_last_ns;       /* the whole span when there was no work */
    struct ct_kernel_cost top[CT_GPU_TOP_KERNELS]; /* by GPU time; count 0 past the last */
};

/* Notes a "cudatrace.gap_gpu" instant: a busy block of the dropped middle
 * (`start_ns`, `end_ns`, `busy_ns`), or none in one without GPU work. */
void ct_gpu_gap_block(struct ct_gpu_work *g, const struct ct_event *e);
/* Notes one slice of a GPU track. */
void ct_gpu_slice(struct ct_gpu_work *g, const struct ct_event *e);
/* Whether any GPU work was noted. */
int ct_gpu_seen(const struct ct_gpu_work *g);
void ct_gpu_summarise(const struct ct_gpu_work *g, uint64_t from, uint64_t to,
                      struct ct_gpu_summary *out);
/* Every kernel's cost, the most GPU time first (a copy the caller frees). */
struct ct_kernel_cost *ct_gpu_kernels_by_time(const struct ct_gpu_work *g);
void ct_gpu_free(struct ct_gpu_work *g);
/* The GPU's busy time within each of `count` spans (NVTX ranges). */
void ct_gpu_busy_within(const struct ct_gpu_work *g, const struct ct_gpu_interval *spans,
                        size_t count, uint64_t *busy);
/* A host call's slice that began flow `id` (0: none). */
void ct_gpu_host_flow(struct ct_gpu_work *g, uint64_t id);
struct ct_gpu_flows ct_gpu_flows(const struct ct_gpu_work *g);
/* Whether GPU work that ended flow `id` has been seen. */
int ct_gpu_flow_ended(const struct ct_gpu_work *g, uint64_t id);

#endif
