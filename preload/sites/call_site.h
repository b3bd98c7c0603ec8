/*
 * Where a call came from: which calls carry their call site, and capturing
 * it. Slow calls always do (allocations, frees, copies, synchronisations,
 * building CUDA graphs: they cost microseconds anyway), as do failed calls; launches, the hot
 * path, at most one per CUDATRACE_LAUNCH_SITE_US (1000) per thread. Sampling
 * by time rather than by count keeps the cost bounded however cheap the
 * launches: a capture (a few microseconds) per millisecond is well under 1%
 * of a thread's time and adds nothing measurable per call, and a loop that
 * spends a second launching still yields a thousand sites. The decision is
 * inline: a table lookup the compiler folds away and, for launches, one
 * compare with a thread-local clock value.
 */
#ifndef CT_PRELOAD_CALL_SITE_H
#define CT_PRELOAD_CALL_SITE_H

#include <stdint.h>

#include "cudatrace/functions.h"
#include "preload/core/capture.h"
#include "preload/core/ring.h"

enum ct_site_rule { CT_SITE_ON_ERROR, CT_SITE_ALWAYS, CT_SITE_SAMPLED };

extern __thread uint64_t ct_launch_site_next CT_TLS; /* clock of the next sampled launch */
extern uint64_t ct_launch_site_ticks;                /* clock ticks between; 0: none    */
extern int ct_call_sites_on;

/* Reads CUDATRACE_CALL_SITES and CUDATRACE_LAUNCH_SITE_US. */
void ct_call_sites_configure(void);
/* Loads what capturing needs (the unwinder's libgcc_s) and measures the
 * clock's rate for launch sampling, off the hot path: called when the
 * session starts. */
void ct_call_sites_prepare(void);

static inline enum ct_site_rule ct_site_rule_of(enum ct_function fn)
{
    switch (ct_function_family(fn)) {
    case CT_FAMILY_ALLOC_DEVICE:
    case CT_FAMILY_ALLOC_HOST:
    case CT_FAMILY_FREE_DEVICE:
    case CT_FAMILY_FREE_HOST:
    case CT_FAMILY_COPY:
    case CT_FAMILY_SET:
    case CT_FAMILY_SYNC_DEVICE:
    case CT_FAMILY_SYNC_STREAM:
    case CT_FAMILY_SYNC_EVENT:
    case CT_FAMILY_VMM:
    case CT_FAMILY_GRAPH_BUILD:
        return CT_SITE_ALWAYS;
    case CT_FAMILY_LAUNCH:
    case CT_FAMILY_GRAPH:
        return CT_SITE_SAMPLED;
    default:
        return CT_SITE_ON_ERROR;
    }
}

/* Whether this call of `fn`, which began at `begin` and returned `result`,
 * carries its site: outside a capture window only a memory call, the one
 * kind that writes a record there for the site to wait for. */
static inline int ct_call_site_due(enum ct_function fn, int result, uint64_t begin)
{
    if (!ct_function_moves_memory(fn) && !ct_capture_recording())
        return 0;
    switch (ct_site_rule_of(fn)) {
    case CT_SITE_ALWAYS:
        return ct_call_sites_on;
    case CT_SITE_SAMPLED:
        if (result != 0)
            return ct_call_sites_on;
        if (begin < ct_launch_site_next || !ct_launch_site_ticks)
            return 0;
        ct_launch_site_next = begin + ct_launch_site_ticks;
        return 1;
    default:
        return result != 0 && ct_call_sites_on;
    }
}

/* Captures the calling thread's site and sends it ahead of the call's
 * record, keyed by the call's begin clock. `caller` is the hook's return
 * address, or NULL from a CUPTI callback: the site then starts at the first
 * frame outside the CUDA stack and this library. A `kept` call's site waits
 * for room like the call's record. */
void ct_call_site_capture(uint64_t begin, const void *caller, int kept);

#endif
