/*
 * Maps TSC ticks to CLOCK_BOOTTIME nanoseconds. The rate is estimated over
 * the whole run, from the (ticks, ns) pair the preload read at process start
 * to a fresh pair read now, so it sharpens as the run goes on. Applying a new
 * estimate to all ticks would move timestamps already written and could
 * reorder slices, so the mapping is a chain of linear segments, each starting
 * where the previous one ends (continuous, monotonic). A segment's slope is
 * the current rate plus a correction that closes the gap between the mapping
 * and the fresh reading over the next interval, like a clock being slewed: the
 * error stays within one interval's drift plus the reading jitter instead of
 * adding up from segment to segment. An error in the start anchor itself is
 * not removed that way: the whole-run rate carries it too, so it is first
 * overcorrected, then fades as one over the time elapsed (20 us off: -22 us
 * over the next interval, -5 us at 0.4 s, -2 us at 1.2 s, as
 * tests/unit/clock_map_check.c measured).
 */
#include "collector/perfetto/clock_map.h"

#include <time.h>
#include <x86intrin.h>

#include "cudatrace/shm_layout.h"

#define SEGMENTS 256 /* at one per interval: the last 25 s keep their own segment */
#define INTERVAL_NS 100000000ull

struct segment {
    uint64_t ticks; /* where the segment starts */
    uint64_t ns;
    double ns_per_tick;
};

static uint32_t kind;
static uint64_t anchor_ticks, anchor_ns; /* the pair taken at process start */
static struct segment segments[SEGMENTS];
static uint64_t segment_total; /* segments made; the newest is (segment_total - 1) % SEGMENTS */
static uint64_t last_segment_ns;

static uint64_t boottime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The tightest of five (ticks, ns, ticks) readings: the least chance that
 * the thread was interrupted between the two clocks. */
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

static const struct segment *segment_for(uint64_t ticks)
{
    uint64_t kept = segment_total < SEGMENTS ? segment_total : SEGMENTS;
    uint64_t i = segment_total - 1;
    for (uint64_t n = 1; n < kept && ticks < segments[i % SEGMENTS].ticks; n++)
        i--;
    return &segments[i % SEGMENTS];
}

static void push_segment(uint64_t ticks, uint64_t ns, double ns_per_tick)
{
    segments[segment_total++ % SEGMENTS] = (struct segment){ticks, ns, ns_per_tick};
}

void ct_clock_map_init(uint32_t clock_kind, uint64_t start_ticks, uint64_t start_boot_ns)
{
    kind = clock_kind;
    anchor_ticks = start_ticks;
    anchor_ns = start_boot_ns;
    segment_total = 0;
    if (kind != CT_CLOCK_TSC)
        return;
    /* Until the run itself is a baseline, the rate seen over a 10 ms spin. */
    uint64_t t0, n0, t1, n1;
    read_pair(&t0, &n0);
    do
        read_pair(&t1, &n1);
    while (n1 - n0 < 10000000u);
    push_segment(start_ticks, start_boot_ns, (double)(n1 - n0) / (double)(t1 - t0));
    last_segment_ns = start_boot_ns;
    ct_clock_map_refresh();
}

void ct_clock_map_refresh(void)
{
    if (kind != CT_CLOCK_TSC)
        return;
    uint64_t ticks, ns;
    read_pair(&ticks, &ns);
    if (ns - last_segment_ns < INTERVAL_NS || ticks <= anchor_ticks || ns <= anchor_ns)
        return;
    last_segment_ns = ns;
    double rate = (double)(ns - anchor_ns) / (double)(ticks - anchor_ticks);
    uint64_t mapped = map_in(segment_for(ticks), ticks);
    double gap = (double)(int64_t)(ns - mapped);
    double correction = gap / ((double)INTERVAL_NS / rate);
    /* Never run backwards or race: slew by at most half the rate. */
    if (correction > rate / 2)
        correction = rate / 2;
    if (correction < -rate / 2)
        correction = -rate / 2;
    push_segment(ticks, mapped, rate + correction);
}

uint64_t ct_clock_map_ns(uint64_t ticks)
{
    if (kind != CT_CLOCK_TSC)
        return ticks;
    return map_in(segment_for(ticks), ticks);
}

uint64_t ct_clock_map_duration_ns(uint64_t ticks)
{
    if (kind != CT_CLOCK_TSC)
        return ticks;
    const struct segment *newest = &segments[(segment_total - 1) % SEGMENTS];
    return (uint64_t)((double)ticks * newest->ns_per_tick + 0.5);
}

uint64_t ct_clock_map_span_ticks(uint64_t ns)
{
    if (kind != CT_CLOCK_TSC)
        return ns;
    const struct segment *newest = &segments[(segment_total - 1) % SEGMENTS];
    return (uint64_t)((double)ns / newest->ns_per_tick);
}

uint64_t ct_clock_map_now_ns(void)
{
    return kind == CT_CLOCK_TSC ? ct_clock_map_ns(__rdtsc()) : boottime_ns();
}
