/*
 * A value over the run in bounded memory (timeline.c): CT_TIMELINE_SPANS
 * equal spans of time that double in width, pairs merging, as the run
 * outgrows them. A span keeps the lowest value noted in it (the low points
 * of live memory) or a sum (time spent in some state).
 */
#ifndef CT_TIMELINE_H
#define CT_TIMELINE_H

#include <stdint.h>

#define CT_TIMELINE_SPANS 256

enum ct_timeline_merge { CT_TIMELINE_MIN, CT_TIMELINE_SUM };

struct ct_timeline {
    enum ct_timeline_merge merge;
    uint64_t start_ns, span_ns;      /* span_ns 0: nothing noted yet */
    double value[CT_TIMELINE_SPANS]; /* MIN: -1 for a span with no value */
    int used;
};

/* MIN: `value` at `ts`. SUM: adds `value` to the span `ts` falls in. */
void ct_timeline_note(struct ct_timeline *t, uint64_t ts, double value);
/* SUM: adds the nanoseconds of [from, to) to the spans it covers. */
void ct_timeline_add_interval(struct ct_timeline *t, uint64_t from, uint64_t to);
/* SUM: what the spans hold over [from, to), counting a span that lies
 * partly inside in proportion. */
double ct_timeline_sum(const struct ct_timeline *t, uint64_t from, uint64_t to);

#endif
