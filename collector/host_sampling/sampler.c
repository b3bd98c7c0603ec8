/*
 * The host sampler's thread and its hand-over. The thread paces itself on
 * CLOCK_MONOTONIC, one round of threads per interval and one of workers
 * every WORKER_EVERY rounds, and timestamps each round from CLOCK_BOOTTIME,
 * the trace's clock. Events wait in a bounded queue (collector/handover.h).
 * Nothing here can block for long (it reads /proc only), so the
 * stop is a flag the thread looks at between short pauses, then a join.
 */
#include "collector/host_sampling/sampler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "collector/handover.h"
#include "collector/host_sampling/rounds.h"

#define QUEUE_EVENTS 8192u
#define WORKER_EVERY 10u
#define PAUSE_NS 10000000ull /* the longest the stop waits for the thread */

static struct {
    pthread_mutex_t lock;
    pthread_t thread;
    int started;
    atomic_int stopping;
    uint64_t interval_ns;
    struct ct_host_rounds rounds;
    struct ct_host_status status;
} sampler = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct ct_host_event queue_items[QUEUE_EVENTS];
static struct ct_handover queue = CT_HANDOVER_INIT(queue_items, QUEUE_EVENTS);

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void push(const struct ct_host_event *e)
{
    ct_handover_push(&queue, e);
}

/* Sleeps until `until` (CLOCK_MONOTONIC) in pauses short enough for the
 * stop; 1 when asked to stop. */
static int pause_until(uint64_t until)
{
    for (uint64_t now; !atomic_load(&sampler.stopping);) {
        if ((now = clock_ns(CLOCK_MONOTONIC)) >= until)
            return 0;
        uint64_t step = until - now < PAUSE_NS ? until - now : PAUSE_NS;
        struct timespec t = {(time_t)(step / 1000000000ull), (long)(step % 1000000000ull)};
        nanosleep(&t, NULL);
    }
    return 1;
}

static void *run(void *unused)
{
    (void)unused;
    struct ct_host_rounds *r = &sampler.rounds;
    uint64_t next = clock_ns(CLOCK_MONOTONIC);
    do {
        ct_host_thread_round(r, clock_ns(CLOCK_BOOTTIME));
        if (r->round % WORKER_EVERY == 1)
            ct_host_worker_round(r, clock_ns(CLOCK_BOOTTIME));
        next += sampler.interval_ns;
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        if (next < now) /* a round late: the next from now, not a burst */
            next = now;
    } while (!pause_until(next));
    pthread_mutex_lock(&sampler.lock);
    sampler.status.cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    pthread_mutex_unlock(&sampler.lock);
    return NULL;
}

void ct_host_sampler_start(struct ct_shm_header *shm, uint32_t hz)
{
    struct ct_host_status *s = &sampler.status;
    if (!hz)
        return; /* the state stays off */
    sampler.interval_ns = 1000000000ull / hz;
    sampler.rounds.emit = push;
    s->state = CT_HOST_UNAVAILABLE;
    if (ct_host_rounds_open(&sampler.rounds, shm, s->reason, sizeof s->reason))
        return;
    sampler.started = pthread_create(&sampler.thread, NULL, run, NULL) == 0;
    if (sampler.started)
        s->state = CT_HOST_SAMPLING;
    else
        snprintf(s->reason, sizeof s->reason, "no thread to sample on");
}

int ct_host_sampler_next(struct ct_host_event *out)
{
    return ct_handover_take(&queue, out);
}

void ct_host_sampler_stop(struct ct_host_status *out)
{
    atomic_store(&sampler.stopping, 1);
    if (sampler.started)
        pthread_join(sampler.thread, NULL);
    struct ct_host_rounds *r = &sampler.rounds;
    pthread_mutex_lock(&sampler.lock);
    sampler.status.rounds = r->round;
    sampler.status.thread_samples = r->thread_samples;
    sampler.status.worker_samples = r->worker_samples;
    sampler.status.untracked = r->untracked;
    sampler.status.dropped_events = ct_handover_dropped(&queue);
    *out = sampler.status;
    pthread_mutex_unlock(&sampler.lock);
    ct_host_rounds_close(r);
}
