/*
 * How a process used CUDA, gathered slice by slice for the usage findings
 * (findings/usage.c): time in launches, time blocked in synchronising calls,
 * async copies from pageable memory, small copies, the live allocations and
 * the low points of live device bytes over time, failed and slow
 * allocations, each with the call sites that carry the cost.
 */
#ifndef CT_USAGE_MODEL_H
#define CT_USAGE_MODEL_H

#include <stdint.h>

#include "viewer-export/model/gpu.h"
#include "viewer-export/model/holders.h"
#include "viewer-export/model/pools.h"
#include "viewer-export/model/timeline.h"
#include "viewer-export/read/trace_decode.h"
#include "common/call_cost.h"
#include "common/time_order.h"
#include "common/u64_map.h"
#include "common/vmm_ledger.h"

/* What one call site (the `site` annotation) cost in one respect. */
struct ct_site_cost {
    const char *site;
    uint64_t calls, ns, bytes;
};

struct ct_site_costs {
    struct ct_u64_map index; /* site pointer -> index + 1 */
    struct ct_site_cost *items;
    size_t count;
    uint64_t calls_with_site;
};

struct ct_live_block {
    uint64_t ptr, bytes, ts;
    uint64_t blocks; /* 1, or more in a sum a bounded trace's gap made (ct_usage_gap_memory) */
    const char *site;
    const char *library; /* the CUDA library that allocated it (holders.h), or NULL */
};

struct ct_thread_wait {
    int64_t tid;
    uint64_t sync_calls, sync_ns;
};

#define CT_USAGE_LARGEST 3

/* An allocation's or free's time, or those of a bounded trace's gap that
 * fell in one duration bucket: `calls` that took `total_ns`, `ns` each. */
struct ct_slow_call {
    uint64_t ns, calls, total_ns;
    const char *site;
};

/* One NVTX range as it ran, for the GPU's busy time within it. */
struct ct_nvtx_span {
    struct ct_gpu_interval span;
    const char *name;
    int64_t tid;
};

/* NVTX ranges kept with their span, first ones first. */
#define CT_NVTX_SPANS (1u << 20)

struct ct_usage {
    struct ct_site_costs launch_sites, sync_sites, pageable_sites, small_copy_sites;
    struct ct_site_costs nvtx_ranges; /* by range name: how often, how long in all */
    struct ct_nvtx_span *nvtx_spans;  /* each range (up to CT_NVTX_SPANS) */
    size_t nvtx_span_count, nvtx_span_capacity;
    /* NVTX marks whose name says step (up to CT_NVTX_SPANS), their time
     * as the span's start and end, and their names' tally. */
    struct ct_nvtx_span *step_marks;
    size_t step_mark_count;
    struct ct_site_costs step_mark_names;
    uint64_t first_call_ns;         /* the first call's begin: where the CUDA part starts */
    uint64_t sync_calls, sync_ns;   /* every call that blocked the host */
    struct ct_u64_map thread_index; /* tid + 1 -> index + 1 in threads */
    struct ct_thread_wait *threads; /* the same, per thread */
    size_t thread_count;
    uint64_t pageable_copies, pageable_bytes, pageable_ns;
    uint64_t small_copies, small_copy_bytes;
    struct ct_pinned_memory pinned;    /* host memory the runtime pinned */
    struct ct_time_order memory_order; /* device allocations and frees, until settled */
    struct ct_u64_map live;            /* device pointer -> index + 1 in blocks */
    struct ct_vmm_ledger vmm;          /* the virtual-memory API's physical memory */
    struct ct_live_block *blocks;
    size_t block_count;
    uint64_t live_bytes;
    struct ct_holders holders;     /* of it, what each CUDA library allocated */
    struct ct_pool_reserve pools;  /* what the pools held, as the runtime said */
    struct ct_timeline low_points; /* the lowest live bytes in each span of time */
    /* The same by the number of calls made, not by time: a leak that runs in
     * milliseconds fills a run's calls though not its time. */
    struct ct_timeline low_points_by_call;
    struct ct_timeline calls_by_time; /* calls begun in each span of time */
    /* Launches (kernels and graphs) begun in each of finer spans, and copies
     * begun and the time in them: what a step is made of (model/steps.h). */
    struct ct_timeline launches_by_time, copies_by_time;
    uint64_t last_call_end_ns;
    /* Host time inside CUDA calls, and inside those that block, per span. */
    struct ct_timeline host_in_cuda, host_blocked;
    struct ct_gpu_work gpu; /* from the GPU tracks, when the trace has them */
    /* The dropped middle's tallies added (ct_usage_gap_instant): the figures
     * above, but for the timelines, the live memory and the allocations'
     * times, are the whole run's. */
    uint64_t gap_tallies;
    /* The gap's blocks and levels of live memory added (ct_usage_gap_memory):
     * the live memory and its low points are the whole run's too. */
    uint64_t gap_memory;
    /* The first failed allocation. */
    int oom;
    uint64_t oom_bytes, oom_ts, oom_live;
    uint64_t oom_live_vmm;         /* of oom_live, the virtual-memory API's physical memory */
    struct ct_holders oom_holders; /* what each CUDA library held then */
    const char *oom_site;
    struct ct_live_block oom_largest[CT_USAGE_LARGEST];
    /* A bounded trace's dropped middle's NVTX ranges that say step, by name
     * and duration bucket (`site` the name). */
    struct ct_slow_call *gap_steps;
    size_t gap_step_count;
    /* Allocation and free durations (the first CT_USAGE_MAX_TIMED). */
    struct ct_slow_call *alloc_times;
    size_t alloc_time_count;
};

