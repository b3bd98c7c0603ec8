/*
 * Pairs two jobs' processes and compares each pair (compare.h): the step
 * time and its parts against the spread the steps show, the findings that
 * appeared or went away, and through environment.c and work.c the rest.
 * Processes pair by rank where both sides have ranks, else in the jobs'
 * order (job, host, pid): one process a side, the usual case, always
 * pairs. The noise rules live here (the step figures, memory) and in
 * work.c (what is counted per step), each beside the figures it judges.
 */
#include "viewer-export/diff/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"

/* A step figure moves by more than STEP_LEAST_SHARE of the before side's
 * median step and STEP_LEAST_NS (a consistent drift of a few percent is a
 * busier machine's as often as the program's), and beyond the steps'
 * spread: the median step where the two runs' steps differ by rank (the
 * rank-sum test's z past RANK_Z, from RANK_LEAST_VALUES steps a side),
 * else, as the parts always, by more than STEP_Z robust standard
 * deviations of either side's steps (1.4826 x their median absolute
 * deviation: the modified z-score's cut, as the job's figures use). */
#define STEP_LEAST_SHARE 0.05
#define STEP_LEAST_NS 20000.0
#define RANK_Z 3.29
#define RANK_LEAST_VALUES 8
#define STEP_Z 3.5
#define MAD_TO_SIGMA 1.4826

const char *const ct_diff_part_keys[CT_DIFF_PARTS] = {"gpu_busy_ns",        "sync_ns",
                                                      "other_cuda_ns",      "outside_cuda_ns",
                                                      "outside_running_ns", "outside_waiting_ns"};

double ct_diff_value(const struct ct_json_value *v, const char *path)
{
    char key[64];
    while (v && *path) {
        size_t len = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)len, path);
        v = ct_json_member(v, key);
        path += len + (path[len] == '.');
    }
    return v && v->type == CT_JSON_NUMBER ? ct_json_f64(v, NAN) : NAN;
}

void ct_diff_judge(struct ct_diff_number *n)
{
    n->moved = !isnan(n->before) && !isnan(n->after) && fabs(n->after - n->before) > n->noise;
}

/* The spread of a step figure on each side ({"median", "mad"} in the
 * facts at `key`), as a robust standard deviation. */
static struct ct_diff_number step_spreads(const struct ct_job_process *const side[2],
                                          const char *key)
{
    char path[64];
    snprintf(path, sizeof path, "steps.%s.mad", key);
    return (struct ct_diff_number){MAD_TO_SIGMA * ct_diff_value(side[0]->facts, path),
                                   MAD_TO_SIGMA * ct_diff_value(side[1]->facts, path), 0, 0};
}

/* Judges a figure of the steps: moved by more than STEP_Z robust standard
 * deviations of either side and `least`, and `more` besides. */
static void step_figure(const struct ct_job_process *const side[2], const char *key, double least,
                        double more, struct ct_diff_number *n)
{
    struct ct_diff_number sigma = step_spreads(side, key);
    double widest =
        fmax(isnan(sigma.before) ? 0 : sigma.before, isnan(sigma.after) ? 0 : sigma.after);
    n->noise = fmax(STEP_Z * widest, least) + more;
    ct_diff_judge(n);
}

/* The facts' median of a step figure on each side. */
static struct ct_diff_number step_medians(const struct ct_job_process *const side[2],
                                          const char *key)
{
    char path[64];
    snprintf(path, sizeof path, "steps.%s.median", key);
    return (struct ct_diff_number){ct_diff_value(side[0]->facts, path),
                                   ct_diff_value(side[1]->facts, path), 0, 0};
}

/* A side's sample of a step figure's values (the facts'), in a new array;
 * how many. */
static size_t step_values(const struct ct_job_process *p, const char *key, double **out)
{
    const struct ct_json_value *values =
        ct_json_member(ct_json_member(ct_json_member(p->facts, "steps"), key), "values");
    size_t n = values && values->type == CT_JSON_ARRAY ? values->count : 0;
    *out = malloc((n + 1) * sizeof **out);
    if (!*out)
        abort();
    for (size_t i = 0; i < n; i++)
        (*out)[i] = ct_json_f64(&values->items[i], 0);
    return n;
}

