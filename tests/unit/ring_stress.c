/*
 * The rings' producer and consumer code, together in one process, for the
 * thread sanitizer: the preload's own ring.c and ring.h (claim, reserve,
 * publish, retire at thread exit) on one side and the collector's own
 * ring_drain.c on the other, with the session and the trace builder stubbed
 * out. Waves of producer threads write numbered records while the consumer
 * drains concurrently. Each producer names itself "p<id>" (the name the ring
 * carries to the consumer, as it does to the collector) and keeps its own
 * account of every call: published when its ring's head moved, else dropped
 * in its ring (that ring's own drop counter, over the thread's ownership) or
 * made while it had no ring; its tid and a hash of the sequence numbers it
 * published. The consumer keeps, per producer named by the ring, the tid the
 * ring gave, the records received, their hash, those out of order and those
 * carrying another producer's id. One line per producer and a line of totals
 * go to stdout for tests/test_unit_ring_stress.py to check against each other.
 * Usage: ring_stress [waves=4] [threads=16] [records=20000] [rings=8]
 * [spill=0] (more threads than rings, so some find none and rings are
 * reused; `spill` pool segments for full rings to spill into, shared by all,
 * fewer than the threads need, so the pool runs out too).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/core/ring.h"
#include "collector/ring_drain.h"
#include "collector/trace_builder.h"

#define CAPACITY 1024u
#define MAX_THREADS 4096

/* What a producer knows of its own calls. Only its thread writes it. */
struct producer {
    pthread_t thread;
    unsigned id;
    int32_t tid;
    uint64_t published, published_hash;
    uint64_t ring_dropped; /* its ring's drop counter: at the end minus at the claim */
    uint64_t without_ring;
    uint64_t spilled; /* of those published, the ones that went to the spill chain */
};

/* What the consumer saw of one producer. Only the consumer thread writes it. */
struct received {
    int32_t tid; /* the ring's, when it was first drained for this producer */
    uint64_t count, hash, next_expected, out_of_order, foreign;
};

static struct ct_shm_header *shm;
static _Atomic uint64_t lost;
static _Atomic int producers_done;
static unsigned long long records_per_thread;
static unsigned producer_count;
static struct received *by_producer;

/* The producer id of each ring's current thread, from the name it carries. */
static unsigned ring_owner[MAX_THREADS];
static uint64_t threads_seen;

/* The sequence numbers in the order they came, folded (FNV-1a over words,
 * from 0: the first number counts too, as it is offset by one). */
static uint64_t hash_next(uint64_t hash, uint64_t sequence)
{
    return (hash ^ (sequence + 1)) * 0x100000001b3ull;
}

/* Stubs of the session (preload) and the builder (collector). */
struct ct_shm_header *ct_session_shm(void)
{
    return shm;
}

void ct_session_count_lost(void)
{
    atomic_fetch_add(&lost, 1);
}

/* Every call is inside a capture window (preload/core/capture.c). */
static _Atomic uint32_t always_recording = 1;
_Atomic uint32_t *ct_capture_flag = &always_recording;

/* Launches are not kept records: a full ring drops them, which is what this
 * test counts, so the wait is never reached. */
int ct_session_wait_until(int (*ready)(void *ctx), void *ctx)
{
    (void)ready, (void)ctx;
    abort();
}

void ct_builder_thread(uint32_t index, int32_t tid, const char *name)
{
    unsigned id = name[0] == 'p' ? (unsigned)strtoul(name + 1, NULL, 10) : producer_count;
    if (id >= producer_count) {
        fprintf(stderr, "ring_stress: ring %u carries the thread name '%s'\n", index, name);
        exit(1);
    }
    ring_owner[index] = id;
    by_producer[id].tid = tid;
    threads_seen++;
}

void ct_builder_record(uint32_t index, const struct ct_record *r)
{
    struct received *seen = &by_producer[ring_owner[index]];
    seen->foreign += r->arg[1] != ring_owner[index];
    seen->out_of_order += r->arg[0] < seen->next_expected; /* drops leave gaps, never reorder */
    seen->next_expected = r->arg[0] + 1;
    seen->hash = hash_next(seen->hash, r->arg[0]);
    seen->count++;
}

