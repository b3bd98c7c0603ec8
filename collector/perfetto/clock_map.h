/*
 * Maps record timestamps (TSC ticks or BOOTTIME ns) to BOOTTIME nanoseconds,
 * Perfetto's default clock, so the trace needs no clock snapshot.
 */
#ifndef CT_COLLECTOR_CLOCK_MAP_H
#define CT_COLLECTOR_CLOCK_MAP_H

#include <stdint.h>

void ct_clock_map_init(uint32_t clock_kind, uint64_t start_ticks, uint64_t start_boot_ns);
/* Takes a fresh (ticks, ns) reading; call once per drain cycle. */
void ct_clock_map_refresh(void);
uint64_t ct_clock_map_ns(uint64_t ticks);
/* A span of ticks in nanoseconds, at the newest segment's rate. */
uint64_t ct_clock_map_duration_ns(uint64_t ticks);
/* The inverse: a span of nanoseconds in ticks, at the same rate. */
uint64_t ct_clock_map_span_ticks(uint64_t ns);
uint64_t ct_clock_map_now_ns(void);

#endif
