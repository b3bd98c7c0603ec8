/*
 * The one clock every host-side record uses. On CPUs with an invariant TSC a
 * timestamp is a bare rdtsc (about 10 ns here, against 30 ns for the vDSO's
 * clock_gettime), and the collector maps ticks to CLOCK_BOOTTIME nanoseconds;
 * elsewhere it is CLOCK_BOOTTIME itself. The choice is made once per process.
 */
#ifndef CT_PRELOAD_CLOCK_H
#define CT_PRELOAD_CLOCK_H

#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

#include "cudatrace/shm_layout.h"

extern uint32_t ct_clock_kind; /* 0 until the preload is initialised */

uint64_t ct_clock_boottime_ns(void);
/* The first timestamp of a process may come before our constructor ran (a
 * library initialised earlier calls CUDA): it initialises, then reads. */
uint64_t ct_clock_now_slow(void);
void ct_clock_choose(void);

static inline uint64_t ct_clock_now(void)
{
    if (__builtin_expect(ct_clock_kind == CT_CLOCK_TSC, 1))
        return __rdtsc();
    return ct_clock_now_slow();
}

#endif
