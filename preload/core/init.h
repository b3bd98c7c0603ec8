/*
 * Process-wide initialisation of the preload.
 */
#ifndef CT_PRELOAD_INIT_H
#define CT_PRELOAD_INIT_H

#include <stdint.h>

/* Runs the initialisation once. Our constructor calls it, but so does
 * anything that may run earlier: a library initialised before us whose
 * constructor already calls CUDA. */
void ct_init_once(void);

/* Reads the start time again: a fork child's trace starts at the fork. */
void ct_init_mark_start(void);

extern int ct_tracing_allowed;
/* Both clocks read together when the process (or the preload) started. */
extern uint64_t ct_start_ticks, ct_start_boot_ns;

#endif
