/*
 * Kernel launches per second, counted in 100 ms buckets (launch_rate.c,
 * struct ct_launch_rate, which the builder holds).
 */
#ifndef CT_COLLECTOR_LAUNCH_RATE_H
#define CT_COLLECTOR_LAUNCH_RATE_H

#include <stdint.h>

#include "collector/perfetto/process_tracks.h"

#define CT_LAUNCH_RATE_BUCKETS 64

struct ct_launch_rate {
    struct ct_process *process; /* on whose launch-rate counter */
    uint64_t counts[CT_LAUNCH_RATE_BUCKETS];
    uint64_t first_open; /* buckets before it are written */
    uint64_t last_bucket;
    int seen;
};

/* The rate of `process`'s launches, none counted yet. */
void ct_launch_rate_start(struct ct_launch_rate *l, struct ct_process *process);
void ct_launch_rate_count(struct ct_launch_rate *l, uint64_t ts);
/* Writes the rate for every bucket that ended before `now_ns`. */
void ct_launch_rate_write(struct ct_launch_rate *l, uint64_t now_ns);
/* Writes every bucket still open. */
void ct_launch_rate_finish(struct ct_launch_rate *l);

#endif
