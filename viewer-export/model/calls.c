/*
 * A process's call figures (calls.h). Each call slice adds its call, its
 * error and its duration to its function, and its family says what else it
 * counts: a launch, a synchronisation, an allocation or a free. A thread's
 * own totals, written when it ended, are exact however many of its slices
 * the rings dropped; where the trace has them, a function whose slices fall
 * short is counted from them, and the others keep what their slices add up
 * to, which is the same count and each call's own mapped duration. The
 * error queries (cudaGetLastError, cudaPeekAtLastError) return an error
 * some other call left, so their results are not counted as failures of
 * their own.
 */
#include "viewer-export/model/calls.h"

#include <string.h>

/* Adds `calls` calls of `fn` (of which `errors` failed and `captured` had
 * their work captured into a graph, lasting `ns` in all) to the figures. */
static void tally(struct ct_call_figures *c, int fn, uint64_t calls, uint64_t errors,
                  uint64_t captured, uint64_t ns)
{
    struct ct_api_stats *s = &c->api[fn];
    s->calls += calls;
    s->errors += errors;
    s->total_ns += ns;
    uint64_t ran = calls - errors > captured ? calls - errors - captured : 0;
    switch (ct_function_family((unsigned)fn)) {
    case CT_FAMILY_LAUNCH:
        c->launches += ran;
        break;
    case CT_FAMILY_SYNC_DEVICE:
    case CT_FAMILY_SYNC_STREAM:
    case CT_FAMILY_SYNC_EVENT:
        c->sync_calls += calls;
        c->sync_ns += ns;
        break;
    case CT_FAMILY_ALLOC_DEVICE:
        c->allocs += ran;
        c->failed_allocs += errors;
        break;
    case CT_FAMILY_FREE_DEVICE:
        c->frees += ran;
        break;
    default:
        break;
    }
}

void ct_calls_add_slice(struct ct_call_figures *c, int fn, int64_t result, uint64_t ns,
                        int captured)
{
    int reports_others = fn == CT_FN_cudaGetLastError || fn == CT_FN_cudaPeekAtLastError;
    if (result > 0 && result < 1024 && !reports_others)
        c->calls_failed_with[result]++;
    c->captured[fn] += captured != 0;
    tally(c, fn, 1, result != 0, captured != 0, ns);
}

void ct_calls_add_totals(struct ct_call_figures *c, int fn, uint64_t calls, uint64_t errors,
                         uint64_t ns)
{
    struct ct_api_stats *t = &c->totals[fn];
    t->calls += calls;
    t->errors += errors;
    t->total_ns += ns;
    c->has_totals = 1;
}

void ct_calls_use_totals(struct ct_call_figures *c)
{
    if (!c->has_totals || c->totals_used)
        return;
    c->totals_used = 1;
    struct ct_api_stats from_slices[CT_FN_COUNT];
    memcpy(from_slices, c->api, sizeof c->api);
    memset(c->api, 0, sizeof c->api);
    c->launches = c->sync_calls = c->sync_ns = c->allocs = c->frees = c->failed_allocs = 0;
    for (int fn = 0; fn < CT_FN_COUNT; fn++) {
        c->slices[fn] = from_slices[fn].calls;
        const struct ct_api_stats *s =
            c->totals[fn].calls > from_slices[fn].calls ? &c->totals[fn] : &from_slices[fn];
        if (s->calls)
            tally(c, fn, s->calls, s->errors, c->captured[fn], s->total_ns);
    }
}

void ct_calls_device_bytes(struct ct_call_figures *c, enum ct_memory_source_kind source,
                           uint64_t ts, double value)
{
    struct ct_memory_source *s = &c->device_sources[source];
    s->now = value;
    if (value > s->peak)
        s->peak = value;
    double bytes = 0;
    for (int i = 0; i < CT_MEMORY_SOURCES; i++)
        bytes += c->device_sources[i].now;
    if (bytes > c->peak_device_bytes)
        c->peak_device_bytes = bytes;
    if (ts >= c->final_device_ts) {
        c->final_device_bytes = bytes;
        c->final_device_ts = ts;
    }
}

static void raise_to(double *peak, double value)
{
    if (value > *peak)
        *peak = value;
}

void ct_calls_device_peaks(struct ct_call_figures *c, double device, double allocated, double vmm)
{
    raise_to(&c->peak_device_bytes, device);
    raise_to(&c->device_sources[CT_MEMORY_ALLOCATIONS].peak, allocated);
    raise_to(&c->device_sources[CT_MEMORY_VMM].peak, vmm);
}

uint64_t ct_calls_dropped_slices(const struct ct_call_figures *c, int fn)
{
    return c->totals_used && c->api[fn].calls > c->slices[fn] ? c->api[fn].calls - c->slices[fn]
                                                              : 0;
}
