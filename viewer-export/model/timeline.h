/*
 * A quantity over a run in bounded memory (timeline.c): a fixed number of
 * equal spans of time that double in width, pairs merging, as the run
 * outgrows them. Each span keeps what was noted in it: the lowest, highest
 * and latest value (the low points of live memory, a counter's plot) and
 * the time added to it (time spent in some state). The report's usage
 * figures and the html export's plots are both drawn from it.
 */
#ifndef CT_VIEWER_MODEL_TIMELINE_H
#define CT_VIEWER_MODEL_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define CT_TIMELINE_SPANS 256     /* spans unless `capacity` says otherwise */
#define CT_TIMELINE_FIRST_NS 1000 /* the first width unless `first_span_ns` does */

struct ct_span {
    double min, max, last; /* of the values noted; last: the latest by time */
    uint64_t last_ts;
    uint64_t values;    /* values noted in it */
    double total;       /* of the values noted */
    double sum;         /* of the intervals' time in it */
    uint64_t intervals; /* intervals that touched it */
};

/* Zero-initialised, a timeline of CT_TIMELINE_SPANS spans that starts at its
 * first value, CT_TIMELINE_FIRST_NS wide. */
struct ct_timeline {
    size_t capacity;
    uint64_t first_span_ns;
    uint64_t start_ns, span_ns; /* span_ns 0: nothing noted yet */
    size_t used;                /* spans [0, used) exist */
    struct ct_span *spans;      /* capacity of them, made at the first value */
};

/* Where spans count from, when it is not the first value's time: only
 * before anything is noted. */
void ct_timeline_start_at(struct ct_timeline *t, uint64_t start_ns);
/* `value` at `ts`. A time before the start counts in the first span. */
void ct_timeline_note(struct ct_timeline *t, uint64_t ts, double value);
/* Adds the nanoseconds of [from, to) to the spans it covers; time before
 * the start counts in the first span. */
void ct_timeline_add_interval(struct ct_timeline *t, uint64_t from, uint64_t to);
/* What a span holds, as the queries below take it: the time of the
 * intervals added to it, the values noted in it, or their total. */
enum ct_timeline_measure { CT_TIMELINE_TIME, CT_TIMELINE_VALUES, CT_TIMELINE_TOTAL };
/* The time the spans hold over [from, to), counting a span that lies partly
 * inside in proportion. */
double ct_timeline_sum(const struct ct_timeline *t, uint64_t from, uint64_t to);
/* How many values were noted before `ts`, counting those of the span it
 * lies inside in proportion: where a time falls in a sequence of events. */
double ct_timeline_values_before(const struct ct_timeline *t, uint64_t ts);
/* The same for the values' total: the bytes of the copies noted before
 * `ts`, say. */
double ct_timeline_total_before(const struct ct_timeline *t, uint64_t ts);
/* A measure's running sums over a timeline's spans, made once for many
 * queries over it (each of a run's steps): each query then takes no walk
 * over the spans. */
struct ct_timeline_prefix {
    const struct ct_timeline *t;
    enum ct_timeline_measure measure;
    double *sums; /* of spans [0, i) at i */
};
void ct_timeline_prefix_make(struct ct_timeline_prefix *p, const struct ct_timeline *t,
                             enum ct_timeline_measure m);
/* The measure over [from, to), as ct_timeline_sum and the _before
 * functions take it. */
double ct_timeline_prefix_within(const struct ct_timeline_prefix *p, uint64_t from, uint64_t to);
void ct_timeline_prefix_free(struct ct_timeline_prefix *p);
/* The other way: the time by which `count` values had been noted, within
 * their span in proportion; the end of the last span when there are fewer. */
uint64_t ct_timeline_time_of_values(const struct ct_timeline *t, double count);
/* The latest value noted by `ts`: the last of the latest span that ended
 * by then, or of the one `ts` lies in when its last value came by `ts`;
 * `none` when nothing was noted by then. */
double ct_timeline_level_at(const struct ct_timeline *t, uint64_t ts, double none);
void ct_timeline_free(struct ct_timeline *t);

#endif