/* The median step's figure (`key`): moved past `least`, and where both
 * sides have the steps' values, in the direction their ranks differ (the
 * step times themselves: a wait for a CPU is only known to within the
 * host sampler's period, too coarse to take out of each step); else past
 * the figure's spread. */
static void judge_median(const struct ct_job_process *const side[2], const char *key, double least,
                         struct ct_diff_steps *s)
{
    double *values[2];
    size_t n[2] = {step_values(side[0], "step_ns", &values[0]),
                   step_values(side[1], "step_ns", &values[1])};
    s->rank_z = NAN;
    if (n[0] >= RANK_LEAST_VALUES && n[1] >= RANK_LEAST_VALUES) {
        s->rank_z = ct_diff_rank_sum_z(values[0], n[0], values[1], n[1]);
        s->judged.noise = least;
        ct_diff_judge(&s->judged);
        s->judged.moved &=
            fabs(s->rank_z) > RANK_Z && (s->rank_z > 0) == (s->judged.after > s->judged.before);
    } else {
        step_figure(side, key, least, 0, &s->judged);
    }
    free(values[0]);
    free(values[1]);
}

/* Whether the host sampler read the steps' thread often enough for its
 * states to split a step's time outside CUDA calls into host work and an
 * input wait: SPLIT_PERIODS sample periods a step on both sides. A state
 * holds from one sample to the next, so a shorter step's split is off by
 * a good part of a period, the same way in every step. */
#define SPLIT_PERIODS 20

static int sampled_finely(const struct ct_job_process *const side[2], const struct ct_diff_steps *s)
{
    double step[2] = {s->median.before, s->median.after};
    for (int k = 0; k < 2; k++) {
        double hz = ct_diff_value(side[k]->report, "host.sample_hz");
        if (!(hz > 0) || step[k] < SPLIT_PERIODS * 1e9 / hz)
            return 0;
    }
    return 1;
}

static void compare_steps(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    struct ct_diff_steps *s = &pair->steps;
    for (int k = 0; k < 2; k++) {
        const struct ct_json_value *steps = ct_json_member(side[k]->report, "steps");
        double count = ct_diff_value(steps, "count");
        s->count[k] = isnan(count) ? 0 : (uint64_t)count;
        s->source[k] = ct_json_text(ct_json_member(steps, "source"));
    }
    pair->basis = s->count[0] && s->count[1] ? CT_DIFF_PER_STEP : CT_DIFF_PER_SECOND;
    if (pair->basis != CT_DIFF_PER_STEP)
        return;
    const struct ct_json_value *r[2] = {side[0]->report, side[1]->report};
    s->median = (struct ct_diff_number){ct_diff_value(r[0], "steps.median_ns"),
                                        ct_diff_value(r[1], "steps.median_ns"), 0, 0};
    s->p99 = (struct ct_diff_number){ct_diff_value(r[0], "steps.p99_ns"),
                                     ct_diff_value(r[1], "steps.p99_ns"), 0, 0};
    double least = fmax(STEP_LEAST_SHARE * s->median.before, STEP_LEAST_NS);
    s->cpu_wait = step_medians(side, "cpu_wait_ns");
    int sampled = !isnan(s->cpu_wait.before) && !isnan(s->cpu_wait.after);
    const char *judged = sampled ? "step_less_cpu_wait_ns" : "step_ns";
    s->judged = sampled ? step_medians(side, judged) : s->median;
    s->spread = step_spreads(side, judged);
    judge_median(side, judged, least, s);
    s->median.noise = s->judged.noise;
    s->median.moved = s->judged.moved;
    /* A wait for a CPU lies in the host's parts of the step, wherever the
     * thread was woken late: theirs may move by it. */
    double machine = sampled ? fabs(s->cpu_wait.after - s->cpu_wait.before) : 0;
    int split = sampled_finely(side, s);
    for (int p = 0; p < CT_DIFF_PARTS; p++) {
        s->parts[p] = step_medians(side, ct_diff_part_keys[p]);
        if (!split && (p == CT_DIFF_HOST_WORK || p == CT_DIFF_INPUT_WAIT))
            s->parts[p].before = s->parts[p].after = NAN;
        step_figure(side, ct_diff_part_keys[p], least, p == CT_DIFF_GPU_BUSY ? 0 : machine,
                    &s->parts[p]);
    }
}

