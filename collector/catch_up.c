/*
 * Before the collector reads the trace as it stands (a snapshot, `ctl
 * status`), it brings the trace up to the moment. First the GPU work CUPTI
 * holds: CUPTI hands buffers back only when full or flushed, and the
 * preload's own flushes come every 100 ms, so it asks the preload's flusher
 * thread (preload/cupti/flusher.c) through the shared header's flush words
 * and a futex wake, and waits a bounded time (WAIT_MS at most, and not at
 * all where no flusher runs). Then it drains the rings, and applies the
 * memory events the builder holds back for ordering up to the drain's start
 * (trace_builder.h, ct_builder_settle_now).
 */
#include "collector/catch_up.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/perfetto/clock_map.h"
#include "collector/ring_drain.h"
#include "collector/trace_builder.h"

#define WAIT_MS 500
#define POLL_US 500

/* Asks the preload's flusher for a flush and waits until it is done. */
static void ask_flush(struct ct_shm_header *shm, int forced)
{
    if (!atomic_load(&shm->gpu_flusher))
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
}

void ct_catch_up(struct ct_shm_header *shm, int forced)
{
    if (!shm)
        return;
    ask_flush(shm, forced);
    uint64_t drained_from = ct_clock_map_now_ns(), oldest_call;
    ct_drain_rings(shm, &oldest_call);
    ct_builder_settle_now(drained_from, oldest_call);
}
