/*
 * A process's training steps, from where they are said or found, in this
 * order: what CUDATRACE_STEP names (cudatrace report --step, or the traced
 * process's own environment): the NVTX ranges of one name (nvtx:NAME) or
 * the calls that end a step (step_calls.c); else the markers the program
 * already makes: the NVTX ranges whose name says step or iteration
 * ("train_step", "iteration", PyTorch's "ProfilerStep#12", whose number is
 * cut at the '#'), when one such name recurs at least MIN_STEPS times, the
 * most frequent winning, then the one with the most time; else the NVTX
 * marks whose name says step, a step from one to the next on a thread;
 * else cudaProfilerStart/Stop windows (torch.cuda.profiler.start and stop),
 * when a loop opens at least MIN_STEPS; else the steps
 * found in the launching thread's repetition (step_calls.c). Steps are
 * numbered in time order. Step 1 is said apart, as warm-up (compilation,
 * autotuning, the caching allocator's first allocations make it unlike the
 * rest), steps 1 and 2 where they were found in the calls, and the step
 * figures are the others'.
 */
#include "viewer-export/model/steps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/step_names.h"
#include "viewer-export/findings/thresholds.h"
#include "viewer-export/model/report.h"

#define MIN_STEPS 3
#define SLOW_STEP_MIN_NS 1000000

#define MARKERS 32 /* distinct step markers looked at */

/* The recurring step marker among the names of a tally of NVTX ranges or
 * marks (a name each, however many): the most frequent, then the one with
 * the most time; NULL when none recurs `at_least` times. */
static const char *choose_marker(const struct ct_site_costs *names, uint64_t at_least)
{
    struct marker {
        const char *name;
        size_t len;
        uint64_t count, ns;
    } markers[MARKERS];
    size_t n = 0, best = MARKERS;
    for (size_t i = 0; i < names->count; i++) {
        const struct ct_site_cost *c = &names->items[i];
        size_t len = ct_step_marker_length(c->site), k = 0;
        if (!len)
            continue;
        while (k < n && !(markers[k].len == len && strncmp(markers[k].name, c->site, len) == 0))
            k++;
        if (k == n && n == MARKERS)
            continue;
        if (k == n)
            markers[n++] = (struct marker){c->site, len, 0, 0};
        markers[k].count += c->calls;
        markers[k].ns += c->ns;
    }
    for (size_t k = 0; k < n; k++)
        if (markers[k].count >= at_least &&
            (best == MARKERS || markers[k].count > markers[best].count ||
             (markers[k].count == markers[best].count && markers[k].ns > markers[best].ns)))
            best = k;
    return best < MARKERS ? markers[best].name : NULL;
}

/* Whether `name` is the marker `marker`, `len` long: the same up to a '#'. */
static int is_marker(const char *name, const char *marker, size_t len)
{
    return strcspn(name, "#") == len && strncmp(name, marker, len) == 0;
}

