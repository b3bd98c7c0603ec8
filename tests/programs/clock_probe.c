/*
 * Brackets cudaDeviceSynchronize calls with CLOCK_BOOTTIME readings, the clock
 * Perfetto traces use, so a test can check that each traced slice lies within
 * the readings taken around its call: the tracer's TSC-to-nanosecond mapping
 * measured against the kernel's clock. Sleeps between calls (short, then long)
 * so the mapping is exercised across its first segments. Prints one line per
 * call: "before after" in nanoseconds. Usage: clock_probe [calls=8].
 */
#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

static unsigned long long boottime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    unsigned long long calls = arg_or(argc, argv, 1, 8);
    for (unsigned long long i = 0; i < calls; i++) {
        unsigned long long before = boottime_ns();
        cudaError_t result = cudaDeviceSynchronize();
        unsigned long long after = boottime_ns();
        if (result != cudaSuccess)
            return 1;
        printf("%llu %llu\n", before, after);
        struct timespec pause = {0, i < calls / 2 ? 20000000 : 250000000};
        nanosleep(&pause, NULL);
    }
    return 0;
}
