/*
 * Bounded timelines. The first span starts at the first value noted and is
 * 1 us wide, so a short run still gets all its spans; each time a value
 * falls past the last span, pairs of spans merge (the lower of the two, or
 * their sum) and every span doubles in width. A value from before the start
 * (threads' slices arrive out of order) counts in the first span.
 */
#include "viewer-export/model/timeline.h"

static double merged(const struct ct_timeline *t, double a, double b)
{
    if (t->merge == CT_TIMELINE_SUM)
        return a + b;
    if (a < 0)
        return b;
    return b >= 0 && b < a ? b : a;
}

static void halve(struct ct_timeline *t)
{
    double empty = t->merge == CT_TIMELINE_MIN ? -1 : 0;
    for (int i = 0; i < CT_TIMELINE_SPANS / 2; i++) {
        double a = 2 * i < t->used ? t->value[2 * i] : empty;
        double b = 2 * i + 1 < t->used ? t->value[2 * i + 1] : empty;
        t->value[i] = merged(t, a, b);
    }
    t->used = (t->used + 1) / 2;
    t->span_ns *= 2;
}

/* The span `ts` falls in, made to exist. */
static int span_of(struct ct_timeline *t, uint64_t ts)
{
    if (!t->span_ns) {
        t->start_ns = ts;
        t->span_ns = 1000;
    }
    uint64_t slot = ts > t->start_ns ? (ts - t->start_ns) / t->span_ns : 0;
    while (slot >= CT_TIMELINE_SPANS) {
        halve(t);
        slot = (ts - t->start_ns) / t->span_ns;
    }
    while (t->used <= (int)slot)
        t->value[t->used++] = t->merge == CT_TIMELINE_MIN ? -1 : 0;
    return (int)slot;
}

void ct_timeline_note(struct ct_timeline *t, uint64_t ts, double value)
{
    int slot = span_of(t, ts);
    t->value[slot] = merged(t, t->value[slot], value);
}

void ct_timeline_add_interval(struct ct_timeline *t, uint64_t from, uint64_t to)
{
    if (to <= from)
        return;
    if (!t->span_ns)
        span_of(t, from);
    span_of(t, to - 1); /* widen first, so the spans below do not move */
    if (from < t->start_ns)
        from = t->start_ns;
    for (int slot = span_of(t, from); from < to; slot++) {
        uint64_t span_end = t->start_ns + (uint64_t)(slot + 1) * t->span_ns;
        uint64_t until = to < span_end ? to : span_end;
        t->value[slot] += (double)(until - from);
        from = until;
    }
}

double ct_timeline_sum(const struct ct_timeline *t, uint64_t from, uint64_t to)
{
    double sum = 0;
    for (int i = 0; i < t->used; i++) {
        uint64_t a = t->start_ns + (uint64_t)i * t->span_ns, b = a + t->span_ns;
        uint64_t lo = from > a ? from : a, hi = to < b ? to : b;
        if (hi > lo)
            sum += t->value[i] * (double)(hi - lo) / (double)t->span_ns;
    }
    return sum;
}
