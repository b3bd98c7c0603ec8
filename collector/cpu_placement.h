/*
 * Where the collector runs: on the CPUs near the program, not on the one
 * core a launcher may have bound the program to (cpu_placement.c).
 */
#ifndef CT_COLLECTOR_CPU_PLACEMENT_H
#define CT_COLLECTOR_CPU_PLACEMENT_H

#include <sched.h>
#include <sys/types.h>

/* Adds the CPUs a sysfs list names ("0-3,8,10-11\n") to `set`; 0, or -1 for
 * text that is not such a list (then `set` may hold part of it). */
int ct_cpulist_add(const char *text, cpu_set_t *set);

/* Moves the calling thread to the CPUs of the NUMA nodes `program`'s mask
 * touches (every CPU where sysfs has no nodes) outside that mask, or, where
 * the kernel allows none of those, to all of them and its own. Call it
 * before any other thread starts, so that they inherit it. Best effort: a
 * refusal leaves the mask as it was. */
void ct_cpu_placement_beside(pid_t program);

#endif
