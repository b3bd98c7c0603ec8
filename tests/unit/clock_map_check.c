/*
 * Checks of the clock map (collector/perfetto/clock_map.c) on its own, with
 * a (ticks, ns) start anchor taken here as the preload takes its own.
 * CT_CLOCK_BOOTTIME is the identity. CT_CLOCK_TSC, checked only where the
 * TSC is invariant (where the preload records in ticks at all), from an
 * anchor made ANCHOR_ERROR_NS late, as a reading across a page fault of the
 * preload's first clock_gettime may be: the anchor maps to itself; each
 * refresh, 120 ms apart so that each makes a segment, leaves a time already
 * mapped where it was, and the mapping steps neither back nor by more than
 * its steepest slope across the new segment's start; the whole run maps
 * monotonically; ct_clock_map_now_ns stays within NOW_TOLERANCE_NS of
 * CLOCK_BOOTTIME, and the slewing leaves it nearer than the anchor was; a
 * duration maps at the newest segment's rate, which is within
 * RATE_TOLERANCE of the rate seen here.
 */
#include <cpuid.h>
#include <time.h>
#include <x86intrin.h>

#include "collector/perfetto/clock_map.h"
#include "cudatrace/shm_layout.h"
#include "tests/unit/check.h"

#define REFRESHES 8
#define ANCHOR_ERROR_NS 20000     /* how late the anchor is made, as said above */
#define REFRESH_GAP_NS 120000000L /* past clock_map.c's 100 ms interval */
/* The error the map promises is an interval's drift plus reading jitter:
 * 100 ms at NTP's largest slew (500 ppm) is 50 us, and the anchor's error
 * and that of the 10 ms rate the map starts from come on top. */
#define NOW_TOLERANCE_NS 100000
/* A segment's slope is the run's rate plus the correction that closes the
 * gap, at most that 100 us over the 100 ms interval: 1000 ppm. */
#define RATE_TOLERANCE 0.001
#define SCAN_STEPS (1u << 20) /* the most ticks one scan maps; past that it strides */

static uint64_t boottime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPUID 0x80000007 EDX bit 8, the test the preload makes before it
 * records in ticks. */
static int tsc_is_invariant(void)
{
    unsigned int eax, ebx, ecx, edx;
    return __get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) && eax >= 0x80000007u &&
           __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) && (edx >> 8 & 1);
}

static void check_boottime(void)
{
    ct_clock_map_init(CT_CLOCK_BOOTTIME, 0, 0);
    ct_clock_map_refresh();
    const uint64_t values[] = {0, 1, 123456789, UINT64_MAX};
    for (unsigned i = 0; i < sizeof values / sizeof *values; i++) {
        ct_check_u64(ct_clock_map_ns(values[i]), values[i], "boottime: %u-th time maps to itself",
                     i);
        ct_check_u64(ct_clock_map_duration_ns(values[i]), values[i],
                     "boottime: %u-th duration maps to itself", i);
    }
    uint64_t before = boottime_ns(), now = ct_clock_map_now_ns(), after = boottime_ns();
    ct_check(before <= now && now <= after, "boottime: now_ns is CLOCK_BOOTTIME");
}

/* Whether the mapping over [from, to] never steps back, nor by more than
 * the steepest slope the map allows, 1.5 times the rate, over a stride. */
static int continuous(uint64_t from, uint64_t to, double ns_per_tick)
{
    uint64_t stride = (to - from) / SCAN_STEPS + 1;
    uint64_t most = (uint64_t)(1.5 * ns_per_tick * (double)stride) + 1;
    uint64_t previous = ct_clock_map_ns(from);
    for (uint64_t t = from + stride; t <= to; t += stride) {
        uint64_t ns = ct_clock_map_ns(t);
        if (ns < previous || ns - previous > most)
            return 0;
        previous = ns;
    }
    return 1;
}

static void check_tsc(void)
{
    const struct timespec gap = {0, REFRESH_GAP_NS};
    uint64_t start_ticks = __rdtsc(), start_ns = boottime_ns() + ANCHOR_ERROR_NS;
    ct_clock_map_init(CT_CLOCK_TSC, start_ticks, start_ns);
    ct_check_u64(ct_clock_map_ns(start_ticks), start_ns, "tsc: the start anchor maps to itself");
    ct_check_u64(ct_clock_map_duration_ns(0), 0, "tsc: no ticks last no time");
    uint64_t written_ticks[REFRESHES], written_ns[REFRESHES];
    int64_t off = 0; /* now_ns's distance from CLOCK_BOOTTIME */
    for (int i = 0; i < REFRESHES; i++) {
        nanosleep(&gap, NULL);
        uint64_t before = __rdtsc(), before_ns = ct_clock_map_ns(before);
        ct_clock_map_refresh();
        uint64_t after = __rdtsc();
        double rate = (double)(boottime_ns() - start_ns) / (double)(after - start_ticks);
        ct_check_u64(ct_clock_map_ns(before), before_ns, "tsc: refresh %d moves no time mapped", i);
        ct_check(continuous(before, after, rate), "tsc: refresh %d: continuous and monotonic", i);
        uint64_t low = boottime_ns(), now = ct_clock_map_now_ns(), high = boottime_ns();
        off = now < low ? (int64_t)(low - now) : now > high ? (int64_t)(now - high) : 0;
        ct_check(off <= NOW_TOLERANCE_NS,
                 "tsc: refresh %d: now_ns within %d ns of CLOCK_BOOTTIME (off by %lld)", i,
                 NOW_TOLERANCE_NS, (long long)off);
        written_ticks[i] = after;
        written_ns[i] = ct_clock_map_ns(after);
    }
    ct_check(off < ANCHOR_ERROR_NS,
             "tsc: slewing leaves now_ns nearer than the anchor was (off by %lld ns)",
             (long long)off);
    uint64_t end_ticks = __rdtsc(), end_ns = boottime_ns() + ANCHOR_ERROR_NS;
    uint64_t moved = 0;
    for (int i = 0; i < REFRESHES; i++)
        moved += ct_clock_map_ns(written_ticks[i]) != written_ns[i];
    ct_check_u64(moved, 0, "tsc: times mapped after each refresh stay put (moved ones)");
    ct_check(continuous(start_ticks, end_ticks,
                        (double)(end_ns - start_ns) / (double)(end_ticks - start_ticks)),
             "tsc: the whole run maps monotonically and continuously");

    /* Past the newest segment's start both ways of timing a span agree,
     * but for the rounding of each end. */
    uint64_t span = end_ticks - start_ticks;
    int64_t apart = (int64_t)(ct_clock_map_ns(end_ticks + span) - ct_clock_map_ns(end_ticks)) -
                    (int64_t)ct_clock_map_duration_ns(span);
    ct_check(apart >= -1 && apart <= 1,
             "tsc: a duration is the newest segment's mapping of it (%lld ns apart)",
             (long long)apart);
    double seen = (double)(end_ns - start_ns);
    double mapped = (double)ct_clock_map_duration_ns(span);
    ct_check(mapped > seen * (1 - RATE_TOLERANCE) && mapped < seen * (1 + RATE_TOLERANCE),
             "tsc: the run's %llu ticks last its %.0f ns within %g (mapped %.0f)",
             (unsigned long long)span, seen, RATE_TOLERANCE, mapped);
}

int main(void)
{
    check_boottime();
    if (tsc_is_invariant())
        check_tsc();
    return ct_check_finish();
}
