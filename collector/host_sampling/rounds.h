/*
 * One sampling round of the traced process's threads, and one of its
 * workers: each reads what /proc says now, turns it into what happened
 * since the round before, and emits an event per thread or worker, and one
 * for each that has gone. Workers are the process's children, found by
 * their parent pid in a scan of /proc each worker round (the kernel's
 * task/TID/children file needs CONFIG_PROC_CHILDREN, which many kernels
 * lack) that reads only the processes new since the scan before: a child
 * is followed from the first worker round after it started, one that
 * exits or is no longer the process's child is gone at the next.
 * Grandchildren are not followed. Each thread's sample, and each worker's
 * (its main thread's), carries its Python stack where one could be read
 * (python_stacks.h), for a bounded number of threads a round.
 */
#ifndef CT_COLLECTOR_HOST_ROUNDS_H
#define CT_COLLECTOR_HOST_ROUNDS_H

#include <dirent.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector/host_sampling/host_sample.h"
#include "collector/host_sampling/tracked.h"
#include "cudatrace/shm_layout.h"

#define CT_HOST_STACKS_PER_ROUND 32

struct ct_host_rounds {
    pid_t pid, self;
    struct ct_shm_header *shm; /* whose rings say which threads are inside a call */
    int32_t *in_call;          /* those threads' tids this round, sorted */
    uint32_t in_call_count;
    DIR *tasks, *proc; /* /proc/PID/task, /proc */
    uint32_t round;    /* of threads; worker rounds count their own */
    uint32_t worker_round;
    /* Python stacks are read for at most CT_HOST_STACKS_PER_ROUND threads a
     * round, from `stacks_from` in the listing on (threads listed in the
     * round before: `listed`), so a thread storm costs a bounded share of a
     * core and every thread still gets its turn. */
    uint32_t listed, stacks_from;
    uint32_t stacks_read; /* this round's, never past CT_HOST_STACKS_PER_ROUND */
    struct ct_tracked_set threads, workers;
    struct ct_u64_map others; /* pid + 1: processes seen that are no children */
    uint64_t thread_samples, worker_samples, untracked;
    void (*emit)(const struct ct_host_event *e);
};

/* Opens the process's directories; 0, or -1 with why in `reason`. */
int ct_host_rounds_open(struct ct_host_rounds *r, struct ct_shm_header *shm, char *reason,
                        size_t size);
void ct_host_thread_round(struct ct_host_rounds *r, uint64_t ts_ns);
void ct_host_worker_round(struct ct_host_rounds *r, uint64_t ts_ns);
void ct_host_rounds_close(struct ct_host_rounds *r);

#endif
