/*
 * Checks of the bounded timeline (viewer-export/model/timeline.c) on its
 * own. Small cases worked by hand give exact spans: values and intervals
 * landing in them, pairs merging and widths doubling (twice in one note
 * when a value lands far enough out), times before the start counting in
 * the first span, sums over part of a span in proportion, where a time
 * falls among the values noted and the time of the n-th, and the
 * defaults, capacity, first_span_ns and ct_timeline_start_at. Then many
 * values and intervals at fixed random times in one timeline, against spans
 * recomputed from all of them at the final width: the merges lose nothing,
 * neither kind disturbs the other, and the spans add up exactly to the time
 * added.
 */
#include <stdlib.h>

#include "tests/unit/check.h"
#include "viewer-export/model/timeline.h"

#define RANDOM_CAPACITY 16
#define RANDOM_FIRST_NS 7 /* not a power of two: widths are 7 * 2^k */
#define RANDOM_START 1000000
#define RANDOM_COUNT 5000
#define RANDOM_RANGE 1000000000u /* times fall in [0, this), some before the start */
#define RANDOM_LONGEST 10000000u

/* Span `i` of `t` holds exactly these values, this time and this count. */
static void check_span(const struct ct_timeline *t, size_t i, struct ct_span want, const char *name)
{
    const struct ct_span *s = &t->spans[i];
    ct_check(s->values == want.values && s->intervals == want.intervals && s->sum == want.sum,
             "%s: span %zu has %llu values, %llu intervals, sum %g (got %llu, %llu, %g)", name, i,
             (unsigned long long)want.values, (unsigned long long)want.intervals, want.sum,
             (unsigned long long)s->values, (unsigned long long)s->intervals, s->sum);
    if (want.values)
        ct_check(s->min == want.min && s->max == want.max && s->last == want.last &&
                     s->last_ts == want.last_ts,
                 "%s: span %zu min %g max %g last %g at %llu (got %g %g %g at %llu)", name, i,
                 want.min, want.max, want.last, (unsigned long long)want.last_ts, s->min, s->max,
                 s->last, (unsigned long long)s->last_ts);
}

static struct ct_span values(double min, double max, double last, uint64_t last_ts, uint64_t count)
{
    return (struct ct_span){
        .min = min, .max = max, .last = last, .last_ts = last_ts, .values = count};
}

static struct ct_span time_added(double sum, uint64_t count)
{
    return (struct ct_span){.sum = sum, .intervals = count};
}

/* Four spans 10 ns wide from the first value, at 100. */
static void check_values_by_hand(void)
{
    struct ct_timeline t = {.capacity = 4, .first_span_ns = 10};
    ct_timeline_note(&t, 100, 5);
    ct_check(t.start_ns == 100 && t.span_ns == 10 && t.used == 1,
             "the first value starts the timeline at its time, first_span_ns wide");
    ct_timeline_note(&t, 105, 3);
    ct_timeline_note(&t, 103, 9); /* earlier than the latest: not the latest */
    check_span(&t, 0, values(3, 9, 3, 105, 3), "three values in one span");
    ct_timeline_note(&t, 125, 7);
    ct_timeline_note(&t, 139, 1);
    ct_check_u64(t.used, 4, "values at 125 and 139 make spans 2 and 3");
    ct_check_u64(t.spans[1].values + t.spans[1].intervals, 0, "span 1, between them, stays empty");
    /* 140 is past the fourth span: pairs merge into 20 ns spans. */
    ct_timeline_note(&t, 140, 4);
    ct_check(t.span_ns == 20 && t.used == 3, "a value past the last span doubles the width");
    check_span(&t, 0, values(3, 9, 3, 105, 3), "spans 0 and 1 merged");
    check_span(&t, 1, values(1, 7, 1, 139, 2), "spans 2 and 3 merged");
    check_span(&t, 2, values(4, 4, 4, 140, 1), "the value that widened lands after them");
    ct_check_u64(t.spans[3].values + t.spans[3].intervals, 0,
                 "the span freed by the merge is empty");
    ct_timeline_note(&t, 95, 2); /* before the start */
    check_span(&t, 0, values(2, 9, 3, 105, 4), "a value before the start counts in span 0");
    /* 260 is 160 past the start: 8 spans of 20, 4 of 40, 2 of 80. */
    ct_timeline_note(&t, 260, 6);
    ct_check(t.span_ns == 80 && t.used == 3, "a value far out doubles the width twice");
    check_span(&t, 0, values(1, 9, 4, 140, 7), "four spans merged into one");
    ct_check_u64(t.spans[1].values + t.spans[1].intervals, 0, "the span between is empty");
    check_span(&t, 2, values(6, 6, 6, 260, 1), "the far value in its span");
    ct_timeline_free(&t);
    ct_check(t.spans == NULL && t.span_ns == 0 && t.used == 0, "a freed timeline is empty");
}