#define CT_USAGE_MAX_TIMED (1u << 20)

/* Notes one call slice of function `fn` (enum ct_function) made by thread
 * `tid` (0 when unknown). */
void ct_usage_slice(struct ct_usage *u, int64_t tid, int fn, const struct ct_event *e);
/* What the CUDA graphs' allocator held from `ts` on (the trace's counter of
 * its reserve): live device memory too. */
void ct_usage_graph_memory(struct ct_usage *u, uint64_t ts, uint64_t bytes);
/* Once every slice is in: the live device memory, from the allocations and
 * frees in time order, and the graphs' allocator's. */
void ct_usage_settle(struct ct_usage *u);
/* Adds a "cudatrace.usage" instant of a bounded trace's gap: what the
 * usage findings read of the calls in its dropped middle. */
void ct_usage_gap_instant(struct ct_usage *u, const struct ct_event *e);
/* Adds a "cudatrace.live_memory" instant of a bounded trace's gap: live
 * device memory its dropped middle made and left, or the lowest and
 * highest level of it there. */
void ct_usage_gap_memory(struct ct_usage *u, const struct ct_event *e);
/* Notes a slice that is an NVTX range (its `source` is "nvtx") on thread
 * `tid`; 0 when it is not one. */
int ct_usage_nvtx_slice(struct ct_usage *u, int64_t tid, const struct ct_event *e);
/* Notes an instant that is an NVTX mark (its `source` is "nvtx") on thread
 * `tid`, keeping it when its name says step; 0 when it is not one. */
int ct_usage_nvtx_mark(struct ct_usage *u, int64_t tid, const struct ct_event *e);
/* Adds a call's cost to its site's entry (nothing when `site` is NULL). */
void ct_site_costs_add(struct ct_site_costs *t, const char *site, uint64_t ns, uint64_t bytes);
/* The same for `calls` calls that cost `ns` and `bytes` in all. */
void ct_site_costs_add_calls(struct ct_site_costs *t, const char *site, uint64_t calls, uint64_t ns,
                             uint64_t bytes);
/* What a site's cost is measured in. */
enum ct_site_measure { CT_SITE_BY_TIME, CT_SITE_BY_BYTES, CT_SITE_BY_CALLS };

double ct_site_cost_of(const struct ct_site_cost *c, enum ct_site_measure by);
/* A copy of the entries, costliest first by `by` (ties by time, bytes,
 * calls); the caller frees it. */
struct ct_site_cost *ct_site_costs_sorted(const struct ct_site_costs *t, enum ct_site_measure by);
void ct_site_costs_free(struct ct_site_costs *t);
/* The GPU's busy time within each NVTX span (a copy the caller frees), or
 * NULL without GPU timings; and the sum of it over the spans of `name`. */
uint64_t *ct_usage_nvtx_gpu_busy(const struct ct_usage *u);
uint64_t ct_usage_nvtx_gpu_busy_of(const struct ct_usage *u, const uint64_t *busy,
                                   const char *name);
void ct_usage_free(struct ct_usage *u);

#endif