static int by_start(const void *a, const void *b)
{
    const struct ct_gpu_interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static int by_time(const void *a, const void *b)
{
    const struct ct_step_time *x = a, *y = b;
    return (x->ns > y->ns) - (x->ns < y->ns);
}

/* The spans of the NVTX ranges named `marker` (up to a '#', `len` long),
 * in time order, and their thread (a made array the caller frees). */
static struct ct_gpu_interval *nvtx_spans(const struct ct_usage *u, const char *marker, size_t len,
                                          size_t *count, int64_t *tid)
{
    size_t n = 0;
    struct ct_gpu_interval *spans = malloc((u->nvtx_span_count + 1) * sizeof *spans);
    if (!spans)
        abort();
    for (size_t i = 0; i < u->nvtx_span_count; i++) {
        if (is_marker(u->nvtx_spans[i].name, marker, len)) {
            spans[n++] = u->nvtx_spans[i].span;
            *tid = u->nvtx_spans[i].tid;
        }
    }
    qsort(spans, n, sizeof *spans, by_start);
    *count = n;
    return spans;
}

/* The spans from each mark `marker` (`len` long) to the next on the same
 * thread, that of the first such mark. */
static struct ct_gpu_interval *mark_spans(const struct ct_usage *u, const char *marker, size_t len,
                                          size_t *count, int64_t *tid)
{
    struct ct_gpu_interval *spans = malloc((u->step_mark_count + 1) * sizeof *spans);
    if (!spans)
        abort();
    size_t n = 0;
    uint64_t last = 0;
    int seen = 0;
    for (size_t i = 0; i < u->step_mark_count; i++) {
        const struct ct_nvtx_span *m = &u->step_marks[i];
        if (!is_marker(m->name, marker, len) || (seen && m->tid != *tid))
            continue;
        if (seen)
            spans[n++] = (struct ct_gpu_interval){last, m->span.start};
        *tid = m->tid;
        last = m->span.start;
        seen = 1;
    }
    qsort(spans, n, sizeof *spans, by_start);
    *count = n;
    return spans;
}

/* The cudaProfilerStart/Stop windows, in time order. */
static struct ct_gpu_interval *window_spans(const struct ct_step_calls *c, size_t *count)
{
    struct ct_gpu_interval *spans = malloc((c->window_total + 1) * sizeof *spans);
    if (!spans)
        abort();
    for (size_t i = 0; i < c->window_total; i++)
        spans[i] = (struct ct_gpu_interval){c->windows[i].start, c->windows[i].end};
    qsort(spans, c->window_total, sizeof *spans, by_start);
    *count = c->window_total;
    return spans;
}

/* The spans between the calls that end the steps (step_calls.c), but the
 * one across a bounded trace's dropped middle, whose calls are gone: the
 * steps in it are not counted (`gap_uncounted`) rather than one step as
 * long as the middle. */
static struct ct_gpu_interval *call_spans(const struct ct_step_bounds *b,
                                          const struct ct_trace_gap *gap, struct ct_steps *out,
                                          size_t *count)
{
    struct ct_gpu_interval *spans = malloc((b->count + 1) * sizeof *spans);
    if (!spans)
        abort();
    size_t n = 0;
    for (size_t i = 0; b->found && i < b->count; i++) {
        struct ct_gpu_interval span = {i ? b->ends[i - 1] : b->first_start, b->ends[i]};
        if (gap->to_ns && span.start <= gap->from_ns && span.end >= gap->to_ns)
            out->gap_uncounted = 1;
        else
            spans[n++] = span;
    }
    *count = n;
    return spans;
}

/* The dropped middle's steps of the NVTX ranges `marker` (`len` long), as
 * the collector tallied them by duration bucket: each at its bucket's mean
 * (a made array the caller frees; *count of them). */
static uint64_t *gap_times(const struct ct_usage *u, const char *marker, size_t len, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < u->gap_step_count; i++) {
        const struct ct_slow_call *g = &u->gap_steps[i];
        if (g->site && is_marker(g->site, marker, len))
            n += g->calls;
    }
    uint64_t *times = malloc((n + 1) * sizeof *times);
    if (!times)
        abort();
    *count = 0;
    for (size_t i = 0; i < u->gap_step_count; i++) {
        const struct ct_slow_call *g = &u->gap_steps[i];
        if (g->site && is_marker(g->site, marker, len))
            for (uint64_t k = 0; k < g->calls; k++)
                times[(*count)++] = g->ns;
    }
    return times;
}

/* The steps' spans, in time order, from where CUDATRACE_STEP says, else
 * from the markers, else from the calls; their source in `out`, and the
 * times of a dropped middle's in *gap (NULL but for NVTX steps). */
static struct ct_gpu_interval *step_spans(const struct ct_process_report *p, struct ct_steps *out,
                                          size_t *n, uint64_t **gap)
{
    const struct ct_usage *u = &p->usage;
    const char *spec = ct_step_calls_spec(&p->step_calls);
    if (spec && strncmp(spec, "nvtx:", 5) == 0) {
        size_t len = strcspn(spec + 5, "#");
        snprintf(out->source, sizeof out->source, "CUDATRACE_STEP=%.200s", spec);
        *gap = gap_times(u, spec + 5, len, &out->in_gap);
        return nvtx_spans(u, spec + 5, len, n, &out->tid);
    }
    const char *marker = spec ? NULL : choose_marker(&u->nvtx_ranges, MIN_STEPS);
    if (marker) {
        size_t len = ct_step_marker_length(marker);
        snprintf(out->source, sizeof out->source, "nvtx:%.*s", (int)len, marker);
        struct ct_gpu_interval *spans = nvtx_spans(u, marker, len, n, &out->tid);
        if (*n) { /* else its ranges were past those kept with their spans */
            *gap = gap_times(u, marker, len, &out->in_gap);
            return spans;
        }
        free(spans);
    }
    /* N marks make N - 1 steps */
    const char *mark = spec ? NULL : choose_marker(&u->step_mark_names, MIN_STEPS + 1);
    if (mark) {
        size_t len = ct_step_marker_length(mark);
        snprintf(out->source, sizeof out->source, "nvtx-mark:%.*s", (int)len, mark);
        return mark_spans(u, mark, len, n, &out->tid);
    }
    if (!spec && p->step_calls.window_total >= MIN_STEPS) {
        snprintf(out->source, sizeof out->source, "profiler:cudaProfilerStart..cudaProfilerStop");
        return window_spans(&p->step_calls, n);
    }
    const struct ct_step_bounds *b = &p->step_calls.bounds;
    if (spec)
        snprintf(out->source, sizeof out->source, "CUDATRACE_STEP=%.200s", spec);
    else
        snprintf(out->source, sizeof out->source, "inferred:%.240s", b->boundary);
    out->tid = b->tid;
    out->cut = b->cut;
    return call_spans(b, &p->run.gap, out, n);
}

