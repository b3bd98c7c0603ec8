/*
 * Brings the GPU work CUPTI has finished recording to the trace within a
 * bounded delay, whatever the program does. CUPTI's own worker promises
 * little: "Periodic flush can return only those activity buffers which are
 * full and have all the activity records completed" (cuptiActivityFlushPeriod),
 * and a 4 MiB buffer holds tens of thousands of kernels. So a thread of the
 * preload's own asks for a default flush ("it returns all the activity
 * buffers which have all the activity records completed, buffers need not
 * to be full though ... Default flush can be done at a regular interval in a
 * separate thread", cuptiActivityFlushAll) every FLUSH_MS, and at once when
 * the collector asks through the shared header (before a snapshot or a
 * `ctl status`), a forced one when it asks for that (a hang's snapshot,
 * where the work that never completes is the point). The thread blocks
 * every signal, so none of the program's lands on it, makes no CUDA call,
 * and is the only one of ours in the program. At exit the work still in
 * flight gets a bounded time to complete before the forced flush, which
 * hands over incomplete records: the work the program's calls made
 * (their totals on the rings) against the records CUPTI handed over says
 * whether anything is still due.
 */
#include "preload/cupti/flusher.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cudatrace/shm_layout.h"
#include "preload/core/clock.h"
#include "preload/core/session.h"
#include "preload/cupti/api.h"
#include "preload/cupti/internal.h"

#define FLUSH_MS 100
#define EXIT_WAIT_MS 200
#define EXIT_STEP_MS 5

static struct {
    pthread_t thread;
    int started;
    _Atomic int stopping;
    _Atomic uint32_t alone; /* what the thread sleeps on when there is no shared header */
} flusher;

static _Atomic uint32_t *wake_word(struct ct_shm_header *shm)
{
    return shm ? &shm->gpu_flush_asked : &flusher.alone;
}

static void sleep_on(_Atomic uint32_t *word, uint32_t seen, long ms)
{
    struct timespec timeout = {ms / 1000, (ms % 1000) * 1000000L};
    syscall(SYS_futex, word, FUTEX_WAIT, seen, &timeout, NULL, 0);
}

static void wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void *flusher_main(void *unused)
{
    (void)unused;
    struct ct_shm_header *shm = ct_session_shm();
    _Atomic uint32_t *asked = wake_word(shm);
    uint32_t served = atomic_load(asked);
    while (!atomic_load(&flusher.stopping)) {
        if (atomic_load(asked) == served)
            sleep_on(asked, served, FLUSH_MS);
        if (atomic_load(&flusher.stopping))
            break;
        uint32_t now_asked = atomic_load(asked);
        int forced = shm && now_asked != served && atomic_exchange(&shm->gpu_flush_forced, 0);
        ct_cupti.activity_flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
        if (shm && now_asked != served)
            atomic_store(&shm->gpu_flush_done, now_asked);
        served = now_asked;
    }
    return NULL;
}

void ct_cupti_flusher_start(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    flusher.started = pthread_create(&flusher.thread, NULL, flusher_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!flusher.started)
        return;
    pthread_setname_np(flusher.thread, "cudatrace-gpu");
    struct ct_shm_header *shm = ct_session_shm();
    if (shm)
        atomic_store(&shm->gpu_flusher, 1);
}

void ct_cupti_flusher_stop(void)
{
    if (!flusher.started)
        return;
    flusher.started = 0;
    struct ct_shm_header *shm = ct_session_shm();
    if (shm)
        atomic_store(&shm->gpu_flusher, 0);
    atomic_store(&flusher.stopping, 1);
    wake(wake_word(shm));
    if (!pthread_equal(pthread_self(), flusher.thread))
        pthread_join(flusher.thread, NULL);
}

/* GPU work the program's calls made so far, from every thread's totals. */
static uint64_t work_made(void)
{
    struct ct_shm_header *shm = ct_session_shm();
    uint64_t made = 0;
    for (uint32_t i = 0; shm && i < ct_shm_rings_in_use(shm); i++) {
        const struct ct_ring *ring = ct_shm_ring(shm, i);
        for (uint16_t fn = 0; fn < CT_FN_COUNT; fn++)
            if (ct_cupti_makes_gpu_work(fn))
                made += ring->stats[fn].calls - ring->stats[fn].errors;
    }
    return made;
}

void ct_cupti_flush_at_exit(void)
{
    uint64_t deadline = ct_clock_boottime_ns() + EXIT_WAIT_MS * 1000000ull;
    const struct timespec step = {0, EXIT_STEP_MS * 1000000L};
    for (;;) {
        ct_cupti.activity_flush_all(0);
        if (ct_cupti_activity_work_records() >= work_made() || ct_clock_boottime_ns() >= deadline)
            break;
        nanosleep(&step, NULL);
    }
    ct_cupti.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void ct_cupti_flusher_forget_in_child(void)
{
    flusher.started = 0;
    atomic_store(&flusher.stopping, 0);
}
