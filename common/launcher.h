/*
 * Who a process is within a job, as its launcher says: the rank, local rank
 * and world size torchrun, Slurm, Open MPI and PMI set in the environment,
 * and the job's id. The preload reads the rank for CUDATRACE_OUTPUT's %r, the
 * collector all of it for the trace; both look variables up through the
 * function they pass, so neither side's idea of "the environment" leaks
 * into the other.
 */
#ifndef CT_LAUNCHER_H
#define CT_LAUNCHER_H

/* Looks a variable up; NULL when it is unset. */
typedef const char *(*ct_env_lookup)(const char *name);

enum ct_launcher_field {
    CT_LAUNCHER_RANK,
    CT_LAUNCHER_LOCAL_RANK,
    CT_LAUNCHER_WORLD_SIZE,
    CT_LAUNCHER_FIELDS
};

/* The value of `field`, a decimal number; -1 when no launcher set it. */
long ct_launcher_number(ct_env_lookup lookup, enum ct_launcher_field field);
/* The job's id ("" when no launcher set one): Slurm's, PBS's, LSF's or
 * Flux's job id, else torchrun's run id, else torchrun's rendezvous address
 * (MASTER_ADDR:MASTER_PORT, the same for every rank of one job). Written
 * into buf. */
const char *ct_launcher_job(ct_env_lookup lookup, char *buf, unsigned size);
/* The launcher that set the rank ("torchrun", "slurm", "openmpi", "pmi"),
 * or "" when none did. */
const char *ct_launcher_name(ct_env_lookup lookup);

/* The host's name: CUDATRACE_HOST when set (containers whose host name says
 * nothing, and the tests' stand-in for several nodes), else the kernel's. */
const char *ct_host_name(ct_env_lookup lookup, char *buf, unsigned size);

#endif