/* Four spans 10 ns wide from a start set at 1000. */
static void check_intervals_by_hand(void)
{
    struct ct_timeline t = {.capacity = 4, .first_span_ns = 10};
    ct_timeline_start_at(&t, 1000);
    ct_timeline_add_interval(&t, 1005, 1032);
    check_span(&t, 0, time_added(5, 1), "[1005, 1032) in span 0");
    check_span(&t, 1, time_added(10, 1), "[1005, 1032) in span 1");
    check_span(&t, 2, time_added(10, 1), "[1005, 1032) in span 2");
    check_span(&t, 3, time_added(2, 1), "[1005, 1032) in span 3");
    ct_timeline_add_interval(&t, 990, 1003);
    check_span(&t, 0, time_added(18, 2), "[990, 1003), before the start, all in span 0");
    ct_timeline_add_interval(&t, 1010, 1010);
    ct_timeline_add_interval(&t, 1020, 1010);
    check_span(&t, 1, time_added(10, 1), "an empty or reversed interval adds nothing");
    ct_check_f64(ct_timeline_sum(&t, 0, 2000), 40, "the spans hold the 27 + 13 ns added");
    ct_check_f64(ct_timeline_sum(&t, 1005, 1015), 9 + 5, "half of span 0 and half of span 1");
    ct_check_f64(ct_timeline_sum(&t, 1040, 2000), 0, "nothing past the spans");
    /* Its end, 1061, is past the fourth span: the spans widen to 20 first. */
    ct_timeline_add_interval(&t, 1035, 1061);
    ct_check(t.span_ns == 20 && t.used == 4, "an interval past the spans widens them first");
    check_span(&t, 0, time_added(28, 3), "spans 0 and 1 merged");
    check_span(&t, 1, time_added(17, 3), "spans 2 and 3 merged, with [1035, 1040)");
    check_span(&t, 2, time_added(20, 1), "[1040, 1060) fills span 2");
    check_span(&t, 3, time_added(1, 1), "[1060, 1061) in span 3");
    ct_check_f64(ct_timeline_sum(&t, 0, UINT64_MAX), 66, "the spans hold all 66 ns added");
    ct_check_f64(ct_timeline_sum(&t, 1030, 1050), 8.5 + 10, "half of span 1 and half of span 2");
    ct_timeline_free(&t);
}

/* No start set: the first interval starts the timeline, and a later one
 * starting before it counts in span 0. */
static void check_interval_before_first(void)
{
    struct ct_timeline t = {.capacity = 4, .first_span_ns = 10};
    ct_timeline_add_interval(&t, 2000, 2015);
    ct_check_u64(t.start_ns, 2000, "the first interval's start is the timeline's");
    ct_timeline_add_interval(&t, 1990, 2012);
    check_span(&t, 0, time_added(10 + 20, 2), "time before the first interval is in span 0");
    check_span(&t, 1, time_added(5 + 2, 2), "both intervals' ends are in span 1");
    ct_check_f64(ct_timeline_sum(&t, 0, UINT64_MAX), 15 + 22, "the spans hold all 37 ns added");
    ct_timeline_free(&t);
}

static void check_settings(void)
{
    struct ct_timeline t = {0};
    ct_timeline_note(&t, 5000, 1);
    ct_check(t.capacity == CT_TIMELINE_SPANS && t.span_ns == CT_TIMELINE_FIRST_NS,
             "a zeroed timeline has CT_TIMELINE_SPANS spans, CT_TIMELINE_FIRST_NS wide");
    ct_timeline_start_at(&t, 0);
    ct_check_u64(t.start_ns, 5000, "start_at after a value changes nothing");
    uint64_t last_ts = 5000 + CT_TIMELINE_SPANS * CT_TIMELINE_FIRST_NS - 1;
    ct_timeline_note(&t, last_ts, 2);
    ct_check(t.span_ns == CT_TIMELINE_FIRST_NS && t.used == CT_TIMELINE_SPANS,
             "a value in the last span widens nothing");
    ct_timeline_note(&t, last_ts + 1, 3);
    ct_check(t.span_ns == 2 * CT_TIMELINE_FIRST_NS && t.used == CT_TIMELINE_SPANS / 2 + 1,
             "a value just past the last span doubles the width once");
    ct_timeline_free(&t);

    struct ct_timeline set = {.capacity = 3, .first_span_ns = 50};
    ct_timeline_start_at(&set, 1000);
    ct_timeline_note(&set, 1149, 1);
    ct_check(set.start_ns == 1000 && set.span_ns == 50 && set.used == 3,
             "start_at, capacity and first_span_ns are kept");
    ct_timeline_note(&set, 1150, 1);
    ct_check(set.span_ns == 100 && set.used == 2, "an odd number of spans merges the last alone");
    ct_timeline_free(&set);
}

struct noted {
    uint64_t ts, from, to;
    double value;
};

/* The span of `t` a time falls in, time before the start in span 0. */
static size_t slot_of(const struct ct_timeline *t, uint64_t ts)
{
    return ts > t->start_ns ? (size_t)((ts - t->start_ns) / t->span_ns) : 0;
}

