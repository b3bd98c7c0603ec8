/*
 * The TSC rate is calibrated against CLOCK_BOOTTIME from the process start
 * reading the preload took, so the baseline grows with the run and the rate
 * estimate sharpens. A new estimate would move every earlier timestamp if it
 * were applied to the whole range, reordering slices that have already been
 * written; so the mapping is piecewise linear: each estimate starts a new
 * segment at the point where the previous one ended, which keeps it
 * continuous and monotonic. Segments start at doubling baselines, so a run of
 * any length has a few dozen.
 */
#include "clock_map.h"

#include <time.h>
#include <x86intrin.h>

#include "cudatrace/record.h"

#define MAX_SEGMENTS 64

struct segment {
    uint64_t ticks; /* segment start */
    uint64_t ns;
    double ns_per_tick;
};

static uint32_t kind;
static uint64_t anchor_ticks, anchor_ns;
static struct segment segments[MAX_SEGMENTS];
static int segment_count;
static uint64_t next_update_baseline_ns;

static uint64_t boottime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A (ticks, ns) pair read as close together as the two clocks allow. */
static void read_pair(uint64_t *ticks, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = __rdtsc();
        uint64_t n = boottime_ns();
        uint64_t t1 = __rdtsc();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *ticks = t0 + (t1 - t0) / 2;
            *ns = n;
        }
    }
}

static uint64_t map_in(const struct segment *s, uint64_t ticks)
{
    double delta = (double)(int64_t)(ticks - s->ticks) * s->ns_per_tick;
    return (uint64_t)((int64_t)s->ns + (int64_t)delta);
}

void ct_clock_map_init(uint32_t clock_kind, uint64_t start_ticks, uint64_t start_boot_ns)
{
    kind = clock_kind;
    anchor_ticks = start_ticks;
    anchor_ns = start_boot_ns;
    segment_count = 0;
    next_update_baseline_ns = 0;
    if (kind != CT_CLOCK_TSC)
        return;
    /* Until a baseline exists, assume the rate seen over a 10 ms spin. */
    uint64_t t0, n0, t1, n1;
    read_pair(&t0, &n0);
    do
        read_pair(&t1, &n1);
    while (n1 - n0 < 10000000u);
    segments[0] = (struct segment){start_ticks, start_boot_ns,
                                   (double)(n1 - n0) / (double)(t1 - t0)};
    segment_count = 1;
    next_update_baseline_ns = 2 * (n1 - start_boot_ns);
    ct_clock_map_refresh();
}

void ct_clock_map_refresh(void)
{
    if (kind != CT_CLOCK_TSC || segment_count == MAX_SEGMENTS)
        return;
    uint64_t ticks, ns;
    read_pair(&ticks, &ns);
    if (ns - anchor_ns < next_update_baseline_ns || ticks <= anchor_ticks)
        return;
    next_update_baseline_ns = 2 * (ns - anchor_ns);
    struct segment *last = &segments[segment_count - 1];
    struct segment next = {ticks, map_in(last, ticks),
                           (double)(ns - anchor_ns) / (double)(ticks - anchor_ticks)};
    segments[segment_count++] = next;
}

uint64_t ct_clock_map_ns(uint64_t ticks)
{
    if (kind != CT_CLOCK_TSC)
        return ticks;
    int i = segment_count - 1;
    while (i > 0 && ticks < segments[i].ticks)
        i--;
    return map_in(&segments[i], ticks);
}

uint64_t ct_clock_map_now_ns(void)
{
    return kind == CT_CLOCK_TSC ? ct_clock_map_ns(__rdtsc()) : boottime_ns();
}
