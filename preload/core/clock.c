/*
 * Picks the record clock. The TSC is only used when CPUID says it is
 * invariant (constant rate, runs in deep C-states), which is what Linux
 * itself checks before trusting it; otherwise every record pays for
 * clock_gettime but stays correct. CUDATRACE_CLOCK=boottime forces the
 * portable clock, e.g. to compare the two.
 */
#include "preload/core/clock.h"

#include <cpuid.h>

#include "preload/core/config.h"
#include "preload/core/init.h"

uint32_t ct_clock_kind;

uint64_t ct_clock_boottime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t ct_clock_now_slow(void)
{
    if (ct_clock_kind == 0)
        ct_init_once();
    return ct_clock_kind == CT_CLOCK_TSC ? __rdtsc() : ct_clock_boottime_ns();
}

static int tsc_is_invariant(void)
{
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
    return (edx >> 8) & 1;
}

void ct_clock_choose(void)
{
    if (ct_config.force_boottime_clock || !tsc_is_invariant())
        ct_clock_kind = CT_CLOCK_BOOTTIME;
    else
        ct_clock_kind = CT_CLOCK_TSC;
}
