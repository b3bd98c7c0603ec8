/*
 * The report's steps section, as JSON and as text: where the steps came
 * from, how many, the first (warm-up) apart, the median, p90, p99 and worst
 * step time of the others, the slow steps (over `slow_step_factor` times
 * the median) by
 * number, and what the median step was made of. Nothing when the trace
 * marks no steps.
 */
#include "viewer-export/model/steps.h"
#include "viewer-export/output/human_units.h"
#include "viewer-export/output/report_output.h"

static void json_step(struct ct_json *j, const char *key, struct ct_step_time t)
{
    ct_json_begin_object(j, key);
    ct_json_uint(j, "step", t.step);
    ct_json_uint(j, "ns", t.ns);
    ct_json_end_object(j);
}

void ct_steps_json(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_steps *s = ct_steps_of(p);
    if (!s)
        return;
    ct_json_begin_object(j, "steps");
    ct_json_string(j, "source", s->source);
    ct_json_int(j, "thread", s->tid);
    ct_json_uint(j, "count", s->count + s->in_gap);
    ct_json_uint(j, "cut", (uint64_t)s->cut);
    ct_json_uint(j, "in_gap", s->in_gap);
    ct_json_uint(j, "gap_uncounted", (uint64_t)s->gap_uncounted);
    ct_json_uint(j, "first_ns", s->first_ns);
    ct_json_uint(j, "warmup_steps", s->warmup);
    ct_json_uint(j, "median_ns", s->median_ns);
    ct_json_uint(j, "p90_ns", s->p90_ns);
    ct_json_uint(j, "p99_ns", s->p99_ns);
    ct_json_uint(j, "max_ns", s->worst.ns);
    ct_json_uint(j, "max_step", s->worst.step);
    ct_json_begin_array(j, "slow");
    for (size_t i = 0; i < s->slow_count; i++)
        json_step(j, NULL, s->slow[i]);
    ct_json_end_array(j);
    json_step(j, "median_step", s->median_step);
    ct_json_begin_object(j, "median_parts");
    const struct ct_step *m = &s->all[s->median_step.step - 1];
    ct_json_uint(j, "gpu_busy_ns", m->gpu_busy_ns);
    ct_json_uint(j, "sync_ns", m->sync_ns);
    ct_json_uint(j, "in_cuda_ns", m->in_cuda_ns);
    ct_json_uint(j, "host_running_ns", m->host_running_ns);
    ct_json_uint(j, "host_waiting_ns", m->host_waiting_ns);
    ct_json_uint(j, "launches", m->launches);
    ct_json_uint(j, "copies", m->copies);
    ct_json_uint(j, "copy_ns", m->copy_ns);
    ct_json_uint(j, "copy_bytes", m->copy_bytes);
    if (ct_gpu_seen(&p->usage.gpu))
        ct_json_uint(j, "gpu_idle_ns", m->ns - m->gpu_busy_ns);
    ct_json_uint(j, "memory_end_bytes", m->memory_end_bytes);
    ct_json_end_object(j);
    ct_json_end_object(j);
}

/* Where the worst step was: by number, or in a bounded trace's dropped
 * middle, which numbers none. */
static const char *worst_step(const struct ct_steps *s, char *text, size_t size)
{
    if (s->worst.step)
        snprintf(text, size, "step %zu", s->worst.step);
    else
        snprintf(text, size, "in the dropped middle");
    return text;
}

void ct_steps_text(FILE *out, const struct ct_process_report *p)
{
    const struct ct_steps *s = ct_steps_of(p);
    if (!s)
        return;
    char a[32], b[32], c[32], d[32], e[32], worst[32];
    fprintf(out, "  steps          %zu (%s): median %s, p90 %s, p99 %s, worst %s (%s); step 1 %s",
            s->count + s->in_gap, s->source, ct_human_time(s->median_ns, a, sizeof a),
            ct_human_time(s->p90_ns, b, sizeof b), ct_human_time(s->p99_ns, c, sizeof c),
            ct_human_time(s->worst.ns, d, sizeof d), worst_step(s, worst, sizeof worst),
            ct_human_time(s->first_ns, e, sizeof e));
    if (s->in_gap)
        fprintf(out, "; %zu of them in the dropped middle, by their times alone", s->in_gap);
    if (s->gap_uncounted)
        fprintf(out, "; those in the dropped middle not counted");
    fprintf(out, "\n");
    const struct ct_step *m = &s->all[s->median_step.step - 1];
    fprintf(out,
            "                 the median step (%zu): GPU busy %s, synchronising %s, in CUDA "
            "calls %s",
            s->median_step.step, ct_human_time(m->gpu_busy_ns, a, sizeof a),
            ct_human_time(m->sync_ns, b, sizeof b), ct_human_time(m->in_cuda_ns, c, sizeof c));
    if (p->host.thread_samples) /* the host sampler read the threads' states */
        fprintf(out, ", outside them on a CPU %s and asleep %s",
                ct_human_time(m->host_running_ns, a, sizeof a),
                ct_human_time(m->host_waiting_ns, b, sizeof b));
    fprintf(out, "; %llu launches, %llu copies (%s, %s), %s of device memory live at its end",
            (unsigned long long)m->launches, (unsigned long long)m->copies,
            ct_human_bytes((double)m->copy_bytes, a, sizeof a),
            ct_human_time(m->copy_ns, b, sizeof b),
            ct_human_bytes((double)m->memory_end_bytes, c, sizeof c));
    for (size_t i = 0; i < s->slow_count; i++)
        fprintf(out, "%s%zu", i ? ", " : "; slow steps: ", s->slow[i].step);
    fprintf(out, "\n");
}
