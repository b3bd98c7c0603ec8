/*
 * The hang finding: a thread that was still inside one CUDA call, longer
 * than the threshold, when the trace ended (the process killed by its
 * launcher's watchdog, or ended some other way while it waited) or when a
 * snapshot of it was taken. The collector marks such a call in_flight
 * (model/report.c reads them); the finding names the call, the thread and
 * how long it had waited, the longest first, the Python line it was
 * called at where the host sampler read the thread's stack while it
 * waited, else the program's own native line that called it (its hook
 * noted the return address on entry), and, with CUPTI, what the GPU
 * still had to do: per stream, the work launched before the call began
 * that never completed, the first such kernel and where it was launched
 * (model/unfinished.c). A call that blocks the host waits for the GPU, so
 * the classic case is a kernel or a collective that never completed: one
 * rank of a job missing from an all-reduce leaves every other rank here.
 * A snapshot taken by the hang trigger judged a call stuck at
 * CUDATRACE_HANG_S, which then is the threshold, in the snapshot and in
 * the trace it was taken of, when it is the lower. In
 * the trace a hang snapshot was taken from, a call that returned since is
 * said as a warning: the job was stuck for that long, then went on.
 */
#include "viewer-export/findings/findings.h"

#include <stdio.h>
#include <string.h>

#include "common/string_table.h"
#include "cudatrace/trace_names.h"
#include "viewer-export/findings/thresholds.h"
#include "viewer-export/output/human_units.h"

#define STREAMS_SAID 3

static void lower_to_trigger(const struct ct_snapshot_mark *m, double *threshold)
{
    if (m->trigger && strcmp(m->trigger, ct_value_trigger_hang) == 0 && m->hang_ns &&
        (double)m->hang_ns < *threshold)
        *threshold = (double)m->hang_ns;
}

/* The report's threshold, or the hang trigger's where it took a snapshot
 * (this one, or one of this trace) and is the lower. */
static double threshold_ns(const struct ct_process_report *p)
{
    double threshold = ct_thresholds.hang_ns;
    lower_to_trigger(&p->run.snapshot, &threshold);
    for (size_t i = 0; i < p->run.snapshot_count; i++)
        lower_to_trigger(&p->run.snapshots[i], &threshold);
    return threshold;
}

/* "stream 7" by CUPTI's id, else by the program's handle. */
static void stream_name(const struct ct_unfinished_stream *s, char *out, size_t size)
{
    if (s->stream_id >= 0)
        snprintf(out, size, "stream %lld", (long long)s->stream_id);
    else if (s->stream == 0)
        snprintf(out, size, "the default stream");
    else
        snprintf(out, size, "stream 0x%llx", (unsigned long long)s->stream);
}

/* Appends what each stream still had to do to the message, and its sites
 * to the evidence. */
static void say_unfinished(const struct ct_process_report *p, uint64_t since_ns,
                           struct ct_finding *f)
{
    struct ct_unfinished_stream streams[STREAMS_SAID];
    size_t n =
        ct_unfinished_streams(&p->unfinished, p->run.gap.to_ns, since_ns, streams, STREAMS_SAID);
    uint64_t launches = 0;
    for (size_t i = 0; i < n; i++) {
        const struct ct_unfinished_stream *s = &streams[i];
        char name[48];
        stream_name(s, name, sizeof name);
        size_t used = strlen(f->message);
        snprintf(f->message + used, sizeof f->message - used,
                 "%s %s: %llu launched and not completed; the first, %s, launched at %s",
                 i ? ";" : ". On the GPU,", name, (unsigned long long)s->launches, s->first->what,
                 *s->first->site ? s->first->site : "an unknown site");
        f->sites[f->site_count++] = (struct ct_finding_site){s->first->site, s->launches, 0, 0, 0};
        launches += s->launches;
    }
    size_t used = strlen(f->message);
    if (n && p->cupti.dropped)
        snprintf(f->message + used, sizeof f->message - used,
                 " (CUPTI dropped %llu records: some of this work may have completed)",
                 (unsigned long long)p->cupti.dropped);
    for (int i = 0; i < f->site_count; i++)
        f->sites[i].share = (double)f->sites[i].calls / (double)launches;
    if (n) {
        if (!f->where) /* the stuck call's own line comes first */
            f->where = streams[0].first->site;
        ct_finding_add_number(f, "unfinished_launches", (double)launches);
        ct_finding_add_number(f, "unfinished_streams", (double)n);
    }
}

