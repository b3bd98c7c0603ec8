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

#endif