/* Peak memory, and with steps the live memory at a step's end: moved by
 * more than MEMORY_LEAST_SHARE of the before side's and MEMORY_LEAST_BYTES,
 * and the level by more than its steps' spread. */
#define MEMORY_LEAST_SHARE 0.05
#define MEMORY_LEAST_BYTES 1048576.0

static void compare_memory(const struct ct_job_process *const side[2], struct ct_diff_pair *pair)
{
    pair->peak = (struct ct_diff_number){ct_diff_value(side[0]->report, "memory.peak_bytes"),
                                         ct_diff_value(side[1]->report, "memory.peak_bytes"), 0, 0};
    pair->peak.noise = fmax(MEMORY_LEAST_SHARE * pair->peak.before, MEMORY_LEAST_BYTES);
    ct_diff_judge(&pair->peak);
    if (pair->basis != CT_DIFF_PER_STEP)
        return;
    pair->step_end = step_medians(side, "end_live_bytes");
    step_figure(side, "end_live_bytes",
                fmax(MEMORY_LEAST_SHARE * pair->step_end.before, MEMORY_LEAST_BYTES), 0,
                &pair->step_end);
}

static int same_finding(const struct ct_finding *a, const struct ct_finding *b)
{
    return a->id == b->id &&
           (a->where && b->where ? strcmp(a->where, b->where) == 0 : a->where == b->where);
}

/* A job's findings by process: those of process p are at
 * order[first[p]] to order[first[p + 1]] (indexes into the findings), so
 * a pair looks only at its own however many processes the job has. */
struct finding_index {
    const struct ct_job *job;
    size_t *first, *order;
};

static void index_findings(const struct ct_job *job, struct finding_index *ix)
{
    ix->job = job;
    ix->first = calloc(job->process_count + 2, sizeof *ix->first);
    ix->order = malloc((job->findings.count + 1) * sizeof *ix->order);
    if (!ix->first || !ix->order)
        abort();
    for (size_t i = 0; i < job->findings.count; i++)
        ix->first[job->findings.items[i].process + 2]++;
    for (size_t p = 2; p < job->process_count + 2; p++)
        ix->first[p] += ix->first[p - 1];
    for (size_t i = 0; i < job->findings.count; i++)
        ix->order[ix->first[job->findings.items[i].process + 1]++] = i;
}

static void free_index(struct finding_index *ix)
{
    free(ix->first);
    free(ix->order);
}

/* The findings of process `p` (of `mine`'s job) that process `q` (of
 * `theirs`') does not have, into a new array; how many. */
static size_t findings_only(const struct finding_index *mine, size_t p,
                            const struct finding_index *theirs, size_t q,
                            const struct ct_finding ***out)
{
    size_t n = 0;
    *out = NULL;
    for (size_t i = mine->first[p]; i < mine->first[p + 1]; i++) {
        const struct ct_finding *f = &mine->job->findings.items[mine->order[i]];
        int elsewhere = 0;
        for (size_t k = theirs->first[q]; k < theirs->first[q + 1] && !elsewhere; k++)
            elsewhere = same_finding(f, &theirs->job->findings.items[theirs->order[k]]);
        if (elsewhere)
            continue;
        *out = ct_array_grow(*out, n, sizeof **out);
        (*out)[n++] = f;
    }
    return n;
}

int ct_diff_counts_finding(const struct ct_finding *f)
{
    return !ct_finding_host_timing(f->id);
}

static int counted_findings(const struct ct_finding *const *f, size_t count)
{
    int counted = 0;
    for (size_t i = 0; i < count; i++)
        counted |= ct_diff_counts_finding(f[i]);
    return counted;
}

