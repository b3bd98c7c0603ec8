/*
 * Kernel launches at a steady rate, for the bench's measure of how long
 * the GPU's work takes to reach the trace: `rate` launches a second for
 * `ms` milliseconds, each at its own deadline (slept to when the next is a
 * millisecond or more away, spun to otherwise), then one
 * cudaDeviceSynchronize. Prints the launches made.
 * Usage: paced_launches [rate=10] [ms=2000]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void paced_kernel(void) {}

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void wait_until(unsigned long long deadline)
{
    unsigned long long now = now_ns();
    if (deadline > now + 1000000ull) {
        struct timespec at = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    }
    while (now_ns() < deadline)
        ;
}

int main(int argc, char **argv)
{
    unsigned long long rate = arg_or(argc, argv, 1, 10), ms = arg_or(argc, argv, 2, 2000);
    if (rate == 0)
        return 2;
    unsigned long long launches = rate * ms / 1000, gap = 1000000000ull / rate, start = now_ns();
    for (unsigned long long i = 0; i < launches; i++) {
        wait_until(start + i * gap);
        if (cudaLaunchKernel((const void *)paced_kernel, (dim3){1, 1, 1}, (dim3){32, 1, 1}, NULL, 0,
                             NULL) != cudaSuccess)
            return 1;
    }
    cudaDeviceSynchronize();
    printf("paced_launches: %llu launches\n", launches);
    return 0;
}
