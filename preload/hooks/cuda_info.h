/*
 * The once-per-process facts about the CUDA stack: versions and devices.
 */
#ifndef CT_PRELOAD_CUDA_INFO_H
#define CT_PRELOAD_CUDA_INFO_H

struct ct_ring;

/* Records the versions and devices into `ring`; called once, by the thread
 * whose call started the session. Returns the device count the runtime
 * reported, or -1 when it reported none (no usable driver). */
int ct_cuda_info_record(struct ct_ring *ring);

/* Records into `ring` the versions the loaded runtimes, cuBLAS and NCCL
 * report through getters that load nothing; safe before CUDA is
 * initialised, and again later for the libraries loaded since. */
void ct_cuda_library_versions_record(struct ct_ring *ring);

#endif