static void *producer(void *arg)
{
    struct producer *self = arg;
    char name[16];
    snprintf(name, sizeof name, "p%u", self->id);
    pthread_setname_np(pthread_self(), name);
    self->tid = (int32_t)gettid();
    struct ct_ring *owned = NULL;
    uint64_t dropped_at_claim = 0;
    for (unsigned long long i = 0; i < records_per_thread; i++) {
        uint64_t head = owned ? atomic_load_explicit(&owned->head, memory_order_relaxed) : 0;
        uint64_t spill = owned ? atomic_load_explicit(&owned->spill_head, memory_order_relaxed) : 0;
        ct_emit_call(CT_FN_cudaLaunchKernel, i, i, 0, i, self->id, 0, 0, 0);
        struct ct_ring *ring = ct_thread_ring;
        if (!ring) {
            self->without_ring++;
            continue;
        }
        if (!owned) { /* claimed by this call: a freed ring starts empty, at head 0 */
            owned = ring;
            dropped_at_claim = atomic_load(&ring->dropped);
        }
        int spilled = atomic_load_explicit(&ring->spill_head, memory_order_relaxed) != spill;
        if (atomic_load_explicit(&ring->head, memory_order_relaxed) != head || spilled) {
            self->published++;
            self->spilled += spilled;
            self->published_hash = hash_next(self->published_hash, i);
        }
    }
    if (owned)
        self->ring_dropped = atomic_load(&owned->dropped) - dropped_at_claim;
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    uint64_t oldest_call;
    for (unsigned pass = 0; !atomic_load(&producers_done); pass++) {
        ct_drain_rings(shm, &oldest_call);
        if (pass % 64 == 0)
            ct_drain_trim_spill(shm); /* the collector's, once a second */
    }
    ct_drain_rings(shm, &oldest_call); /* rings retired after the last pass */
    ct_drain_rings(shm, &oldest_call);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned waves = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 16;
    records_per_thread = argc > 3 ? strtoull(argv[3], NULL, 10) : 20000;
    unsigned rings = argc > 4 ? (unsigned)atoi(argv[4]) : 8;
    unsigned spill = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
    if (waves == 0 || threads == 0 || threads > MAX_THREADS || rings > MAX_THREADS ||
        spill > CT_SPILL_CHAIN)
        return 2;
    producer_count = waves * threads;
    struct producer *producers = calloc(producer_count, sizeof *producers);
    by_producer = calloc(producer_count, sizeof *by_producer);
    shm =
        calloc(1, ct_shm_size(rings + 1, CAPACITY, spill)); /* and the loader's, as a session has */
    if (!producers || !by_producer || !shm)
        return 1;
    shm->ring_count = rings + 1;
    shm->ring_capacity = CAPACITY;
    shm->spill_count = spill;
    ct_shm_init_rings(shm);
    ct_ring_mask = CAPACITY - 1;

    pthread_t drain;
    pthread_create(&drain, NULL, consumer, NULL);
    for (unsigned w = 0; w < waves; w++) {
        struct producer *wave = producers + w * threads;
        for (unsigned t = 0; t < threads; t++) {
            wave[t].id = w * threads + t;
            pthread_create(&wave[t].thread, NULL, producer, &wave[t]);
        }
        for (unsigned t = 0; t < threads; t++)
            pthread_join(wave[t].thread, NULL);
    }
    atomic_store(&producers_done, 1);
    pthread_join(drain, NULL);

    for (unsigned p = 0; p < producer_count; p++) {
        const struct producer *self = &producers[p];
        const struct received *seen = &by_producer[p];
        printf("ring_stress: producer %u tid %d published %llu hash %llu ring-dropped %llu"
               " without-ring %llu; tid %d received %llu hash %llu out-of-order %llu"
               " foreign %llu\n",
               self->id, (int)self->tid, (unsigned long long)self->published,
               (unsigned long long)self->published_hash, (unsigned long long)self->ring_dropped,
               (unsigned long long)self->without_ring, (int)seen->tid,
               (unsigned long long)seen->count, (unsigned long long)seen->hash,
               (unsigned long long)seen->out_of_order, (unsigned long long)seen->foreign);
    }
    /* What the rings and the session counted, for all producers together. */
    uint64_t spilled = 0;
    for (unsigned p = 0; p < producer_count; p++)
        spilled += producers[p].spilled;
    printf("ring_stress: total ring-dropped %llu without-ring %llu threads %llu spilled %llu\n",
           (unsigned long long)ct_shm_dropped(shm), (unsigned long long)atomic_load(&lost),
           (unsigned long long)threads_seen, (unsigned long long)spilled);
    free(producers);
    free(by_producer);
    free(shm);
    return 0;
}
