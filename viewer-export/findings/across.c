/*
 * Findings that compare the processes of one report (the ranks of a
 * torchrun job, a parent and its workers): inconsistent-libraries, when
 * processes loaded different files or versions of one library family, and
 * straggler, when one process waits in synchronising calls far longer than
 * the others. A report of one process gets neither.
 */
#include "viewer-export/findings/findings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* straggler: more than this many times the others' median wait, and at
 * least this much longer (a few ms of jitter between healthy ranks is no
 * straggler). */
#define STRAGGLER_RATIO 2.0
#define STRAGGLER_MIN_EXTRA_NS 50000000ull

static const struct ct_library_entry *library_of(const struct ct_process_report *p,
                                                 const char *family)
{
    for (size_t i = 0; i < p->libraries.mapped_count; i++)
        if (strcmp(p->libraries.mapped[i].family, family) == 0)
            return &p->libraries.mapped[i];
    return NULL;
}

static int same_library(const struct ct_library_entry *a, const struct ct_library_entry *b)
{
    return strcmp(a->realpath, b->realpath) == 0 && strcmp(a->version, b->version) == 0;
}

/* The first process that loaded `family` is the reference; every process
 * whose copy differs from it is named, with its file and version. */
static void compare_family(const struct ct_report *report, const char *family,
                           struct ct_findings *out)
{
    const struct ct_process_report *first = NULL;
    const struct ct_library_entry *reference = NULL;
    struct ct_finding *f = NULL;
    for (size_t i = 0; i < report->process_count; i++) {
        const struct ct_process_report *p = &report->processes[i];
        const struct ct_library_entry *lib = library_of(p, family);
        if (!lib)
            continue;
        if (!reference) {
            first = p, reference = lib;
            continue;
        }
        if (same_library(lib, reference))
            continue;
        if (!f) {
            f = ct_finding_add(out, "inconsistent-libraries", CT_SEVERITY_WARNING, p->pid,
                               "processes of one job loaded different lib%s: pid %d %s (%s)",
                               family, (int)first->pid, reference->realpath,
                               *reference->version ? reference->version : "unknown version");
            ct_finding_add_library(f, reference);
        }
        size_t n = strlen(f->message);
        snprintf(f->message + n, sizeof f->message - n, ", pid %d %s (%s)", (int)p->pid,
                 lib->realpath, *lib->version ? lib->version : "unknown version");
        ct_finding_add_library(f, lib);
    }
    if (f) {
        size_t n = strlen(f->message);
        snprintf(f->message + n, sizeof f->message - n,
                 ". Ranks that disagree on a library can disagree on results or deadlock in "
                 "collectives: give every process the same environment (LD_LIBRARY_PATH, "
                 "virtual environment, container image).");
    }
}

static int family_seen_before(const struct ct_report *report, size_t process, size_t library)
{
    const char *family = report->processes[process].libraries.mapped[library].family;
    for (size_t i = 0; i <= process; i++) {
        const struct ct_process_report *p = &report->processes[i];
        size_t end = i == process ? library : p->libraries.mapped_count;
        for (size_t k = 0; k < end; k++)
            if (strcmp(p->libraries.mapped[k].family, family) == 0)
                return 1;
    }
    return 0;
}

static void inconsistent_libraries(const struct ct_report *report, struct ct_findings *out)
{
    for (size_t i = 0; i < report->process_count; i++)
        for (size_t k = 0; k < report->processes[i].libraries.mapped_count; k++)
            if (!family_seen_before(report, i, k))
                compare_family(report, report->processes[i].libraries.mapped[k].family, out);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of the processes' waits, leaving out process `skip`. */
static uint64_t median_wait_of_others(const struct ct_report *report, size_t skip)
{
    uint64_t *waits = calloc(report->process_count, sizeof *waits);
    size_t n = 0;
    if (!waits)
        abort();
    for (size_t i = 0; i < report->process_count; i++)
        if (i != skip && report->processes[i].calls.sync_calls)
            waits[n++] = report->processes[i].calls.sync_ns;
    qsort(waits, n, sizeof *waits, by_value);
    uint64_t median = n % 2 ? waits[n / 2] : (waits[n / 2 - 1] + waits[n / 2]) / 2;
    free(waits);
    return median;
}

static void straggler(const struct ct_report *report, struct ct_findings *out)
{
    size_t syncing = 0, longest = 0;
    for (size_t i = 0; i < report->process_count; i++) {
        syncing += report->processes[i].calls.sync_calls != 0;
        if (report->processes[i].calls.sync_ns > report->processes[longest].calls.sync_ns)
            longest = i;
    }
    if (syncing < 3) /* with two, either could be the odd one out */
        return;
    const struct ct_process_report *p = &report->processes[longest];
    uint64_t others = median_wait_of_others(report, longest);
    if (p->calls.sync_ns < STRAGGLER_MIN_EXTRA_NS + others ||
        (double)p->calls.sync_ns <= STRAGGLER_RATIO * (double)others)
        return;
    ct_finding_add(out, "straggler", CT_SEVERITY_WARNING, p->pid,
                   "pid %d waited %.1f ms in synchronising calls (%llu calls), %.1fx the other "
                   "processes' median of %.1f ms: it stalls on work the others do not (its own "
                   "GPU is slower or busier, or its input arrives late); look at what it waits "
                   "for in its trace",
                   (int)p->pid, p->calls.sync_ns / 1e6, (unsigned long long)p->calls.sync_calls,
                   others ? (double)p->calls.sync_ns / (double)others : 0.0, others / 1e6);
}

void ct_findings_across(const struct ct_report *report, struct ct_findings *out)
{
    if (report->process_count < 2)
        return;
    inconsistent_libraries(report, out);
    straggler(report, out);
}