/* The host sampler's thread `tid`, or NULL when it sampled none. */
static const struct ct_host_thread *sampled_thread(const struct ct_host *h, int64_t tid)
{
    const uint64_t *place = ct_u64_map_find(&h->by_tid, (uint64_t)tid + 1);
    return place ? &h->threads[*place - 1] : NULL;
}

/* What step_parts reads of the timelines, each made once for all the
 * steps: over a long run's steps, a walk over the spans a step would
 * cost more than the rest of the report. */
enum part {
    SYNC,
    IN_CUDA,
    LAUNCHES,
    COPIES,
    COPY_NS,
    COPY_BYTES,
    RUNNING,
    WAITING,
    CPU_WAIT,
    PARTS
};

static int part_sums(const struct ct_process_report *p, int64_t tid,
                     struct ct_timeline_prefix *sums)
{
    const struct ct_usage *u = &p->usage;
    const struct ct_host_thread *t = sampled_thread(&p->host, tid);
    ct_timeline_prefix_make(&sums[SYNC], &u->host_blocked, CT_TIMELINE_TIME);
    ct_timeline_prefix_make(&sums[IN_CUDA], &u->host_in_cuda, CT_TIMELINE_TIME);
    ct_timeline_prefix_make(&sums[LAUNCHES], &u->launches_by_time, CT_TIMELINE_VALUES);
    ct_timeline_prefix_make(&sums[COPIES], &u->copies_by_time, CT_TIMELINE_VALUES);
    ct_timeline_prefix_make(&sums[COPY_NS], &u->copies_by_time, CT_TIMELINE_TIME);
    ct_timeline_prefix_make(&sums[COPY_BYTES], &u->copies_by_time, CT_TIMELINE_TOTAL);
    if (!t)
        return RUNNING;
    ct_timeline_prefix_make(&sums[RUNNING], &t->measure[CT_HOST_OUTSIDE_RUNNING], CT_TIMELINE_TIME);
    ct_timeline_prefix_make(&sums[WAITING], &t->measure[CT_HOST_OUTSIDE_WAITING], CT_TIMELINE_TIME);
    ct_timeline_prefix_make(&sums[CPU_WAIT], &t->measure[CT_HOST_RUNNABLE], CT_TIMELINE_TIME);
    return PARTS;
}

/* Part `k` of [a, b): nanoseconds, whole ones, or a count or bytes,
 * rounded; 0 for the host's parts where the sampler saw no such thread. */
static uint64_t part_within(const struct ct_timeline_prefix *sums, int made, enum part k,
                            uint64_t a, uint64_t b)
{
    double v = (int)k < made ? ct_timeline_prefix_within(&sums[k], a, b) : 0;
    if (v <= 0)
        return 0;
    return sums[k].measure == CT_TIMELINE_TIME ? (uint64_t)v : (uint64_t)(v + 0.5);
}

/* Each step's parts (struct ct_step) on thread `tid`. */
static struct ct_step *step_parts(const struct ct_process_report *p,
                                  const struct ct_gpu_interval *spans, size_t n, int64_t tid)
{
    const struct ct_usage *u = &p->usage;
    struct ct_timeline_prefix sums[PARTS];
    int made = part_sums(p, tid, sums);
    struct ct_step *all = calloc(n, sizeof *all);
    uint64_t *busy = calloc(n, sizeof *busy);
    if (!all || !busy)
        abort();
    if (ct_gpu_seen(&u->gpu))
        ct_gpu_busy_within(&u->gpu, spans, n, busy);
    for (size_t i = 0; i < n; i++) {
        uint64_t a = spans[i].start, b = spans[i].end;
        all[i] = (struct ct_step){.start = a,
                                  .ns = b - a,
                                  .gpu_busy_ns = busy[i],
                                  .sync_ns = part_within(sums, made, SYNC, a, b),
                                  .in_cuda_ns = part_within(sums, made, IN_CUDA, a, b),
                                  .host_running_ns = part_within(sums, made, RUNNING, a, b),
                                  .host_waiting_ns = part_within(sums, made, WAITING, a, b),
                                  .cpu_wait_ns = part_within(sums, made, CPU_WAIT, a, b),
                                  .launches = part_within(sums, made, LAUNCHES, a, b),
                                  .copies = part_within(sums, made, COPIES, a, b),
                                  .copy_ns = part_within(sums, made, COPY_NS, a, b),
                                  .copy_bytes = part_within(sums, made, COPY_BYTES, a, b),
                                  .memory_end_bytes =
                                      (uint64_t)ct_timeline_level_at(&u->low_points, b, 0)};
    }
    for (int k = 0; k < made; k++)
        ct_timeline_prefix_free(&sums[k]);
    free(busy);
    return all;
}

