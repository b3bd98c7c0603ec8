/*
 * The collector's CPUs. It is forked from the program and so starts with the
 * program's CPU mask, which launchers often narrow to one core per rank
 * (taskset, numactl, SLURM's --cpu-bind, torchrun's NUMA binding). Sharing
 * that core, the program pays for every record the collector decodes and
 * compresses, and for the switches between the two: a paced launch loop
 * bound to one CPU ran at about 14x the floor's cost with the collector on
 * its core, against 2x with the collector on the other (docs/performance.md).
 * So, before it starts any thread, the collector moves to the CPUs of the
 * NUMA nodes the program may run on (near the rings' memory, so their cache
 * lines stay off the interconnect) that the program was not bound to; where
 * the program may use every one of them, the collector keeps their company.
 * The kernel intersects the mask with the cgroup's cpuset, so a container's
 * or a job's CPU limit still holds; where nothing else is allowed the mask
 * stays as it was. The program's own mask is never touched.
 */
#include "collector/cpu_placement.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#define NODE_DIR "/sys/devices/system/node"

/* A CPU number at *p, advancing past it; -1 when none is there. */
static long cpu_number(const char **p)
{
    long n = -1;
    while (**p >= '0' && **p <= '9') {
        n = (n < 0 ? 0 : n * 10) + (**p - '0');
        if (n >= CPU_SETSIZE)
            return -1;
        (*p)++;
    }
    return n;
}

int ct_cpulist_add(const char *text, cpu_set_t *set)
{
    const char *p = text;
    while (*p && *p != '\n') {
        long first = cpu_number(&p), last = first;
        if (first < 0)
            return -1;
        if (*p == '-') {
            p++;
            if ((last = cpu_number(&p)) < first)
                return -1;
        }
        for (long cpu = first; cpu <= last; cpu++)
            CPU_SET((int)cpu, set);
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -1;
    }
    return 0;
}

/* The CPUs of one node directory's cpulist; 0 when read. */
static int node_cpus(const char *node, cpu_set_t *cpus)
{
    char path[sizeof NODE_DIR + 300], text[4096];
    snprintf(path, sizeof path, NODE_DIR "/%s/cpulist", node);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int ok = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    CPU_ZERO(cpus);
    return ok ? ct_cpulist_add(text, cpus) : -1;
}

/* The CPUs of the nodes any of `from` belongs to; 0 when sysfs told. */
static int nodes_of(const cpu_set_t *from, cpu_set_t *wanted)
{
    DIR *d = opendir(NODE_DIR);
    if (!d)
        return -1;
    int nodes = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        cpu_set_t cpus, shared;
        if (strncmp(e->d_name, "node", 4) != 0 || e->d_name[4] < '0' || e->d_name[4] > '9' ||
            node_cpus(e->d_name, &cpus) != 0)
            continue;
        nodes++;
        CPU_AND(&shared, &cpus, from);
        if (CPU_COUNT(&shared))
            CPU_OR(wanted, wanted, &cpus);
    }
    closedir(d);
    return nodes ? 0 : -1;
}

void ct_cpu_placement_beside(pid_t program)
{
    cpu_set_t own, theirs, near, beside;
    if (sched_getaffinity(0, sizeof own, &own) != 0)
        return;
    /* Ours is the mask of the program's thread that started us, or one a
     * wrapper (CUDATRACE_COLLECTOR) narrowed; its main thread's says where
     * the program runs. */
    if (sched_getaffinity(program, sizeof theirs, &theirs) != 0)
        theirs = own;
    CPU_ZERO(&near);
    if (nodes_of(&theirs, &near) != 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
            CPU_SET(cpu, &near);
    /* Beside the program where the node has room, else in its company. */
    CPU_XOR(&beside, &near, &theirs);
    CPU_AND(&beside, &beside, &near);
    if (CPU_COUNT(&beside) && sched_setaffinity(0, sizeof beside, &beside) == 0)
        return;
    CPU_OR(&near, &near, &own);
    if (!CPU_EQUAL(&near, &own))
        sched_setaffinity(0, sizeof near, &near);
}
