/*
 * CUPTI's timestamps on the trace's clock (gpu_clock.c).
 */
#ifndef CT_COLLECTOR_GPU_CLOCK_H
#define CT_COLLECTOR_GPU_CLOCK_H

#include <stdint.h>

#include "cudatrace/record.h"

/* A CT_REC_GPU_CLOCK reading. */
void ct_gpu_clock_sample(const struct ct_record *r);
/* Whether a reading has arrived, without which nothing can be mapped. */
int ct_gpu_clock_known(void);
uint64_t ct_gpu_clock_ns(uint64_t cupti_ns);

struct ct_gpu_clock_quality {
    uint64_t samples, widest_half_bracket_ns, largest_step_ns;
};
struct ct_gpu_clock_quality ct_gpu_clock_quality(void);

#endif
