/*
 * Capture windows (CUDATRACE_CAPTURE): whether the hooks record detail now.
 * Outside a window a hook still counts its call in the thread's totals and
 * writes no record, so the report's counts stay the whole run's while the
 * trace holds only the windows. The flag is one word in the shared header,
 * flipped here for the profiler API and NVTX ranges and by the collector for
 * the time window and `cudatrace ctl`; before a session it points at a word
 * that is always open, so the hot path never tests for a session.
 */
#ifndef CT_PRELOAD_CAPTURE_H
#define CT_PRELOAD_CAPTURE_H

#include <stdatomic.h>
#include <stdint.h>

#include "cudatrace/shm_layout.h"

extern _Atomic uint32_t *ct_capture_flag;

static inline int ct_capture_recording(void)
{
    return (int)atomic_load_explicit(ct_capture_flag, memory_order_relaxed);
}

/* Writes the setting into a new session's header, before the collector
 * starts; then, once the session has started, makes its flag the hooks'. */
void ct_capture_write_header(struct ct_shm_header *shm);
void ct_capture_session_start(struct ct_shm_header *shm);
void ct_capture_forget_in_child(void);

/* cudaProfilerStart (open) or cudaProfilerStop returned; the value is 0,
 * for the hook's record. */
uint64_t ct_capture_profiler(int open);

/* An NVTX range with `message` is pushed; 1 when it is the capture range,
 * whose pop must then call ct_capture_nvtx_pop. */
int ct_capture_nvtx_push(const char *message);
void ct_capture_nvtx_pop(void);

#endif
