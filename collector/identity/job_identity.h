/*
 * Who the traced process is within its job, written once at the start of
 * the trace: the host, the rank, local rank and world size its launcher set,
 * the job's id, CUDA_VISIBLE_DEVICES, and the environment that changes
 * CUDA's behaviour (environment.h), so that traces gathered from many nodes
 * can be told apart, ordered and compared.
 */
#ifndef CT_COLLECTOR_JOB_IDENTITY_H
#define CT_COLLECTOR_JOB_IDENTITY_H

/* Writes cudatrace.identity and cudatrace.environment on the process track. */
void ct_job_identity_write(void);

#endif
