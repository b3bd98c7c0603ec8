/*
 * The findings registry: a finding is added as finding_list.h declares it,
 * with its message, and its evidence filled in by the rule that found it;
 * each process goes through every family of rules (libraries, the driver,
 * usage, the GPU's side, the GPU's own state, a hang, the host's threads,
 * the training steps, CUDA graphs; the rules that compare processes run
 * over the whole job, job/job.c), and the findings are ordered: errors
 * first, then warnings, then notes, the costliest first within one
 * severity.
 */
#include "viewer-export/findings/findings.h"

#include "common/array.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ct_finding *ct_finding_add(struct ct_findings *out, enum ct_finding_id id, int32_t pid,
                                  const char *fmt, ...)
{
    out->items = ct_array_grow(out->items, out->count, sizeof *out->items);
    struct ct_finding *f = &out->items[out->count++];
    f->id = id;
    f->severity = ct_finding_severity(id);
    f->pid = pid;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    return f;
}

void ct_finding_set_severity(struct ct_finding *f, enum ct_severity severity)
{
    if (!ct_finding_may_be(f->id, severity))
        abort();
    f->severity = severity;
}

void *ct_finding_own(struct ct_finding *f, size_t size, ct_own_evidence_json *json)
{
    f->own = calloc(1, size);
    if (!f->own)
        abort();
    f->own_json = json;
    return f->own;
}

void ct_finding_append(struct ct_finding *f, const char *fmt, ...)
{
    size_t used = strlen(f->message);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message + used, sizeof f->message - used, fmt, ap);
    va_end(ap);
}

void ct_finding_add_library(struct ct_finding *f, const struct ct_library_entry *lib)
{
    if (f->library_count < (int)(sizeof f->libraries / sizeof f->libraries[0]))
        f->libraries[f->library_count++] = lib;
}

void ct_finding_add_number(struct ct_finding *f, const char *key, double value)
{
    if (f->number_count < (int)(sizeof f->numbers / sizeof f->numbers[0]))
        f->numbers[f->number_count++] = (struct ct_finding_number){key, value};
}

static int by_severity_then_cost(const void *a, const void *b)
{
    const struct ct_finding *x = a, *y = b;
    if (x->severity != y->severity)
        return x->severity < y->severity ? -1 : 1;
    if (x->cost_ns != y->cost_ns)
        return x->cost_ns > y->cost_ns ? -1 : 1;
    return x < y ? -1 : x > y; /* qsort is not stable; keep the computed order */
}

void ct_findings_order(struct ct_findings *findings)
{
    if (findings->count > 1)
        qsort(findings->items, findings->count, sizeof *findings->items, by_severity_then_cost);
}

void ct_findings_compute(const struct ct_report *report, struct ct_findings *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < report->process_count; i++) {
        ct_findings_libraries(&report->processes[i], out);
        ct_findings_driver(&report->processes[i], out);
        ct_findings_usage(&report->processes[i], out);
        ct_findings_cupti(&report->processes[i], out);
        ct_findings_gpu_health(&report->processes[i], out);
        ct_findings_hang(&report->processes[i], out);
        ct_findings_host(&report->processes[i], out);
        ct_findings_steps(&report->processes[i], out);
        ct_findings_graphs(&report->processes[i], out);
    }
    ct_findings_order(out);
}

void ct_findings_free(struct ct_findings *findings)
{
    for (size_t i = 0; i < findings->count; i++)
        free(findings->items[i].own);
    free(findings->items);
    memset(findings, 0, sizeof *findings);
}
