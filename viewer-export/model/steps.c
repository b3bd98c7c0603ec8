/*
 * Training steps from the markers a program already makes: the NVTX ranges
 * whose name says step or iteration ("train_step", "iteration", PyTorch's
 * "ProfilerStep#12", whose number is cut at the '#'), when one such name
 * recurs at least MIN_STEPS times; the most frequent wins, then the one
 * with the most time. A step is one such range, numbered in time order.
 * Step 1 is said apart, as warm-up (compilation, autotuning, the caching
 * allocator's first allocations make it unlike the rest), and the step
 * figures are the others'. Steps the program does not mark are not found
 * here.
 */
#include "viewer-export/model/steps.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer-export/findings/thresholds.h"
#include "viewer-export/model/report.h"

#define MIN_STEPS 3

/* The length of `name`'s step marker: up to a '#'; 0 when it does not say
 * step or iteration. */
static size_t marker_length(const char *name)
{
    size_t len = strcspn(name, "#");
    for (size_t i = 0; i + 4 <= len; i++) {
        char word[5] = {0};
        for (int k = 0; k < 4; k++)
            word[k] = (char)tolower((unsigned char)name[i + k]);
        if (strcmp(word, "step") == 0 || strcmp(word, "iter") == 0)
            return len;
    }
    return 0;
}

static int same_marker(const char *a, const char *b, size_t len)
{
    return marker_length(b) == len && strncmp(a, b, len) == 0;
}

#define MARKERS 32 /* distinct step markers looked at */

/* The recurring step marker among the ranges' names (the report's NVTX
 * tally, a name each, however many ranges); NULL when none recurs
 * MIN_STEPS times. */
static const char *choose_marker(const struct ct_usage *u)
{
    struct marker {
        const char *name;
        size_t len;
        uint64_t count, ns;
    } markers[MARKERS];
    size_t n = 0, best = MARKERS;
    for (size_t i = 0; i < u->nvtx_ranges.count; i++) {
        const struct ct_site_cost *c = &u->nvtx_ranges.items[i];
        size_t len = marker_length(c->site), k = 0;
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
        if (markers[k].count >= MIN_STEPS &&
            (best == MARKERS || markers[k].count > markers[best].count ||
             (markers[k].count == markers[best].count && markers[k].ns > markers[best].ns)))
            best = k;
    return best < MARKERS ? markers[best].name : NULL;
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

/* The steps' spans, in time order (a made array the caller frees). */
static struct ct_gpu_interval *step_spans(const struct ct_usage *u, const char *marker,
                                          size_t *count)
{
    size_t len = marker_length(marker), n = 0;
    struct ct_gpu_interval *spans = malloc((u->nvtx_span_count + 1) * sizeof *spans);
    if (!spans)
        abort();
    for (size_t i = 0; i < u->nvtx_span_count; i++)
        if (same_marker(marker, u->nvtx_spans[i].name, len))
            spans[n++] = u->nvtx_spans[i].span;
    qsort(spans, n, sizeof *spans, by_start);
    *count = n;
    return spans;
}

/* Each step's parts: the GPU's busy time, the time in synchronising calls
 * and in CUDA calls within it. */
static struct ct_step *step_parts(const struct ct_process_report *p,
                                  const struct ct_gpu_interval *spans, size_t n)
{
    const struct ct_usage *u = &p->usage;
    struct ct_step *all = calloc(n, sizeof *all);
    uint64_t *busy = calloc(n, sizeof *busy);
    if (!all || !busy)
        abort();
    if (ct_gpu_seen(&u->gpu))
        ct_gpu_busy_within(&u->gpu, spans, n, busy);
    for (size_t i = 0; i < n; i++)
        all[i] = (struct ct_step){
            spans[i].start, spans[i].end - spans[i].start, busy[i],
            (uint64_t)ct_timeline_sum(&u->host_blocked, spans[i].start, spans[i].end),
            (uint64_t)ct_timeline_sum(&u->host_in_cuda, spans[i].start, spans[i].end)};
    free(busy);
    return all;
}

/* Slow steps, the slowest first: those over `slow_step_factor` times the
 * median. */
static void slow_steps(const struct ct_step_time *sorted, size_t n, struct ct_steps *out)
{
    for (size_t i = n; i-- > 0 && out->slow_count < CT_SLOW_STEPS;)
        if ((double)sorted[i].ns > ct_thresholds.slow_step_factor * (double)out->median_ns)
            out->slow[out->slow_count++] = sorted[i];
}

int ct_steps_find(const struct ct_process_report *p, struct ct_steps *out)
{
    memset(out, 0, sizeof *out);
    out->marker = choose_marker(&p->usage);
    size_t n = 0;
    struct ct_gpu_interval *spans = out->marker ? step_spans(&p->usage, out->marker, &n) : NULL;
    if (!n) { /* its ranges were past the ones kept with their spans */
        free(spans);
        out->marker = NULL;
        return 0;
    }
    struct ct_step_time *times = malloc(n * sizeof *times);
    if (!times)
        abort();
    for (size_t i = 0; i < n; i++)
        times[i] = (struct ct_step_time){i + 1, spans[i].end - spans[i].start};
    out->count = n;
    snprintf(out->source, sizeof out->source, "nvtx:%.*s", (int)marker_length(out->marker),
             out->marker);
    out->first_ns = times[0].ns;
    size_t skip = n >= MIN_STEPS ? 1 : 0, m = n - skip; /* step 1 apart: warm-up */
    struct ct_step_time *sorted = times + skip;
    qsort(sorted, m, sizeof *sorted, by_time);
    out->median_step = sorted[(m - 1) / 2];
    out->median_ns = out->median_step.ns;
    out->p90_ns = sorted[(m * 90 + 99) / 100 - 1].ns;
    out->p99_ns = sorted[(m * 99 + 99) / 100 - 1].ns;
    out->worst = sorted[m - 1];
    slow_steps(sorted, m, out);
    out->all = step_parts(p, spans, n);
    const struct ct_step *median = &out->all[out->median_step.step - 1];
    out->median_gpu_busy_ns = median->gpu_busy_ns;
    out->median_sync_ns = median->sync_ns;
    out->median_in_cuda_ns = median->in_cuda_ns;
    free(times);
    free(spans);
    return 1;
}

void ct_steps_free(struct ct_steps *s)
{
    free(s->all);
    s->all = NULL;
}
