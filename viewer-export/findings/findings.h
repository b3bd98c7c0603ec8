/*
 * Findings: what is wrong in a traced process, each one of those
 * finding_list.h declares, with its evidence, made by the rules of this
 * directory and ordered by the registry (registry.c).
 */
#ifndef CT_FINDINGS_H
#define CT_FINDINGS_H

#include "viewer-export/findings/finding_list.h"
#include "viewer-export/model/report.h"

struct ct_json;
/* Writes the evidence only one finding gives into its JSON evidence: the
 * rule's file declares both the evidence and its writer. */
typedef void ct_own_evidence_json(struct ct_json *j, const void *own);

/* What every finding has. */
struct ct_finding {
    enum ct_finding_id id;
    enum ct_severity severity;
    int32_t pid;
    size_t process; /* the process's place in its job (job/job.h) */
    int across;     /* compares processes: about the job, not one process */
    /* A finding read back from a summary: its JSON as the summary has it,
     * written out again unchanged (NULL for a finding made here). */
    const char *json;
    size_t json_len;
    char message[2048];
    /* The evidence any finding may give: the libraries involved, what the
     * finding costs the run (it orders findings of one severity), the call
     * site it is about, the numbers behind the message, and the sites that
     * carry the cost with their share. */
    const struct ct_library_entry *libraries[8];
    int library_count;
    uint64_t cost_ns;
    const char *where;
    struct ct_finding_number {
        const char *key;
        double value;
    } numbers[20];
    int number_count;
    struct ct_finding_site {
        const char *site;
        uint64_t calls, ns, bytes;
        double share;
    } sites[3];
    int site_count;
    /* And what only this finding gives, with its writer (ct_finding_own);
     * NULL for none. The finding owns it. */
    void *own;
    ct_own_evidence_json *own_json;
};

struct ct_findings {
    struct ct_finding *items;
    size_t count;
};

/* The findings about each process of a report on its own, ordered. */
void ct_findings_compute(const struct ct_report *report, struct ct_findings *out);
/* Errors first, then warnings, then notes; within one severity, the
 * costliest first; otherwise in the order they were added. */
void ct_findings_order(struct ct_findings *findings);
/* The groups of rules, each in its file: the CUDA libraries (library.c),
 * the driver (driver.c), how the process uses CUDA (usage.c) and the GPU's
 * side of the trace (cupti.c). */
void ct_findings_libraries(const struct ct_process_report *p, struct ct_findings *out);
void ct_findings_driver(const struct ct_process_report *p, struct ct_findings *out);
void ct_findings_usage(const struct ct_process_report *p, struct ct_findings *out);
void ct_findings_cupti(const struct ct_process_report *p, struct ct_findings *out);
/* The GPU's own state from NVML (gpu_health.c). */
void ct_findings_gpu_health(const struct ct_process_report *p, struct ct_findings *out);
/* A thread still inside a CUDA call past `hang_ns` at the end (hang.c). */
void ct_findings_hang(const struct ct_process_report *p, struct ct_findings *out);
/* What the host was doing, from the host sampler (host.c). */
void ct_findings_host(const struct ct_process_report *p, struct ct_findings *out);
/* The training steps the program marks (steps.c). */
void ct_findings_steps(const struct ct_process_report *p, struct ct_findings *out);
/* How the process built its CUDA graphs (graphs.c). */
void ct_findings_graphs(const struct ct_process_report *p, struct ct_findings *out);
/* Whether a library name is the driver's (libcuda.so*): its failure to
 * load is the driver findings', not library-load-failed's. */
int ct_is_driver_name(const char *name);
/* Appends a finding of the severity finding_list.h declares for it, with
 * a formatted message; the evidence starts empty. */
struct ct_finding *ct_finding_add(struct ct_findings *out, enum ct_finding_id id, int32_t pid,
                                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Gives a finding the other severity the list declares for it, in the
 * case its rule says; abort() for one the list does not declare. */
void ct_finding_set_severity(struct ct_finding *f, enum ct_severity severity);
/* The finding's own evidence, given once: `size` zeroed bytes it owns,
 * which `json` writes after the numbers and the site. */
void *ct_finding_own(struct ct_finding *f, size_t size, ct_own_evidence_json *json);
/* Adds to the end of a finding's message (what does not fit is cut). */
void ct_finding_append(struct ct_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Adds a library to a finding's evidence (up to its capacity). */
void ct_finding_add_library(struct ct_finding *f, const struct ct_library_entry *lib);
/* Adds a named number to a finding's evidence (up to its capacity). */
void ct_finding_add_number(struct ct_finding *f, const char *key, double value);
void ct_findings_free(struct ct_findings *findings);

#endif
