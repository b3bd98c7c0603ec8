/*
 * What the launching thread was doing while it was not feeding the GPU
 * (host_idle.c): with GPU timings, during the time no GPU work ran; without
 * them, during its time outside CUDA calls. Its sampled states then, its
 * Python lines, and the workers' CPU.
 */
#ifndef CT_HOST_IDLE_MODEL_H
#define CT_HOST_IDLE_MODEL_H

#include <stdint.h>

#include "viewer-export/model/report.h"

enum ct_host_idle_basis { CT_HOST_IDLE_GPU, CT_HOST_IDLE_OUTSIDE_CUDA };

struct ct_host_idle {
    enum ct_host_idle_basis basis;
    const struct ct_host_thread *thread;
    uint64_t ns;       /* the basis's time over the CUDA part of the run */
    double sampled_ns; /* of it, the part the thread's state spans cover */
    /* Shares of sampled_ns: inside CUDA calls, outside them on a CPU
     * (running or runnable) and asleep. */
    double in_cuda, on_cpu, asleep;
    double workers_busy;          /* their mean share on a CPU or waiting for one */
    int workers;                  /* sampled; 0: none, and workers_busy means nothing */
    struct ct_host_python python; /* its samples then, as sites of their own */
};

/* The launching thread's idle time in *out (ct_host_idle_free frees it);
 * 0 when there is no launching thread. */
int ct_host_idle(const struct ct_process_report *p, struct ct_host_idle *out);
const char *ct_host_idle_basis_name(enum ct_host_idle_basis basis);
void ct_host_idle_free(struct ct_host_idle *idle);

#endif
