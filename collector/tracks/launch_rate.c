/*
 * Kernel launches per second in 100 ms buckets. A bucket is written a while
 * after it closes (the caller decides how long), so a launch record that
 * reaches the collector late still lands in its own bucket; one that comes
 * later still is added to the oldest open bucket rather than lost.
 */
#include "collector/tracks/launch_rate.h"

#include "collector/perfetto/process_tracks.h"

#define BUCKET_NS 100000000ull
#define BUCKETS 64

static uint64_t counts[BUCKETS];
static uint64_t first_open; /* buckets before it are written */
static uint64_t last_bucket;
static int seen;

void ct_launch_rate_count(uint64_t ts)
{
    uint64_t bucket = ts / BUCKET_NS;
    if (!seen) {
        first_open = bucket;
        seen = 1;
    }
    if (bucket < first_open)
        bucket = first_open;
    if (bucket >= first_open + BUCKETS)
        bucket = first_open + BUCKETS - 1;
    counts[bucket % BUCKETS]++;
    if (bucket > last_bucket)
        last_bucket = bucket;
}

void ct_launch_rate_write(uint64_t now_ns)
{
    if (!seen)
        return;
    uint64_t closed = now_ns / BUCKET_NS;
    while (first_open < closed) {
        uint64_t *count = &counts[first_open % BUCKETS];
        ct_process_counter(&ct_process, CT_TRACK_LAUNCH_RATE, first_open * BUCKET_NS,
                           (int64_t)(*count * (1000000000ull / BUCKET_NS)));
        *count = 0;
        first_open++;
    }
}

void ct_launch_rate_finish(void)
{
    ct_launch_rate_write((last_bucket + 1) * BUCKET_NS);
}
