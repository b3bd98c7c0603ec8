/*
 * The launchers' variables, in the order they are believed: torchrun's
 * first, since under `srun torchrun` Slurm's name the node's task and
 * torchrun's the process; then Slurm, Open MPI, and PMI (MPICH, Intel MPI,
 * PMIx). A value that is not a decimal number is not a rank.
 */
#include "common/launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct source {
    const char *variable, *launcher;
};

#define SOURCES 5
static const struct source sources[CT_LAUNCHER_FIELDS][SOURCES] = {
    [CT_LAUNCHER_RANK] = {{"RANK", "torchrun"},
                          {"SLURM_PROCID", "slurm"},
                          {"OMPI_COMM_WORLD_RANK", "openmpi"},
                          {"PMI_RANK", "pmi"},
                          {"PMIX_RANK", "pmi"}},
    [CT_LAUNCHER_LOCAL_RANK] = {{"LOCAL_RANK", "torchrun"},
                                {"SLURM_LOCALID", "slurm"},
                                {"OMPI_COMM_WORLD_LOCAL_RANK", "openmpi"},
                                {"MPI_LOCALRANKID", "pmi"},
                                {"PALS_LOCAL_RANKID", "pmi"}},
    [CT_LAUNCHER_WORLD_SIZE] = {{"WORLD_SIZE", "torchrun"},
                                {"SLURM_NTASKS", "slurm"},
                                {"OMPI_COMM_WORLD_SIZE", "openmpi"},
                                {"PMI_SIZE", "pmi"},
                                {NULL, NULL}},
};

static long decimal(const char *text)
{
    if (!text || *text < '0' || *text > '9')
        return -1;
    char *end;
    long value = strtol(text, &end, 10);
    return *end == '\0' ? value : -1;
}

static const struct source *first_set(ct_env_lookup lookup, enum ct_launcher_field field,
                                      long *value)
{
    for (int i = 0; i < SOURCES && sources[field][i].variable; i++) {
        *value = decimal(lookup(sources[field][i].variable));
        if (*value >= 0)
            return &sources[field][i];
    }
    *value = -1;
    return NULL;
}

long ct_launcher_number(ct_env_lookup lookup, enum ct_launcher_field field)
{
    long value;
    first_set(lookup, field, &value);
    return value;
}

const char *ct_launcher_name(ct_env_lookup lookup)
{
    long rank;
    const struct source *s = first_set(lookup, CT_LAUNCHER_RANK, &rank);
    return s ? s->launcher : "";
}

const char *ct_launcher_job(ct_env_lookup lookup, char *buf, unsigned size)
{
    static const char *const ids[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID",
                                      "TORCHELASTIC_RUN_ID"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const char *id = lookup(ids[i]);
        /* torchrun's run id is "none" unless --rdzv-id gave one */
        if (id && *id && strcmp(id, "none") != 0) {
            snprintf(buf, size, "%s", id);
            return buf;
        }
    }
    const char *addr = lookup("MASTER_ADDR"), *port = lookup("MASTER_PORT");
    if (addr && *addr && port && *port)
        snprintf(buf, size, "%s:%s", addr, port);
    else if (size)
        *buf = '\0';
    return buf;
}

const char *ct_host_name(ct_env_lookup lookup, char *buf, unsigned size)
{
    const char *chosen = lookup("CUDATRACE_HOST");
    if (chosen && *chosen)
        snprintf(buf, size, "%s", chosen);
    else if (gethostname(buf, size) != 0 && size)
        *buf = '\0';
    if (size)
        buf[size - 1] = '\0';
    return buf;
}
