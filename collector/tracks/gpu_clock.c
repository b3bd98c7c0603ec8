/*
 * Puts CUPTI's timestamps on the trace's clock. The preload reads CUPTI's
 * clock between two readings of its own, at CUPTI's start, before every
 * activity buffer it hands over (every 100 ms while the GPU works) and at
 * exit; each reading gives an offset, CUPTI's time minus ours at the
 * bracket's middle, and GPU times are mapped with the latest offset, which
 * the buffer's own reading always precedes on its ring. Two numbers say how
 * good that is: the widest half-bracket (the reading's own uncertainty) and
 * the largest change of offset from one reading to the next (how far the two
 * clocks drift apart between readings, an upper bound on the error of a
 * time mapped with the older one). Both go into the trace at the end.
 */
#include "collector/tracks/gpu_clock.h"

#include "collector/perfetto/clock_map.h"

static struct {
    int known;
    int64_t offset;
    uint64_t samples, widest_half_bracket_ns, largest_step_ns;
} clk;

void ct_gpu_clock_sample(const struct ct_record *r)
{
    uint64_t before = ct_clock_map_ns(r->begin), after = ct_clock_map_ns(r->end);
    if (after < before)
        return;
    uint64_t half = (after - before) / 2;
    int64_t offset = (int64_t)(r->arg[0] - (before + half));
    if (clk.known) {
        uint64_t step = (uint64_t)(offset > clk.offset ? offset - clk.offset : clk.offset - offset);
        if (step > clk.largest_step_ns)
            clk.largest_step_ns = step;
    }
    if (half > clk.widest_half_bracket_ns)
        clk.widest_half_bracket_ns = half;
    clk.offset = offset;
    clk.known = 1;
    clk.samples++;
}

int ct_gpu_clock_known(void)
{
    return clk.known;
}

uint64_t ct_gpu_clock_ns(uint64_t cupti_ns)
{
    return (uint64_t)((int64_t)cupti_ns - clk.offset);
}

struct ct_gpu_clock_quality ct_gpu_clock_quality(void)
{
    return (struct ct_gpu_clock_quality){clk.samples, clk.widest_half_bracket_ns,
                                         clk.largest_step_ns};
}
