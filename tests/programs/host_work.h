/*
 * Host work of a known length for the test programs: a busy loop on the monotonic clock,
 * standing for the computation or data loading between a training step's CUDA calls (a
 * sleep would let the scheduler stretch it, and the tests compare against its length).
 */
#ifndef CT_HOST_WORK_H
#define CT_HOST_WORK_H

#include <time.h>

static void host_work_ns(unsigned long long ns)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while ((unsigned long long)(now.tv_sec - start.tv_sec) * 1000000000ull +
               (unsigned long long)now.tv_nsec - (unsigned long long)start.tv_nsec <
           ns);
}

#endif