/* What the spans of `t` should hold of `noted`, recomputed at its width:
 * values go in the span of their time, and each interval's time in the
 * spans it overlaps, its time before the start in span 0. */
static void recompute(const struct ct_timeline *t, const struct noted *noted, struct ct_span *want)
{
    for (size_t n = 0; n < RANDOM_COUNT; n++) {
        const struct noted *v = &noted[n];
        struct ct_span *s = &want[slot_of(t, v->ts)];
        int first = s->values++ == 0, latest = first || v->ts >= s->last_ts;
        s->min = first || v->value < s->min ? v->value : s->min;
        s->max = first || v->value > s->max ? v->value : s->max;
        s->last = latest ? v->value : s->last;
        s->last_ts = latest ? v->ts : s->last_ts;
        for (size_t i = slot_of(t, v->from); i <= slot_of(t, v->to - 1); i++) {
            uint64_t a = i ? t->start_ns + i * t->span_ns : 0,
                     b = t->start_ns + (i + 1) * t->span_ns;
            uint64_t lo = v->from > a ? v->from : a, hi = v->to < b ? v->to : b;
            want[i].sum += (double)(hi - lo);
            want[i].intervals++;
        }
    }
}

/* Values and intervals in one timeline: each kind is kept whole beside the
 * other, whatever the merges. */
static void check_random(void)
{
    struct ct_timeline t = {.capacity = RANDOM_CAPACITY, .first_span_ns = RANDOM_FIRST_NS};
    struct noted *noted = calloc(RANDOM_COUNT, sizeof *noted);
    struct ct_span want[RANDOM_CAPACITY] = {{0}};
    if (!noted)
        abort();
    ct_timeline_start_at(&t, RANDOM_START);
    uint64_t state = 42, added = 0;
    for (size_t n = 0; n < RANDOM_COUNT; n++) {
        struct noted *v = &noted[n];
        v->ts = ct_check_random(&state) % RANDOM_RANGE;
        v->value = (double)(ct_check_random(&state) % 1000);
        v->from = ct_check_random(&state) % RANDOM_RANGE;
        v->to = v->from + 1 + ct_check_random(&state) % RANDOM_LONGEST;
        ct_timeline_note(&t, v->ts, v->value);
        ct_timeline_add_interval(&t, v->from, v->to);
        added += v->to - v->from;
    }
    if (!ct_check(t.used <= RANDOM_CAPACITY, "random: the timeline within its capacity"))
        return;
    recompute(&t, noted, want);
    size_t wrong_values = 0, wrong_times = 0;
    double held = 0;
    for (size_t i = 0; i < RANDOM_CAPACITY; i++) {
        const struct ct_span *v = &t.spans[i], *w = &want[i];
        wrong_values += v->values != w->values ||
                        (w->values && (v->min != w->min || v->max != w->max || v->last != w->last ||
                                       v->last_ts != w->last_ts));
        wrong_times += v->sum != w->sum || v->intervals != w->intervals;
        held += v->sum;
    }
    ct_check_u64(wrong_values, 0, "random: each span's values as recomputed (wrong spans)");
    ct_check_u64(wrong_times, 0, "random: each span's time as recomputed (wrong spans)");
    ct_check_f64(held, (double)added, "random: the spans add up exactly to the time added");
    double summed = ct_timeline_sum(&t, 0, UINT64_MAX);
    ct_check(summed > (double)added * (1 - 1e-12) && summed < (double)added * (1 + 1e-12),
             "random: ct_timeline_sum over everything is the time added (%.17g, %llu)", summed,
             (unsigned long long)added);
    free(noted);
    ct_timeline_free(&t);
}

/* Values at 5, 15, 15 and 25 in spans of 10 from 0: one, two, one. */
static void check_values_as_a_sequence(void)
{
    struct ct_timeline t = {.first_span_ns = 10};
    ct_timeline_start_at(&t, 0);
    const uint64_t at[] = {5, 15, 15, 25};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        ct_timeline_note(&t, at[i], 0);
    const struct {
        uint64_t ts;
        double before;
    } forward[] = {{0, 0}, {10, 1}, {15, 2}, {25, 3.5}, {30, 4}, {100, 4}};
    for (size_t i = 0; i < sizeof forward / sizeof forward[0]; i++)
        ct_check_f64(ct_timeline_values_before(&t, forward[i].ts), forward[i].before,
                     "values before %llu", (unsigned long long)forward[i].ts);
    const struct {
        double count;
        uint64_t ts;
    } back[] = {{0, 0}, {1, 10}, {2, 15}, {3, 20}, {4, 30}, {5, 30}};
    for (size_t i = 0; i < sizeof back / sizeof back[0]; i++)
        ct_check_u64(ct_timeline_time_of_values(&t, back[i].count), back[i].ts, "time of %g values",
                     back[i].count);
    ct_timeline_free(&t);
}

int main(void)
{
    check_values_as_a_sequence();
    check_values_by_hand();
    check_intervals_by_hand();
    check_interval_before_first();
    check_settings();
    check_random();
    return ct_check_finish();
}
