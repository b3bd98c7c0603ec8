/*
 * Brings the trace up to the moment before it is read live (catch_up.c).
 */
#ifndef CT_COLLECTOR_CATCH_UP_H
#define CT_COLLECTOR_CATCH_UP_H

#include "cudatrace/shm_layout.h"

/* Has the preload hand over what CUPTI finished recording (with `forced`,
 * its incomplete records too), waits a bounded time for it, drains the
 * rings and applies the memory events held back for ordering up to the
 * drain's start, so that what follows reads everything up to now. */
void ct_catch_up(struct ct_shm_header *shm, int forced);

#endif