/* Slow steps, the slowest first: those over `slow_step_factor` times the
 * median and SLOW_STEP_MIN_NS over it (a 60 us step taking 100 us is a
 * scheduler's hiccup, no story). */
static void slow_steps(const struct ct_step_time *sorted, size_t n, struct ct_steps *out)
{
    for (size_t i = n; i-- > 0 && out->slow_count < CT_SLOW_STEPS;)
        if ((double)sorted[i].ns > ct_thresholds.slow_step_factor * (double)out->median_ns &&
            sorted[i].ns - out->median_ns >= SLOW_STEP_MIN_NS)
            out->slow[out->slow_count++] = sorted[i];
}

/* The figures over the steps after warm-up (`kept`, m of them) and the
 * dropped middle's (`gap`, g of them, unnumbered: step 0). */
static void figures(const struct ct_step_time *kept, size_t m, const uint64_t *gap, size_t g,
                    struct ct_steps *out)
{
    size_t n = m + g;
    struct ct_step_time *all = malloc((n + 1) * sizeof *all);
    if (!all)
        abort();
    memcpy(all, kept, m * sizeof *all);
    for (size_t i = 0; i < g; i++)
        all[m + i] = (struct ct_step_time){0, gap[i]};
    qsort(all, n, sizeof *all, by_time);
    out->median_ns = all[(n - 1) / 2].ns;
    out->p90_ns = all[(n * 90 + 99) / 100 - 1].ns;
    out->p99_ns = all[(n * 99 + 99) / 100 - 1].ns;
    out->worst = all[n - 1];
    free(all);
}

/* The steps of `p`, found from its events; 0 when it has none. */
static int find(const struct ct_process_report *p, struct ct_steps *out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    uint64_t *gap = NULL;
    struct ct_gpu_interval *spans = step_spans(p, out, &n, &gap);
    if (!n) {
        free(spans);
        free(gap);
        memset(out, 0, sizeof *out);
        return 0;
    }
    struct ct_step_time *times = malloc(n * sizeof *times);
    if (!times)
        abort();
    for (size_t i = 0; i < n; i++)
        times[i] = (struct ct_step_time){i + 1, spans[i].end - spans[i].start};
    out->count = n;
    out->first_ns = times[0].ns;
    /* Steps found in the calls end wherever the loop turns, which may be
     * inside an iteration: the first iteration's one-time costs then fall
     * in step 2 as well as in step 1. */
    size_t warmup = strncmp(out->source, "inferred:", 9) == 0 ? 2 : 1;
    out->warmup = n > warmup + 1 ? warmup : n >= MIN_STEPS ? 1 : 0;
    size_t m = n - out->warmup;
    struct ct_step_time *sorted = times + out->warmup;
    figures(sorted, m, gap, out->in_gap, out);
    qsort(sorted, m, sizeof *sorted, by_time);
    out->median_step = sorted[(m - 1) / 2]; /* the kept step the median's parts are of */
    slow_steps(sorted, m, out);
    out->all = step_parts(p, spans, n, out->tid);
    free(times);
    free(spans);
    free(gap);
    return 1;
}

void ct_steps_settle(struct ct_process_report *p)
{
    struct ct_steps found;
    if (!find(p, &found))
        memset(&found, 0, sizeof found);
    p->steps = found;
}

const struct ct_steps *ct_steps_of(const struct ct_process_report *p)
{
    return p->steps.count ? &p->steps : NULL;
}

int ct_steps_take(struct ct_process_report *p, struct ct_steps *out)
{
    *out = p->steps;
    memset(&p->steps, 0, sizeof p->steps);
    return out->count > 0;
}

void ct_steps_free(struct ct_steps *s)
{
    free(s->all);
    s->all = NULL;
}
