/*
 * Asks the traced process for the GPU work CUPTI holds (gpu_flush.c).
 */
#ifndef CT_COLLECTOR_GPU_FLUSH_H
#define CT_COLLECTOR_GPU_FLUSH_H

#include "cudatrace/shm_layout.h"

/* Has the preload hand over what CUPTI finished recording (with `forced`,
 * its incomplete records too), waits a bounded time for it and drains the
 * rings, so that what follows reads the GPU's work up to now. */
void ct_gpu_flush_live(struct ct_shm_header *shm, int forced);

#endif
