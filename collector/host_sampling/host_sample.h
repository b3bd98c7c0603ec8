/*
 * What the host sampler's thread hands the trace writer: one event per
 * thread of the traced process and sampling round (its state, what it
 * sleeps in, its CPU and run-queue time since the round before), one per
 * worker process and worker round (its CPU time since the last), each with
 * its Python stack where one was read (python_stacks.h), and one
 * when a thread or a worker is gone. The sampler's rounds make them
 * (rounds.c, on the sampler's thread), the collector's main thread writes
 * them (host_tracks.c).
 */
#ifndef CT_COLLECTOR_HOST_SAMPLE_H
#define CT_COLLECTOR_HOST_SAMPLE_H

#include <stdint.h>

#include "collector/host_sampling/proc_read.h"
#include "collector/host_sampling/python_stacks.h"

enum ct_host_event_kind {
    CT_HOST_THREAD,
    CT_HOST_THREAD_GONE,
    CT_HOST_WORKER,
    CT_HOST_WORKER_GONE,
};

struct ct_host_event {
    enum ct_host_event_kind kind;
    uint64_t ts_ns; /* CLOCK_BOOTTIME, the trace's clock */
    int32_t id;     /* the thread's tid, or the worker's pid */
    char state;     /* a thread's, as stat says it */
    int in_cuda;    /* the thread was inside a traced CUDA call when read */
    char name[CT_HOST_NAME_MAX];
    char wchan[CT_HOST_WCHAN_MAX];
    /* Since the entity's sample before (interval 0 for its first): time on a
     * CPU and on a run queue (a worker's: its main thread's). */
    uint64_t interval_ns, cpu_ns, wait_ns;
    /* Its Python stack when read (depth 0: none); a worker's main thread's. */
    struct ct_py_stack py;
};

#endif
