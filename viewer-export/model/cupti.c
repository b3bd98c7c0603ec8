/*
 * What became of CUPTI in a process (cupti.h), from the "cudatrace.cupti"
 * instant (active with its library, or why not) and the "cudatrace.gpu"
 * instant the collector writes at the end (the totals, and how well GPU
 * times were mapped onto the trace's clock), and the latest
 * "cudatrace.gpu_unread" (the records that gave no time, so far).
 */
#include "viewer-export/model/cupti.h"
#include "cudatrace/trace_names.h"

#include <string.h>

static void read_cupti_state(struct ct_cupti_report *c, const struct ct_event *e)
{
    c->state = ct_event_text(e, ct_key_state);
    if (strcmp(c->state, ct_value_cupti_active) == 0) {
        c->library = ct_event_text(e, ct_key_library);
    } else {
        c->reason = ct_event_text(e, ct_key_reason);
        c->reason_ns = e->ts;
    }
    c->version = ct_event_int(e, ct_key_cupti_version, 0);
    c->result = ct_event_int(e, ct_key_cupti_result, 0);
}

static void read_cupti_totals(struct ct_cupti_report *c, const struct ct_event *e)
{
    c->finished = 1;
    c->kernels = (uint64_t)ct_event_int(e, ct_key_kernels, 0);
    c->memcpys = (uint64_t)ct_event_int(e, ct_key_memcpys, 0);
    c->memsets = (uint64_t)ct_event_int(e, ct_key_memsets, 0);
    c->dropped = (uint64_t)ct_event_int(e, ct_key_cupti_dropped, 0);
    c->unmapped = (uint64_t)ct_event_int(e, ct_key_unmapped, 0);
    c->clock_samples = (uint64_t)ct_event_int(e, ct_key_clock_samples, 0);
    c->clock_reading_error_ns = (uint64_t)ct_event_int(e, ct_key_clock_reading_error_ns, 0);
    c->clock_drift_ns = (uint64_t)ct_event_int(e, ct_key_clock_drift_ns, 0);
    c->delivery_median_ns = (uint64_t)ct_event_int(e, ct_key_delivery_median_ns, 0);
    c->delivery_max_ns = (uint64_t)ct_event_int(e, ct_key_delivery_max_ns, 0);
}

int ct_cupti_instant(struct ct_cupti_report *c, const struct ct_event *e)
{
    if (strcmp(e->name, ct_event_cupti) == 0)
        read_cupti_state(c, e);
    else if (strcmp(e->name, ct_event_gpu_totals) == 0)
        read_cupti_totals(c, e);
    else if (strcmp(e->name, ct_event_gpu_unread) == 0) {
        c->incomplete = (uint64_t)ct_event_int(e, ct_key_incomplete, 0);
        c->untimed = (uint64_t)ct_event_int(e, ct_key_untimed, 0);
    } else
        return 0;
    return 1;
}

uint64_t ct_cupti_gpu_end(const struct ct_cupti_report *c, uint64_t end)
{
    return c->state && strcmp(c->state, ct_value_cupti_yielded) == 0 && c->reason_ns ? c->reason_ns
                                                                                     : end;
}
