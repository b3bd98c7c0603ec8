/*
 * The hang finding: a thread that was still inside one CUDA call, longer
 * than `hang_ns`, when the trace ended (the process killed by its
 * launcher's watchdog, or ended some other way while it waited). The
 * collector marks such a call in_flight (model/report.c reads them); the
 * finding names the call, the thread and how long it had waited, the
 * longest first. A call that blocks the host waits for the GPU, so the
 * classic case is a kernel or a collective that never completed: one rank
 * of a job missing from an all-reduce leaves every other rank here.
 */
#include "viewer-export/findings/findings.h"

#include "viewer-export/findings/thresholds.h"
#include "viewer-export/output/human_units.h"

void ct_findings_hang(const struct ct_process_report *p, struct ct_findings *out)
{
    for (size_t i = 0; i < p->run.inflight_count; i++) {
        const struct ct_inflight_call *call = &p->run.inflight[i];
        uint64_t inside = p->run.end_ns > call->since_ns ? p->run.end_ns - call->since_ns : 0;
        if ((double)inside < ct_thresholds.hang_ns)
            continue;
        char a[32];
        struct ct_finding *f = ct_finding_add(
            out, "hang", CT_SEVERITY_ERROR, p->pid,
            "thread %lld was inside %s for %s when the trace ended, and it never returned: "
            "the program was waiting, most often for GPU work that never completed (a kernel, "
            "or a collective another rank never joined)",
            (long long)call->tid, ct_function_name(call->fn), ct_human_time(inside, a, sizeof a));
        f->cost_ns = inside;
        ct_finding_add_number(f, "tid", (double)call->tid);
        ct_finding_add_number(f, "inside_ns", (double)inside);
        ct_finding_add_number(f, "since_ns", (double)call->since_ns);
        ct_finding_add_number(f, "threshold_ns", ct_thresholds.hang_ns);
    }
}
