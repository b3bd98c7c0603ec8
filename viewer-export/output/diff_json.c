/*
 * A diff as the cudatrace.diff/1 JSON (docs/report-schema.md, "cudatrace
 * diff"): a stable document for CI. Per pair of processes, only what moved
 * is listed, but the step figures, which are always given with the least
 * change that counted; a number a side lacks is null.
 */
#include "viewer-export/output/diff_output.h"

#include <math.h>

#include "viewer-export/output/report_output.h"

static void number_or_null(struct ct_json *j, const char *key, double v)
{
    if (isnan(v))
        ct_json_null(j, key);
    else
        ct_json_double(j, key, v);
}

static void number_json(struct ct_json *j, const char *key, const struct ct_diff_number *n)
{
    ct_json_begin_object(j, key);
    number_or_null(j, "before", n->before);
    number_or_null(j, "after", n->after);
    ct_json_double(j, "noise", n->noise);
    ct_json_uint(j, "moved", (uint64_t)n->moved);
    ct_json_end_object(j);
}

static void process_json(struct ct_json *j, const char *key, const struct ct_job_process *p)
{
    ct_json_begin_object(j, key);
    ct_json_int(j, "pid", p->pid);
    ct_json_int_or_null(j, "rank", p->identity.rank);
    ct_json_text_or_null(j, "host", p->identity.host);
    ct_json_string(j, "path", p->path);
    ct_json_end_object(j);
}

static void steps_json(struct ct_json *j, const struct ct_diff_pair *p)
{
    const struct ct_diff_steps *s = &p->steps;
    if (p->basis != CT_DIFF_PER_STEP) {
        ct_json_null(j, "steps");
        return;
    }
    ct_json_begin_object(j, "steps");
    ct_json_begin_object(j, "count");
    ct_json_uint(j, "before", s->count[0]);
    ct_json_uint(j, "after", s->count[1]);
    ct_json_end_object(j);
    ct_json_begin_object(j, "source");
    ct_json_text_or_null(j, "before", s->source[0]);
    ct_json_text_or_null(j, "after", s->source[1]);
    ct_json_end_object(j);
    number_json(j, "median_ns", &s->median);
    number_json(j, "p99_ns", &s->p99);
    number_json(j, "spread_ns", &s->spread);
    number_json(j, "cpu_wait_ns", &s->cpu_wait);
    number_json(j, "judged_ns", &s->judged);
    number_or_null(j, "rank_z", s->rank_z);
    ct_json_begin_object(j, "parts");
    for (int k = 0; k < CT_DIFF_PARTS; k++)
        number_json(j, ct_diff_part_keys[k], &s->parts[k]);
    ct_json_end_object(j);
    ct_json_end_object(j);
}

static void environment_json(struct ct_json *j, const struct ct_diff_pair *p)
{
    static const char *const kinds[] = {
        [CT_DIFF_ENV_PROGRAM] = "program", [CT_DIFF_ENV_HOST] = "host",
        [CT_DIFF_ENV_LIBRARY] = "library", [CT_DIFF_ENV_VERSION] = "version",
        [CT_DIFF_ENV_DEVICE] = "device",   [CT_DIFF_ENV_VARIABLE] = "variable"};
    ct_json_begin_array(j, "environment");
    for (size_t i = 0; i < p->env_count; i++) {
        const struct ct_diff_env *e = &p->env[i];
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "kind", kinds[e->kind]);
        ct_json_string(j, "name", e->name);
        ct_json_text_or_null(j, "before", e->before);
        ct_json_text_or_null(j, "after", e->after);
        ct_json_string(j, "how", e->how);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

static void items_json(struct ct_json *j, const char *key, const struct ct_diff_items *items)
{
    ct_json_begin_array(j, key);
    for (size_t i = 0; i < items->count; i++) {
        const struct ct_diff_item *it = &items->items[i];
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "name", it->name);
        ct_json_text_or_null(j, "was", it->was);
        if (it->only)
            ct_json_string(j, "only", it->only > 0 ? "after" : "before");
        else
            ct_json_null(j, "only");
        number_json(j, "count", &it->count);
        number_json(j, "ns", &it->time);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

static void findings_json(struct ct_json *j, const char *key, const struct ct_finding *const *f,
                          size_t count)
{
    ct_json_begin_array(j, key);
    for (size_t i = 0; i < count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_uint(j, "counted", (uint64_t)ct_diff_counts_finding(f[i]));
        ct_finding_json(j, "finding", f[i]);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

static void pair_json(struct ct_json *j, const struct ct_diff *d, const struct ct_diff_pair *p)
{
    char headline[4096];
    ct_json_begin_object(j, NULL);
    process_json(j, "before", &d->before->processes[p->before]);
    process_json(j, "after", &d->after->processes[p->after]);
    ct_json_string(j, "basis", p->basis == CT_DIFF_PER_STEP ? "step" : "second");
    ct_json_uint(j, "changed", (uint64_t)p->changed);
    ct_diff_pair_headline(p, headline, sizeof headline);
    ct_json_string(j, "headline", headline);
    environment_json(j, p);
    steps_json(j, p);
    items_json(j, "kernels", &p->kernels);
    number_json(j, "copies", &p->copies);
    items_json(j, "calls", &p->calls);
    items_json(j, "blocking_sites", &p->sites);
    ct_json_begin_object(j, "memory");
    number_json(j, "peak_bytes", &p->peak);
    number_json(j, "step_end_bytes", &p->step_end);
    ct_json_end_object(j);
    ct_json_begin_object(j, "findings");
    findings_json(j, "appeared", p->appeared, p->appeared_count);
    findings_json(j, "went_away", p->went_away, p->went_away_count);
    ct_json_end_object(j);
    ct_json_end_object(j);
}

static void unpaired_json(struct ct_json *j, const char *key, const struct ct_job *job,
                          const size_t *which, size_t count)
{
    ct_json_begin_array(j, key);
    for (size_t i = 0; i < count; i++)
        process_json(j, NULL, &job->processes[which[i]]);
    ct_json_end_array(j);
}

static void side_json(struct ct_json *j, const char *key, const char *operand,
                      const struct ct_job *job)
{
    ct_json_begin_object(j, key);
    ct_json_string(j, "input", operand);
    ct_json_uint(j, "processes", job->process_count);
    ct_json_end_object(j);
}

void ct_diff_print_json(FILE *out, const struct ct_diff *d, const struct ct_diff_operands *what)
{
    char headline[4096];
    size_t changed = 0;
    for (size_t i = 0; i < d->pair_count; i++)
        changed += d->pairs[i].changed != 0;
    struct ct_json j = {.out = out};
    ct_json_begin_object(&j, NULL);
    ct_json_string(&j, "schema", CT_DIFF_SCHEMA);
    side_json(&j, "before", what->before, d->before);
    side_json(&j, "after", what->after, d->after);
    ct_diff_headline(d, headline, sizeof headline);
    ct_json_string(&j, "headline", headline);
    ct_json_uint(&j, "changed", changed || d->only_before_count || d->only_after_count);
    ct_json_double(&j, "step_time_rise", ct_diff_worst_rise(d));
    ct_json_begin_array(&j, "pairs");
    for (size_t i = 0; i < d->pair_count; i++)
        pair_json(&j, d, &d->pairs[i]);
    ct_json_end_array(&j);
    unpaired_json(&j, "only_before", d->before, d->only_before, d->only_before_count);
    unpaired_json(&j, "only_after", d->after, d->only_after, d->only_after_count);
    ct_json_end_object(&j);
}
