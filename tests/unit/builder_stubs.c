/*
 * The trace builder's entry points that the ring tests (ring_stress.c,
 * drain_order_check.c) link the collector's drain against but do not look
 * at: a thread's end, its totals, the call it was inside and its state at a
 * snapshot. Each test defines the two it checks, ct_builder_thread and
 * ct_builder_record, itself.
 */
#include "collector/trace_builder.h"

void ct_builder_thread_end(uint32_t index)
{
    (void)index;
}

void ct_builder_thread_calls(uint32_t index, const struct ct_call_stats *stats)
{
    (void)index, (void)stats;
}

void ct_builder_inflight(struct ct_call_now call, uint64_t end_ns)
{
    (void)call, (void)end_ns;
}

void ct_builder_thread_now(uint32_t index, const char *name, const struct ct_call_stats *stats,
                           struct ct_call_now call, uint64_t now_ns)
{
    (void)index, (void)name, (void)stats, (void)call, (void)now_ns;
}
