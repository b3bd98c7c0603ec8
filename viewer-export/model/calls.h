/*
 * A process's CUDA calls as the report counts them (calls.c): calls, errors
 * and time per function, from the slices and, where the trace has them, the
 * threads' own totals (exact whatever the rings dropped); what the families
 * add up to (launches, synchronisation, allocator activity; a call a CUDA
 * graph captured is none of them); the errors the
 * calls failed with; and the device-memory counter's peak and final value.
 */
#ifndef CT_VIEWER_MODEL_CALLS_H
#define CT_VIEWER_MODEL_CALLS_H

#include <stdint.h>

#include "cudatrace/functions.h"

struct ct_api_stats {
    uint64_t calls, errors, total_ns;
};

/* Where device memory came from: the allocation calls (cudaMalloc and the
 * driver's cuMemAlloc), the virtual-memory API's physical memory, or the
 * CUDA graphs' allocator for memory-allocation nodes (as the runtime said
 * when asked: no call the tracer sees makes it). */
enum ct_memory_source_kind {
    CT_MEMORY_ALLOCATIONS,
    CT_MEMORY_VMM,
    CT_MEMORY_GRAPHS,
    CT_MEMORY_SOURCES
};

struct ct_call_figures {
    struct ct_api_stats api[CT_FN_COUNT];
    /* The threads' own totals, when the trace has them; then api[] is made
     * from them, and slices[] keeps how many slices each function has in
     * the trace. */
    struct ct_api_stats totals[CT_FN_COUNT];
    uint64_t slices[CT_FN_COUNT];
    /* Calls whose work a CUDA graph captured (the slice says `graph_work`):
     * no launch, allocation or free happened then. */
    uint64_t captured[CT_FN_COUNT];
    int has_totals, totals_used;
    uint64_t launches, sync_calls, sync_ns;
    uint64_t allocs, frees, failed_allocs;
    /* Live device bytes, in all and by source (the counter tracks). */
    double peak_device_bytes, final_device_bytes;
    uint64_t final_device_ts;
    struct ct_memory_source {
        double now, peak;
    } device_sources[CT_MEMORY_SOURCES];
    uint64_t unattributed_slices;     /* slices whose name is no traced function */
    uint64_t calls_failed_with[1024]; /* calls per cudaError_t below 1024 */
};

/* Adds one call slice of `fn` (an error when `result` is not 0; its work
 * captured into a graph when `captured`). */
void ct_calls_add_slice(struct ct_call_figures *c, int fn, int64_t result, uint64_t ns,
                        int captured);
/* Adds a thread's totals of `fn`, written when it ended. */
void ct_calls_add_totals(struct ct_call_figures *c, int fn, uint64_t calls, uint64_t errors,
                         uint64_t ns);
/* Once the whole trace is read: a function whose slices were dropped is
 * counted from the totals. */
void ct_calls_use_totals(struct ct_call_figures *c);
/* Notes a value of one source's device-memory counter; the total is their
 * sum at each change. */
void ct_calls_device_bytes(struct ct_call_figures *c, enum ct_memory_source_kind source,
                           uint64_t ts, double bytes);
/* Peaks the collector saw, of the total and of each source, where the
 * counter values that reached them may be gone (a bounded trace's gap). */
void ct_calls_device_peaks(struct ct_call_figures *c, double device, double allocated, double vmm);
/* Calls of `fn` whose slices the rings dropped (the totals counted them). */
uint64_t ct_calls_dropped_slices(const struct ct_call_figures *c, int fn);

#endif