/* The Python line a thread stood at inside the call, from the stack the
 * host sampler last read of it from outside while it waited: the line that
 * made the call (the hooks take a call's site only as it returns). */
static int say_python_line(const struct ct_process_report *p, const struct ct_inflight_call *call,
                           struct ct_finding *f)
{
    const struct ct_host_python *py = ct_host_python_since(&p->host, call->tid, call->since_ns);
    if (!py)
        return 0;
    char site[512];
    snprintf(site, sizeof site, "%s:%lld in %s", py->last_file, (long long)py->last_line,
             py->last_function);
    size_t used = strlen(f->message);
    snprintf(f->message + used, sizeof f->message - used,
             ". It was called at %s (its Python stack, as the host sampler last read it)", site);
    f->where = ct_strings_get(ct_strings_intern_cstr(site));
    ct_finding_add_number(f, "python_line", (double)py->last_line);
    return 1;
}

/* The native line that made the call, from the return address its hook
 * noted on entry (the collector resolved it), where no Python line is
 * known: a C or C++ program's own. */
static void say_native_line(const struct ct_inflight_call *call, struct ct_finding *f)
{
    if (!call->site)
        return;
    size_t used = strlen(f->message);
    snprintf(f->message + used, sizeof f->message - used, ". It was called at %s", call->site);
    f->where = call->site;
}

static void stuck_call(const struct ct_process_report *p, const struct ct_inflight_call *call,
                       struct ct_findings *out)
{
    uint64_t inside = p->run.end_ns > call->since_ns ? p->run.end_ns - call->since_ns : 0;
    double threshold = threshold_ns(p);
    if ((double)inside < threshold)
        return;
    char a[32];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_HANG, p->pid,
        "thread %lld was inside %s for %s when %s, and it had not returned: the program was "
        "waiting, most often for GPU work that never completed (a kernel, or a collective "
        "another rank never joined)",
        (long long)call->tid, ct_function_name(call->fn), ct_human_time(inside, a, sizeof a),
        p->run.snapshot.trigger ? "this snapshot was taken" : "the trace ended");
    f->cost_ns = inside;
    ct_finding_add_number(f, "tid", (double)call->tid);
    ct_finding_add_number(f, "inside_ns", (double)inside);
    ct_finding_add_number(f, "since_ns", (double)call->since_ns);
    ct_finding_add_number(f, "threshold_ns", threshold);
    if (!say_python_line(p, call, f))
        say_native_line(call, f);
    say_unfinished(p, call->since_ns, f);
}

/* Whether the thread is still inside a call at the end of this trace. */
static int still_inside(const struct ct_process_report *p, int64_t tid)
{
    for (size_t i = 0; i < p->run.inflight_count; i++)
        if (p->run.inflight[i].tid == tid)
            return 1;
    return 0;
}

/* A hang snapshot taken of this trace whose call returned later. */
static void resolved(const struct ct_process_report *p, const struct ct_snapshot_mark *s,
                     struct ct_findings *out)
{
    if (strcmp(s->trigger, ct_value_trigger_hang) != 0 || still_inside(p, s->tid))
        return;
    uint64_t inside = s->at_ns > s->since_ns ? s->at_ns - s->since_ns : 0;
    char a[32];
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_HANG, p->pid,
        "thread %lld was inside %s for %s when the hang snapshot %s was taken, and returned "
        "later: the program was stuck that long, then went on",
        (long long)s->tid, s->function, ct_human_time(inside, a, sizeof a), s->path);
    ct_finding_set_severity(f, CT_SEVERITY_WARNING);
    f->cost_ns = inside;
    f->where = s->path;
    ct_finding_add_number(f, "tid", (double)s->tid);
    ct_finding_add_number(f, "inside_ns", (double)inside);
    ct_finding_add_number(f, "since_ns", (double)s->since_ns);
    ct_finding_add_number(f, "threshold_ns", (double)s->hang_ns);
    ct_finding_add_number(f, "resolved", 1);
}

void ct_findings_hang(const struct ct_process_report *p, struct ct_findings *out)
{
    for (size_t i = 0; i < p->run.inflight_count; i++)
        stuck_call(p, &p->run.inflight[i], out);
    for (size_t i = 0; i < p->run.snapshot_count; i++)
        resolved(p, &p->run.snapshots[i], out);
}
