/*
 * Before the collector reads the trace as it stands (a snapshot, `ctl
 * status`), it asks the traced process for the GPU work CUPTI holds:
 * CUPTI hands buffers back only when full or flushed, and the preload's
 * own flushes come every 100 ms. The ask is the shared header's flush
 * words and a futex wake for the preload's flusher thread
 * (preload/cupti/flusher.c); the wait is bounded, so a process whose
 * CUPTI is stuck delays the snapshot by WAIT_MS at most, and one with no
 * flusher running is not asked at all. The records then on the rings are
 * drained into the trace.
 */
#include "collector/gpu_flush.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/ring_drain.h"

#define WAIT_MS 500
#define POLL_US 500

void ct_gpu_flush_live(struct ct_shm_header *shm, int forced)
{
    if (!shm || !atomic_load(&shm->gpu_flusher))
        return;
    if (forced)
        atomic_store(&shm->gpu_flush_forced, 1);
    uint32_t asked = atomic_fetch_add(&shm->gpu_flush_asked, 1) + 1;
    syscall(SYS_futex, &shm->gpu_flush_asked, FUTEX_WAKE, 1, NULL, NULL, 0);
    const struct timespec poll = {0, POLL_US * 1000L};
    for (int waited = 0; waited < WAIT_MS * 1000 / POLL_US; waited++) {
        if ((int32_t)(atomic_load(&shm->gpu_flush_done) - asked) >= 0 ||
            !atomic_load(&shm->gpu_flusher))
            break;
        nanosleep(&poll, NULL);
    }
    uint64_t oldest_call;
    ct_drain_rings(shm, &oldest_call);
}
