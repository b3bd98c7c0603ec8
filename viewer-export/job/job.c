/*
 * Builds the job from summaries: each process from its report/1 object (the
 * figures the table and the rules that compare processes read, its
 * libraries back as library entries), each of its findings from the JSON
 * it was written as (kept to be written out again unchanged). Finishing
 * orders the processes by job, host, rank and pid, the rest of the way by
 * their text and trace so the order never depends on the order of the
 * input, then lays the findings out in that order before the rules that
 * compare processes add theirs and all are ordered by severity and cost.
 */
#include "viewer-export/job/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "viewer-export/job/summary.h"

static const char *text_or(const struct ct_json_value *object, const char *key,
                           const char *fallback)
{
    const char *text = ct_json_text(ct_json_member(object, key));
    return text ? text : fallback;
}

static uint64_t number_at(const struct ct_json_value *object, const char *part, const char *key)
{
    return ct_json_u64(ct_json_member(part ? ct_json_member(object, part) : object, key), 0);
}

/* A library entry as ct_library_json wrote it: absent strings are "",
 * nulls NULL, as the entry held them. */
static void library_from_json(const struct ct_json_value *v, struct ct_library_entry *lib)
{
    memset(lib, 0, sizeof *lib);
    const char **strings[] = {&lib->path,
                              &lib->realpath,
                              &lib->family,
                              &lib->soname,
                              &lib->version,
                              &lib->build_id,
                              &lib->version_from,
                              &lib->requested_from,
                              &lib->expected_dirs,
                              &lib->expected_version,
                              &lib->expected_by,
                              &lib->runpath_copy,
                              &lib->expected_package};
    const char *const keys[] = {
        "path",        "realpath",     "family",          "soname",        "version",
        "build_id",    "version_from", "requested_from",  "expected_dirs", "expected_version",
        "expected_by", "runpath_copy", "expected_package"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        *strings[i] = text_or(v, keys[i], "");
    lib->requested_as = ct_json_text(ct_json_member(v, "requested_as"));
    lib->requested_by = ct_json_text(ct_json_member(v, "requested_by"));
    lib->found_via = ct_json_text(ct_json_member(v, "found_via"));
    lib->seen_by = ct_json_text(ct_json_member(v, "seen_by"));
    lib->rolled_back_by = ct_json_text(ct_json_member(v, "rolled_back_by"));
    lib->loaded_ns = number_at(v, NULL, "loaded_ns");
    lib->unloaded_ns = number_at(v, NULL, "unloaded_ns");
    lib->size = number_at(v, NULL, "size");
}

static void identity_from_json(const struct ct_json_value *v, struct ct_job_process *p)
{
    struct ct_process_identity *id = &p->identity;
    id->host = text_or(v, "host", "");
    id->job = text_or(v, "job", "");
    id->launcher = text_or(v, "launcher", "");
    id->visible_devices = text_or(v, "visible_devices", "");
    id->environment = "";
    id->rank = ct_json_i64(ct_json_member(v, "rank"), -1);
    id->local_rank = ct_json_i64(ct_json_member(v, "local_rank"), -1);
    id->world_size = ct_json_i64(ct_json_member(v, "world_size"), -1);
    p->environment = ct_json_member(v, "environment");
}

static void process_from_json(struct ct_job *job, const struct ct_json_value *v, const char *path)
{
    const struct ct_json_value *report = ct_json_member(v, "report");
    job->processes = ct_array_grow(job->processes, job->process_count, sizeof *job->processes);
    struct ct_job_process *p = &job->processes[job->process_count];
    memset(p, 0, sizeof *p);
    p->summary_index = job->process_count++;
    p->pid = (int32_t)ct_json_i64(ct_json_member(report, "pid"), 0);
    identity_from_json(ct_json_member(report, "identity"), p);
    p->report = report;
    p->facts = ct_json_member(v, "diff");
    p->text = text_or(v, "text", "");
    p->path = path;
    p->wall_ns = number_at(report, NULL, "wall_ns");
    p->calls_recorded = number_at(report, "tracer", "calls_recorded");
    p->launches = number_at(report, "launches", "count");
    p->sync_calls = number_at(report, "sync", "count");
    p->sync_ns = number_at(report, "sync", "total_ns");
    p->peak_bytes = number_at(report, "memory", "peak_bytes");
    p->has_gpu = ct_json_member(report, "gpu") != NULL;
    p->gpu_busy_ns = number_at(report, "gpu", "busy_ns");
    p->steps = number_at(report, "steps", "count");
    p->step_ns = number_at(report, "steps", "median_ns");
    p->exit = text_or(report, "exit", "unknown");
    const struct ct_json_value *libraries = ct_json_member(report, "libraries");
    size_t count = libraries && libraries->type == CT_JSON_ARRAY ? libraries->count : 0;
    p->libraries = calloc(count ? count : 1, sizeof *p->libraries);
    if (!p->libraries)
        abort();
    for (size_t i = 0; i < count; i++)
        library_from_json(&libraries->items[i], &p->libraries[i]);
    p->library_count = count;
}

static void sites_from_json(const struct ct_json_value *sites, struct ct_finding *f)
{
    for (size_t i = 0; sites && i < sites->count && f->site_count < 3; i++) {
        const struct ct_json_value *s = &sites->items[i];
        f->sites[f->site_count++] = (struct ct_finding_site){
            text_or(s, "site", ""), number_at(s, NULL, "calls"), number_at(s, NULL, "ns"),
            number_at(s, NULL, "bytes"), ct_json_f64(ct_json_member(s, "share"), 0)};
    }
}

/* What the text and the aggregated findings read of a finding: the rest
 * stays in its JSON. The numbers are its evidence's. */
static int finding_from_json(const struct ct_json_value *entry, size_t process,
                             struct ct_finding *f)
{
    const struct ct_json_value *v = ct_json_member(entry, "finding");
    int severity = ct_severity_parse(text_or(v, "severity", NULL));
    int id = ct_finding_parse(text_or(v, "id", NULL));
    if (!v || v->type != CT_JSON_OBJECT || id < 0 || severity < 0)
        return -1;
    memset(f, 0, sizeof *f);
    f->id = (enum ct_finding_id)id;
    f->severity = (enum ct_severity)severity;
    f->pid = (int32_t)ct_json_i64(ct_json_member(v, "pid"), 0);
    f->process = process;
    f->json = v->raw;
    f->json_len = v->raw_len;
    f->cost_ns = number_at(entry, NULL, "cost_ns");
    snprintf(f->message, sizeof f->message, "%s", text_or(v, "message", ""));
    const struct ct_json_value *evidence = ct_json_member(v, "evidence");
    f->where = ct_json_text(ct_json_member(evidence, "site"));
    for (size_t i = 0; evidence && i < evidence->count; i++)
        if (evidence->items[i].type == CT_JSON_NUMBER)
            ct_finding_add_number(f, evidence->items[i].key, ct_json_f64(&evidence->items[i], 0));
    sites_from_json(ct_json_member(evidence, "sites"), f);
    return 0;
}

static int add_trace_summary(struct ct_job *job, const struct ct_json_value *v, char *error,
                             size_t error_size)
{
    const char *path = text_or(v, "path", NULL), *thresholds = text_or(v, "thresholds", NULL);
    const struct ct_json_value *processes = ct_json_member(v, "processes");
    if (!path || !thresholds || !processes || processes->type != CT_JSON_ARRAY) {
        snprintf(error, error_size, "not a cudatrace summary (%s)", CT_SUMMARY_SCHEMA);
        return -1;
    }
    for (size_t i = 0; i < processes->count; i++) {
        const struct ct_json_value *report = ct_json_member(&processes->items[i], "report");
        if (!report || report->type != CT_JSON_OBJECT) {
            snprintf(error, error_size, "not a cudatrace summary (%s): process %zu has no report",
                     CT_SUMMARY_SCHEMA, i + 1);
            return -1;
        }
    }
    if (job->thresholds && strcmp(job->thresholds, thresholds) != 0) {
        snprintf(error, error_size,
                 "its findings were made with other thresholds (%s) than the summaries before it "
                 "(%s): make every summary with the same --threshold options",
                 thresholds, job->thresholds);
        return -1;
    }
    job->thresholds = thresholds;
    job->packets += number_at(v, NULL, "packets");
    job->unclosed += number_at(v, NULL, "unclosed_slices");
    job->truncated |= strcmp(text_or(v, "tail", ""), "cut") == 0;
    job->annotated |= number_at(v, NULL, "annotated") != 0;
    for (size_t i = 0; i < processes->count; i++) {
        const struct ct_json_value *findings = ct_json_member(&processes->items[i], "findings");
        process_from_json(job, &processes->items[i], path);
        for (size_t k = 0; findings && k < findings->count; k++) {
            struct ct_findings *all = &job->findings;
            all->items = ct_array_grow(all->items, all->count, sizeof *all->items);
            if (finding_from_json(&findings->items[k], job->process_count - 1,
                                  &all->items[all->count]) == 0)
                all->count++;
        }
    }
    return 0;
}

int ct_job_add_summary(struct ct_job *job, char *text, size_t len, char *error, size_t error_size)
{
    job->documents = ct_array_grow(job->documents, job->document_count, sizeof *job->documents);
    struct ct_job_document *d = &job->documents[job->document_count++];
    *d = (struct ct_job_document){.text = text, .len = len};
    if (ct_json_parse(text, len, &d->root, error, error_size))
        return -1;
    const char *schema = text_or(&d->root, "schema", NULL);
    if (!schema)
        return add_trace_summary(job, &d->root, error, error_size);
    const struct ct_json_value *traces = ct_json_member(&d->root, "traces");
    if (strcmp(schema, CT_SUMMARY_SCHEMA) != 0 || !traces || traces->type != CT_JSON_ARRAY) {
        snprintf(error, error_size, "a %s document, not a cudatrace summary (%s)", schema,
                 CT_SUMMARY_SCHEMA);
        return -1;
    }
    for (size_t i = 0; i < traces->count; i++)
        if (add_trace_summary(job, &traces->items[i], error, error_size))
            return -1;
    return 0;
}

int ct_job_of_report(struct ct_job *job, const struct ct_report *report, const char *path)
{
    char error[256];
    size_t len;
    char *text = ct_summary_of_report(report, path, &len);
    int status = ct_job_add_summary(job, text, len, error, sizeof error);
    ct_job_finish(job);
    return status;
}

static int by_job_host_rank(const void *a, const void *b)
{
    const struct ct_job_process *x = a, *y = b;
    int c = strcmp(x->identity.job, y->identity.job);
    if (!c)
        c = strcmp(x->identity.host, y->identity.host);
    if (!c && x->identity.rank != y->identity.rank) /* unranked after ranked */
        c = (uint64_t)x->identity.rank < (uint64_t)y->identity.rank ? -1 : 1;
    if (!c && x->pid != y->pid)
        c = x->pid < y->pid ? -1 : 1;
    if (!c)
        c = strcmp(x->text, y->text);
    if (!c)
        c = strcmp(x->path, y->path);
    if (!c && x->summary_index != y->summary_index)
        c = x->summary_index < y->summary_index ? -1 : 1;
    return c;
}

/* The processes' own findings in the processes' new order, each process's
 * in the order they were made. */
static void lay_out_findings(struct ct_job *job, const size_t *place)
{
    struct ct_findings *all = &job->findings;
    /* The across-rank findings are added to it later. */
    struct ct_finding *laid = calloc(ct_array_room(all->count), sizeof *laid);
    if (!laid)
        abort();
    size_t n = 0;
    for (size_t k = 0; k < job->process_count; k++)
        for (size_t i = 0; i < all->count; i++)
            if (place[all->items[i].process] == k)
                laid[n] = all->items[i], laid[n++].process = k;
    free(all->items);
    all->items = laid;
}

static size_t count_jobs(const struct ct_job *job)
{
    size_t jobs = 0;
    for (size_t i = 0; i < job->process_count; i++)
        jobs += *job->processes[i].identity.job &&
                (i == 0 ||
                 strcmp(job->processes[i].identity.job, job->processes[i - 1].identity.job) != 0);
    return jobs;
}

void ct_job_finish(struct ct_job *job)
{
    qsort(job->processes, job->process_count, sizeof *job->processes, by_job_host_rank);
    size_t *place = calloc(job->process_count ? job->process_count : 1, sizeof *place);
    if (!place)
        abort();
    for (size_t k = 0; k < job->process_count; k++)
        place[job->processes[k].summary_index] = k;
    lay_out_findings(job, place);
    free(place);
    job->jobs = count_jobs(job);
    ct_findings_across(job);
    ct_findings_order(&job->findings);
}

void ct_job_free(struct ct_job *job)
{
    for (size_t i = 0; i < job->process_count; i++)
        free(job->processes[i].libraries);
    free(job->processes);
    for (size_t i = 0; i < job->document_count; i++) {
        ct_json_value_free(&job->documents[i].root);
        free(job->documents[i].text);
    }
    free(job->documents);
    ct_findings_free(&job->findings);
    memset(job, 0, sizeof *job);
}

size_t ct_job_group_end(const struct ct_job *job, size_t start)
{
    size_t end = start + 1;
    while (end < job->process_count &&
           strcmp(job->processes[end].identity.job, job->processes[start].identity.job) == 0)
        end++;
    return end;
}

static int several_hosts(const struct ct_job *job)
{
    for (size_t i = 1; i < job->process_count; i++)
        if (strcmp(job->processes[i].identity.host, job->processes[0].identity.host) != 0)
            return 1;
    return 0;
}

const char *ct_job_process_name(const struct ct_job *job, const struct ct_job_process *p, char *buf,
                                size_t size)
{
    int hosts = several_hosts(job) && *p->identity.host;
    if (p->identity.rank >= 0 && hosts)
        snprintf(buf, size, "rank %lld (pid %d on %s)", (long long)p->identity.rank, (int)p->pid,
                 p->identity.host);
    else if (p->identity.rank >= 0)
        snprintf(buf, size, "rank %lld (pid %d)", (long long)p->identity.rank, (int)p->pid);
    else if (hosts)
        snprintf(buf, size, "pid %d on %s", (int)p->pid, p->identity.host);
    else
        snprintf(buf, size, "pid %d", (int)p->pid);
    return buf;
}

static int by_rank(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* "ranks 0-6, 9" */
static void describe_ranks(const uint64_t *ranks, size_t n, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "%s", n == 1 ? "rank " : "ranks ");
    for (size_t i = 0; i < n && len < size; i++) {
        size_t end = i;
        while (end + 1 < n && ranks[end + 1] == ranks[end] + 1)
            end++;
        len += (size_t)snprintf(out + len, size - len, end > i ? "%s%llu-%llu" : "%s%llu",
                                i ? ", " : "", (unsigned long long)ranks[i],
                                (unsigned long long)ranks[end]);
        i = end;
    }
}

void ct_job_describe_processes(const struct ct_job *job, const size_t *which, size_t count,
                               char *out, size_t size)
{
    uint64_t *ranks = calloc(count + 1, sizeof *ranks);
    size_t n = 0, len = 0;
    if (!ranks)
        abort();
    for (size_t i = 0; i < count; i++)
        if (job->processes[which[i]].identity.rank >= 0)
            ranks[n++] = (uint64_t)job->processes[which[i]].identity.rank;
    qsort(ranks, n, sizeof *ranks, by_rank);
    if (n == count && n > 0)
        describe_ranks(ranks, n, out, size);
    free(ranks);
    if (n == count && n > 0)
        return;
    char name[128];
    *out = '\0';
    for (size_t i = 0; i < count && i < 4 && len < size; i++)
        len += (size_t)snprintf(
            out + len, size - len, "%s%s", i ? ", " : "",
            ct_job_process_name(job, &job->processes[which[i]], name, sizeof name));
    if (count > 4 && len < size)
        snprintf(out + len, size - len, " and %zu more", count - 4);
}
