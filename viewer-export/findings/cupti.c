/*
 * Findings about the GPU's side of the trace itself: that CUPTI could not
 * be used although there was a GPU to trace (info: the trace then has the
 * hooked calls but no GPU timings, and says why; a process with no driver
 * or device gets no finding, since there was nothing to time and the
 * driver's findings name the problem, nor does one whose driver findings
 * already explain it); that the program took CUPTI over part way (info:
 * cudatrace gave it up so that the program's own profiler works); and that CUPTI dropped activity
 * records (a warning: the GPU timings, and every figure drawn from them,
 * undercount).
 */
#include <string.h>

#include "viewer-export/findings/findings.h"
#include "cudatrace/trace_names.h"

/* Whether a finding about the process's driver (missing, a stub, too old)
 * already explains why there is nothing for CUPTI to time. */
static int driver_problem(const struct ct_findings *found, int32_t pid)
{
    for (size_t i = 0; i < found->count; i++)
        if (found->items[i].pid == pid &&
            ct_finding_family(found->items[i].id) == CT_FINDING_FAMILY_DRIVER)
            return 1;
    return 0;
}

void ct_findings_cupti(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_cupti_report *c = &p->cupti;
    if (!c->state || strcmp(c->state, ct_value_cupti_no_gpu) == 0 || driver_problem(out, p->pid))
        return; /* nothing to time, and the driver's findings say why */
    if (strcmp(c->state, ct_value_cupti_unavailable) == 0) {
        ct_finding_add(out, CT_FINDING_CUPTI_UNAVAILABLE, p->pid,
                       "no GPU timings: CUPTI was not used (%s); calls were traced through the "
                       "runtime's exported functions only",
                       c->reason);
        return;
    }
    if (strcmp(c->state, ct_value_cupti_yielded) == 0)
        ct_finding_add(out, CT_FINDING_CUPTI_YIELDED, p->pid,
                       "GPU timings cover only the start of the run: %s", c->reason);
    if (c->dropped) {
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_CUPTI_DROPPED, p->pid,
            "CUPTI dropped %llu GPU activity records (no activity buffer was free): GPU busy "
            "time and kernel counts undercount",
            (unsigned long long)c->dropped);
        ct_finding_add_number(f, "dropped", (double)c->dropped);
    }
    if (c->incomplete || c->untimed) {
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_CUPTI_UNTIMED, p->pid,
            "CUPTI handed over GPU work that gives no time: %llu activity buffers ended at a "
            "record it had not completed (reading a buffer stops there, as CUPTI's "
            "documentation says, so what followed in it is lost too) and %llu records had no "
            "timestamps (CUPTI could not collect them): that work is not on the GPU timeline, "
            "and GPU busy time and kernel counts undercount",
            (unsigned long long)c->incomplete, (unsigned long long)c->untimed);
        ct_finding_add_number(f, "incomplete", (double)c->incomplete);
        ct_finding_add_number(f, "untimed", (double)c->untimed);
    }
}
