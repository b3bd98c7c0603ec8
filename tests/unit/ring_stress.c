/*
 * The rings' producer and consumer code, together in one process, for the
 * thread sanitizer: the preload's own ring.c and ring.h (claim, reserve,
 * publish, retire at thread exit) on one side and the collector's own
 * ring_drain.c on the other, with the session and the trace builder stubbed
 * out. Waves of producer threads write numbered records while the consumer
 * drains concurrently; at the end every thread's records must have arrived
 * in order (with gaps where the ring was full), and recorded + dropped must equal what the threads
 * issued. Usage: ring_stress [waves=4] [threads=16] [records=20000] [rings=8] (more threads than
 * rings, so some find none and rings are reused).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "ring_drain.h"
#include "trace_builder.h"

#define CAPACITY 1024u
#define MAX_THREADS 4096

static struct ct_shm_header *shm;
static _Atomic uint64_t lost;
static _Atomic int producers_done;
static unsigned long long records_per_thread;

/* What the consumer saw, per ring: which tid owns it and the next sequence
 * number expected from that tid. Only the consumer thread touches these. */
static int32_t ring_tid[MAX_THREADS];
static uint64_t next_expected[MAX_THREADS];
static uint64_t received, out_of_order, threads_seen;

/* Stubs of the session (preload) and the builder (collector). */
struct ct_shm_header *ct_session_shm(void)
{
    return shm;
}

void ct_session_count_lost(void)
{
    atomic_fetch_add(&lost, 1);
}

void ct_builder_thread(uint32_t index, int32_t tid, const char *name)
{
    (void)name;
    ring_tid[index] = tid;
    next_expected[index] = 0;
    threads_seen++;
}

void ct_builder_thread_end(uint32_t index)
{
    ring_tid[index] = 0;
}

void ct_builder_record(uint32_t index, const struct ct_record *r)
{
    out_of_order += r->arg[0] < next_expected[index]; /* drops leave gaps, never reorder */
    next_expected[index] = r->arg[0] + 1;
    received++;
}

void ct_builder_inflight(uint32_t index, uint32_t func, uint64_t begin, uint64_t end_ns)
{
    (void)index, (void)func, (void)begin, (void)end_ns;
}

static void *producer(void *arg)
{
    (void)arg;
    for (unsigned long long i = 0; i < records_per_thread; i++)
        ct_emit_call(0, i, i, 0, i, 0, 0, 0, 0);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    while (!atomic_load(&producers_done))
        ct_drain_rings(shm);
    ct_drain_rings(shm); /* rings retired after the last pass */
    ct_drain_rings(shm);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned waves = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 16;
    records_per_thread = argc > 3 ? strtoull(argv[3], NULL, 10) : 20000;
    unsigned rings = argc > 4 ? (unsigned)atoi(argv[4]) : 8;
    if (threads > MAX_THREADS || rings > MAX_THREADS)
        return 2;
    shm = calloc(1, ct_shm_size(rings + 1, CAPACITY)); /* and the loader's, as a session has */
    if (!shm)
        return 1;
    shm->ring_count = rings + 1;
    shm->ring_capacity = CAPACITY;
    ct_shm_init_rings(shm);
    ct_ring_mask = CAPACITY - 1;

    pthread_t drain, workers[MAX_THREADS];
    pthread_create(&drain, NULL, consumer, NULL);
    for (unsigned w = 0; w < waves; w++) {
        for (unsigned t = 0; t < threads; t++)
            pthread_create(&workers[t], NULL, producer, NULL);
        for (unsigned t = 0; t < threads; t++)
            pthread_join(workers[t], NULL);
    }
    atomic_store(&producers_done, 1);
    pthread_join(drain, NULL);

    unsigned long long issued = (unsigned long long)waves * threads * records_per_thread;
    unsigned long long dropped = ct_shm_dropped(shm) + atomic_load(&lost);
    printf("ring_stress: issued %llu, received %llu, dropped %llu, out of order %llu, "
           "threads %llu\n",
           issued, (unsigned long long)received, dropped, (unsigned long long)out_of_order,
           (unsigned long long)threads_seen);
    return received + dropped == issued && out_of_order == 0 ? 0 : 1;
}
