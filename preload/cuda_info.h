/*
 * The once-per-process facts about the CUDA stack: versions and devices.
 */
#ifndef CT_PRELOAD_CUDA_INFO_H
#define CT_PRELOAD_CUDA_INFO_H

void ct_cuda_info_request(void);

#endif
