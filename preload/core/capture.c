/*
 * Opens and closes the capture window from inside the process: for
 * CUDATRACE_CAPTURE=profiler at cudaProfilerStart/Stop, for nvtx:NAME while
 * any thread has a range of that name open. Each change is also written as
 * a CT_REC_CAPTURE on the calling thread's ring, in order with its calls,
 * so the trace marks the window where the records inside it begin.
 */
#include "preload/core/capture.h"

#include <pthread.h>
#include <string.h>

#include "preload/core/clock.h"
#include "preload/core/config.h"
#include "preload/core/ring.h"

static _Atomic uint32_t always_open = 1;
_Atomic uint32_t *ct_capture_flag = &always_open;

/* Capture ranges open now, over all threads. Under a lock, so that one
 * thread's close cannot land after another's reopening: taken only by the
 * push and pop of the capture range, a few times a step. */
static uint32_t open_ranges;
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;

void ct_capture_write_header(struct ct_shm_header *shm)
{
    shm->capture_kind = (uint32_t)ct_config.capture;
    shm->capture_delay_ns = ct_config.capture_delay_ns;
    shm->capture_duration_ns = ct_config.capture_duration_ns;
    if (ct_config.capture_text)
        strncpy(shm->capture_setting, ct_config.capture_text, sizeof shm->capture_setting - 1);
    atomic_store(&shm->capture_open, ct_config.capture == CT_CAPTURE_ALL);
}

void ct_capture_session_start(struct ct_shm_header *shm)
{
    ct_capture_flag = &shm->capture_open;
}

void ct_capture_forget_in_child(void)
{
    ct_capture_flag = &always_open;
    open_ranges = 0;
    pthread_mutex_init(&ranges_lock, NULL);
}

/* The ring first: a window opened before any CUDA call starts the session
 * here, and it is that session's flag that must be flipped. */
static void flip(int open)
{
    struct ct_ring *ring = ct_ring_current();
    atomic_store_explicit(ct_capture_flag, (uint32_t)open, memory_order_relaxed);
    if (!ring)
        return;
    uint64_t now = ct_clock_now();
    struct ct_record r = {.type = CT_REC_CAPTURE,
                          .func = (uint16_t)open,
                          .result = ct_config.capture,
                          .begin = now,
                          .end = now};
    ct_emit_record(ring, &r, 1);
}

uint64_t ct_capture_profiler(int open)
{
    if (ct_config.capture == CT_CAPTURE_PROFILER)
        flip(open);
    return 0;
}

int ct_capture_nvtx_push(const char *message)
{
    if (ct_config.capture != CT_CAPTURE_NVTX || strcmp(message, ct_config.capture_nvtx) != 0)
        return 0;
    pthread_mutex_lock(&ranges_lock);
    if (open_ranges++ == 0)
        flip(1);
    pthread_mutex_unlock(&ranges_lock);
    return 1;
}

void ct_capture_nvtx_pop(void)
{
    pthread_mutex_lock(&ranges_lock);
    if (--open_ranges == 0)
        flip(0);
    pthread_mutex_unlock(&ranges_lock);
}