static int any_moved(const struct ct_diff_pair *p)
{
    int moved = p->env_count || p->steps.median.moved || p->kernels.count || p->calls.count ||
                p->sites.count || p->copies.moved || p->peak.moved || p->step_end.moved ||
                counted_findings(p->appeared, p->appeared_count) ||
                counted_findings(p->went_away, p->went_away_count);
    for (int k = 0; k < CT_DIFF_PARTS; k++)
        moved |= p->steps.parts[k].moved;
    return moved;
}

static void compare_pair(const struct ct_diff *d, const struct finding_index ix[2],
                         struct ct_diff_pair *pair)
{
    const struct ct_job_process *side[2] = {&d->before->processes[pair->before],
                                            &d->after->processes[pair->after]};
    ct_diff_environment(side[0], side[1], pair);
    compare_steps(side, pair);
    compare_memory(side, pair);
    ct_diff_work(side[0], side[1], pair);
    pair->went_away_count =
        findings_only(&ix[0], pair->before, &ix[1], pair->after, &pair->went_away);
    pair->appeared_count =
        findings_only(&ix[1], pair->after, &ix[0], pair->before, &pair->appeared);
    pair->changed = any_moved(pair);
}

static int all_ranked(const struct ct_job *job)
{
    for (size_t i = 0; i < job->process_count; i++)
        if (job->processes[i].identity.rank < 0)
            return 0;
    return job->process_count > 0;
}

/* The before process `after` pairs with, among those not paired yet
 * (taken[] 0); `by_rank`: the one of its rank, else the first. */
static size_t partner(const struct ct_diff *d, const struct ct_job_process *after, int by_rank,
                      const char *taken)
{
    for (size_t i = 0; i < d->before->process_count; i++)
        if (!taken[i] &&
            (!by_rank || d->before->processes[i].identity.rank == after->identity.rank))
            return i;
    return d->before->process_count;
}

static void add_index(size_t **list, size_t *count, size_t index)
{
    *list = ct_array_grow(*list, *count, sizeof **list);
    (*list)[(*count)++] = index;
}

void ct_diff_make(const struct ct_job *before, const struct ct_job *after, struct ct_diff *out)
{
    memset(out, 0, sizeof *out);
    out->before = before;
    out->after = after;
    int by_rank = all_ranked(before) && all_ranked(after);
    char *taken = calloc(before->process_count + 1, 1);
    struct finding_index ix[2];
    if (!taken)
        abort();
    index_findings(before, &ix[0]);
    index_findings(after, &ix[1]);
    for (size_t k = 0; k < after->process_count; k++) {
        size_t i = partner(out, &after->processes[k], by_rank, taken);
        if (i == before->process_count) {
            add_index(&out->only_after, &out->only_after_count, k);
            continue;
        }
        taken[i] = 1;
        out->pairs = ct_array_grow(out->pairs, out->pair_count, sizeof *out->pairs);
        struct ct_diff_pair *pair = &out->pairs[out->pair_count++];
        memset(pair, 0, sizeof *pair);
        pair->before = i;
        pair->after = k;
        compare_pair(out, ix, pair);
    }
    for (size_t i = 0; i < before->process_count; i++)
        if (!taken[i])
            add_index(&out->only_before, &out->only_before_count, i);
    free(taken);
    free_index(&ix[0]);
    free_index(&ix[1]);
}

double ct_diff_worst_rise(const struct ct_diff *d)
{
    double worst = 0;
    for (size_t i = 0; i < d->pair_count; i++) {
        const struct ct_diff_number *m = &d->pairs[i].steps.judged;
        if (m->moved && m->before > 0 && m->after > m->before)
            worst = fmax(worst, (m->after - m->before) / m->before);
    }
    return worst;
}

static void free_items(struct ct_diff_items *items)
{
    free(items->items);
}

void ct_diff_free(struct ct_diff *d)
{
    for (size_t i = 0; i < d->pair_count; i++) {
        struct ct_diff_pair *p = &d->pairs[i];
        free(p->env);
        free_items(&p->kernels);
        free_items(&p->calls);
        free_items(&p->sites);
        free(p->appeared);
        free(p->went_away);
    }
    free(d->pairs);
    free(d->only_before);
    free(d->only_after);
    memset(d, 0, sizeof *d);
}
