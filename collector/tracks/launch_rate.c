/*
 * Kernel launches per second in 100 ms buckets. A bucket is written a while
 * after it closes (the caller decides how long), so a launch record that
 * reaches the collector late still lands in its own bucket; one that comes
 * later still is added to the oldest open bucket rather than lost.
 */
#include "collector/tracks/launch_rate.h"

#define BUCKET_NS 100000000ull
#define BUCKETS CT_LAUNCH_RATE_BUCKETS

void ct_launch_rate_start(struct ct_launch_rate *l, struct ct_process *process)
{
    *l = (struct ct_launch_rate){.process = process};
}

void ct_launch_rate_count(struct ct_launch_rate *l, uint64_t ts)
{
    uint64_t bucket = ts / BUCKET_NS;
    if (!l->seen) {
        l->first_open = bucket;
        l->seen = 1;
    }
    if (bucket < l->first_open)
        bucket = l->first_open;
    if (bucket >= l->first_open + BUCKETS)
        bucket = l->first_open + BUCKETS - 1;
    l->counts[bucket % BUCKETS]++;
    if (bucket > l->last_bucket)
        l->last_bucket = bucket;
}

void ct_launch_rate_write(struct ct_launch_rate *l, uint64_t now_ns)
{
    if (!l->seen)
        return;
    uint64_t closed = now_ns / BUCKET_NS;
    while (l->first_open < closed) {
        uint64_t *count = &l->counts[l->first_open % BUCKETS];
        ct_process_counter(l->process, CT_TRACK_LAUNCH_RATE, l->first_open * BUCKET_NS,
                           (int64_t)(*count * (1000000000ull / BUCKET_NS)));
        *count = 0;
        l->first_open++;
    }
}

void ct_launch_rate_finish(struct ct_launch_rate *l)
{
    ct_launch_rate_write(l, (l->last_bucket + 1) * BUCKET_NS);
}
