/*
 * The host sampler: a thread of the collector's own that, at the rate the
 * process set (CUDATRACE_SAMPLE_HZ), reads from /proc every thread of the
 * traced process and, at a tenth of that rate, its worker processes, and
 * hands what it read to the main thread. Nothing it does reaches the
 * program's threads: it reads files the kernel keeps about them, and their
 * Python stacks with process_vm_readv.
 */
#ifndef CT_COLLECTOR_HOST_SAMPLER_H
#define CT_COLLECTOR_HOST_SAMPLER_H

#include <stdint.h>

#include "collector/host_sampling/host_sample.h"
#include "cudatrace/shm_layout.h"

enum ct_host_state {
    CT_HOST_OFF,         /* CUDATRACE_SAMPLE_HZ=0 */
    CT_HOST_SAMPLING,    /* it sampled until the end */
    CT_HOST_UNAVAILABLE, /* the kernel would not let it read the process */
};

struct ct_host_status {
    enum ct_host_state state;
    char reason[256];
    uint64_t rounds, thread_samples, worker_samples;
    uint64_t dropped_events, untracked; /* a full queue; threads past the set's capacity */
    uint64_t cpu_ns;                    /* the sampler thread's own CPU time */
};

/* Starts sampling the process of `shm` `hz` times a second (0: not at all). */
void ct_host_sampler_start(struct ct_shm_header *shm, uint32_t hz);
/* Takes the oldest event the sampler made; 0 when there is none. */
int ct_host_sampler_next(struct ct_host_event *out);
/* Stops the sampler (within one pause of its loop) and says how it fared. */
void ct_host_sampler_stop(struct ct_host_status *out);

#endif
