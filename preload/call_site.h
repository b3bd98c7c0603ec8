/*
 * Where a call came from: which calls carry their call site, and capturing
 * it. Slow calls always do (allocations, frees, copies, synchronisations:
 * they cost microseconds anyway), as do failed calls; launches, the hot
 * path, only one in CUDATRACE_LAUNCH_SITE_EVERY per thread, so that their
 * average added cost stays within the budget. The decision is inline and
 * costs a table lookup the compiler folds away and, for launches, one
 * thread-local decrement.
 */
#ifndef CT_PRELOAD_CALL_SITE_H
#define CT_PRELOAD_CALL_SITE_H

#include <stdint.h>

#include "cudatrace/functions.h"
#include "ring.h"

enum ct_site_rule { CT_SITE_ON_ERROR, CT_SITE_ALWAYS, CT_SITE_SAMPLED };

extern __thread int32_t ct_launch_site_countdown CT_TLS;
extern uint32_t ct_launch_site_every; /* 0: launches carry no site */
extern int ct_call_sites_on;

/* Reads CUDATRACE_CALL_SITES and CUDATRACE_LAUNCH_SITE_EVERY. */
void ct_call_sites_configure(void);
/* Loads what capturing needs (the unwinder's libgcc_s), off the hot path:
 * called when the session starts. */
void ct_call_sites_prepare(void);

static inline enum ct_site_rule ct_site_rule_of(enum ct_function fn)
{
#define CT_SITE_FAMILY(name, family, takes_stream) [CT_FN_##name] = family,
    static const unsigned char families[CT_FN_COUNT] = {CT_FOR_EACH_FUNCTION(CT_SITE_FAMILY)};
#undef CT_SITE_FAMILY
    switch ((unsigned)fn < CT_FN_COUNT ? families[fn] : CT_FAMILY_COUNT) {
    case CT_FAMILY_ALLOC_DEVICE:
    case CT_FAMILY_ALLOC_HOST:
    case CT_FAMILY_FREE_DEVICE:
    case CT_FAMILY_FREE_HOST:
    case CT_FAMILY_COPY:
    case CT_FAMILY_SET:
    case CT_FAMILY_SYNC_DEVICE:
    case CT_FAMILY_SYNC_STREAM:
    case CT_FAMILY_SYNC_EVENT:
        return CT_SITE_ALWAYS;
    case CT_FAMILY_LAUNCH:
    case CT_FAMILY_GRAPH:
        return CT_SITE_SAMPLED;
    default:
        return CT_SITE_ON_ERROR;
    }
}

/* Whether this call of `fn`, which returned `result`, carries its site. */
static inline int ct_call_site_due(enum ct_function fn, int result)
{
    switch (ct_site_rule_of(fn)) {
    case CT_SITE_ALWAYS:
        return ct_call_sites_on;
    case CT_SITE_SAMPLED:
        if (--ct_launch_site_countdown > 0)
            return result != 0 && ct_call_sites_on;
        /* The first launch of each thread, then every Nth. */
        ct_launch_site_countdown = (int32_t)ct_launch_site_every;
        return ct_launch_site_every != 0 || (result != 0 && ct_call_sites_on);
    default:
        return result != 0 && ct_call_sites_on;
    }
}

/* Captures the calling thread's site and sends it ahead of the call's
 * record, keyed by the call's begin clock. `caller` is the hook's return
 * address. A `kept` call's site waits for room like the call's record. */
void ct_call_site_capture(uint64_t begin, const void *caller, int kept);

#endif
