/*
 * Bounded timelines (timeline.h). The spans are made at the first value,
 * which also gives the start unless one was set; each time a value falls
 * past the last span, pairs of spans merge (lowest of the lows, highest of
 * the highs, the later latest, the sums added) and every span doubles in
 * width, so the spans stay equal and their number fixed however long the
 * run. A value from before the start (threads' slices arrive out of order)
 * counts in the first span, and so does an interval's time before it: the
 * spans always add up to all the time added.
 */
#include "viewer-export/model/timeline.h"

#include <stdlib.h>
#include <string.h>

/* Values and intervals are kept apart, so a timeline may hold both. */
static void combine(struct ct_span *into, const struct ct_span *from)
{
    if (from->values) {
        if (!into->values || from->min < into->min)
            into->min = from->min;
        if (!into->values || from->max > into->max)
            into->max = from->max;
        if (!into->values || from->last_ts >= into->last_ts) {
            into->last = from->last;
            into->last_ts = from->last_ts;
        }
        into->values += from->values;
        into->total += from->total;
    }
    into->sum += from->sum;
    into->intervals += from->intervals;
}

static void halve(struct ct_timeline *t)
{
    for (size_t i = 0; 2 * i < t->used; i++) {
        struct ct_span merged = t->spans[2 * i];
        if (2 * i + 1 < t->used)
            combine(&merged, &t->spans[2 * i + 1]);
        t->spans[i] = merged;
    }
    size_t halved = (t->used + 1) / 2;
    memset(t->spans + halved, 0, (t->used - halved) * sizeof *t->spans);
    t->used = halved;
    t->span_ns *= 2;
}

static void begin(struct ct_timeline *t, uint64_t start_ns)
{
    if (!t->capacity)
        t->capacity = CT_TIMELINE_SPANS;
    if (!(t->spans = calloc(t->capacity, sizeof *t->spans)))
        abort(); /* as ct_array_grow: the command has nothing to do without memory */
    t->start_ns = start_ns;
    t->span_ns = t->first_span_ns ? t->first_span_ns : CT_TIMELINE_FIRST_NS;
}

void ct_timeline_start_at(struct ct_timeline *t, uint64_t start_ns)
{
    if (!t->span_ns)
        begin(t, start_ns);
}

/* The span `ts` falls in, made to exist. */
static size_t span_of(struct ct_timeline *t, uint64_t ts)
{
    if (!t->span_ns)
        begin(t, ts);
    uint64_t offset = ts > t->start_ns ? ts - t->start_ns : 0;
    while (offset / t->span_ns >= t->capacity)
        halve(t);
    size_t slot = (size_t)(offset / t->span_ns);
    if (slot >= t->used)
        t->used = slot + 1;
    return slot;
}

void ct_timeline_note(struct ct_timeline *t, uint64_t ts, double value)
{
    struct ct_span one = {
        .min = value, .max = value, .last = value, .last_ts = ts, .values = 1, .total = value};
    size_t slot = span_of(t, ts); /* before t->spans is read: it makes them */
    combine(&t->spans[slot], &one);
}

void ct_timeline_add_interval(struct ct_timeline *t, uint64_t from, uint64_t to)
{
    if (to <= from)
        return;
    if (!t->span_ns)
        begin(t, from);
    span_of(t, to - 1); /* widen first, so the spans below do not move */
    for (size_t slot = span_of(t, from); from < to; slot++) {
        uint64_t span_end = t->start_ns + (uint64_t)(slot + 1) * t->span_ns;
        uint64_t until = to < span_end ? to : span_end;
        struct ct_span part = {.sum = (double)(until - from), .intervals = 1};
        combine(&t->spans[slot], &part);
        from = until;
    }
}

/* One measure of a span: the time its intervals took, how many values
 * were noted in it, or their total. */
static double measure_of(const struct ct_span *s, enum ct_timeline_measure m)
{
    return m == CT_TIMELINE_TIME ? s->sum : m == CT_TIMELINE_VALUES ? (double)s->values : s->total;
}

/* Measure `m` of the spans before `ts`, the one it lies in in proportion;
 * from the running sums `prefix` (spans [0, i) at i) when there are some. */
static double before(const struct ct_timeline *t, const double *prefix, enum ct_timeline_measure m,
                     uint64_t ts)
{
    if (!t->used || ts <= t->start_ns)
        return 0;
    size_t k = (size_t)((ts - t->start_ns) / t->span_ns);
    size_t whole = k < t->used ? k : t->used;
    double sum = 0;
    if (prefix)
        sum = prefix[whole];
    else
        for (size_t i = 0; i < whole; i++)
            sum += measure_of(&t->spans[i], m);
    if (k < t->used)
        sum += measure_of(&t->spans[k], m) * (double)(ts - t->start_ns - (uint64_t)k * t->span_ns) /
               (double)t->span_ns;
    return sum;
}

double ct_timeline_sum(const struct ct_timeline *t, uint64_t from, uint64_t to)
{
    return to > from
               ? before(t, NULL, CT_TIMELINE_TIME, to) - before(t, NULL, CT_TIMELINE_TIME, from)
               : 0;
}

double ct_timeline_values_before(const struct ct_timeline *t, uint64_t ts)
{
    return before(t, NULL, CT_TIMELINE_VALUES, ts);
}

double ct_timeline_total_before(const struct ct_timeline *t, uint64_t ts)
{
    return before(t, NULL, CT_TIMELINE_TOTAL, ts);
}

void ct_timeline_prefix_make(struct ct_timeline_prefix *p, const struct ct_timeline *t,
                             enum ct_timeline_measure m)
{
    p->t = t;
    p->measure = m;
    if (!(p->sums = malloc((t->used + 1) * sizeof *p->sums)))
        abort();
    p->sums[0] = 0;
    for (size_t i = 0; i < t->used; i++)
        p->sums[i + 1] = p->sums[i] + measure_of(&t->spans[i], m);
}

double ct_timeline_prefix_within(const struct ct_timeline_prefix *p, uint64_t from, uint64_t to)
{
    return to > from
               ? before(p->t, p->sums, p->measure, to) - before(p->t, p->sums, p->measure, from)
               : 0;
}

void ct_timeline_prefix_free(struct ct_timeline_prefix *p)
{
    free(p->sums);
    p->sums = NULL;
}

double ct_timeline_level_at(const struct ct_timeline *t, uint64_t ts, double none)
{
    double level = none;
    for (size_t i = 0; i < t->used; i++) {
        const struct ct_span *s = &t->spans[i];
        if (t->start_ns + (uint64_t)i * t->span_ns > ts)
            break;
        if (s->values && s->last_ts <= ts)
            level = s->last;
    }
    return level;
}

uint64_t ct_timeline_time_of_values(const struct ct_timeline *t, double count)
{
    double before = 0;
    for (size_t i = 0; i < t->used; i++) {
        double here = (double)t->spans[i].values;
        uint64_t a = t->start_ns + (uint64_t)i * t->span_ns;
        if (before + here >= count && here > 0)
            return a + (uint64_t)((count - before) / here * (double)t->span_ns);
        before += here;
    }
    return t->start_ns + (uint64_t)t->used * t->span_ns;
}

void ct_timeline_free(struct ct_timeline *t)
{
    free(t->spans);
    memset(t, 0, sizeof *t);
}
