/*
 * Kernel launches per second, counted in 100 ms buckets.
 */
#ifndef CT_COLLECTOR_LAUNCH_RATE_H
#define CT_COLLECTOR_LAUNCH_RATE_H

#include <stdint.h>

void ct_launch_rate_count(uint64_t ts);
/* Writes the rate for every bucket that ended before `now_ns`. */
void ct_launch_rate_write(uint64_t now_ns);
/* Writes every bucket still open. */
void ct_launch_rate_finish(void);

#endif
