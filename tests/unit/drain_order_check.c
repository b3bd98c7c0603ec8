/*
 * The order the collector's drain (collector/ring_drain.c) hands records
 * to the trace builder when it fell behind: the preload's own ring.c
 * writes, from threads that run one after another, what a drain pass then
 * finds all at once: thread "a" more than its ring holds (the rest in the
 * spill chain), each tenth call preceded by its call-site string; thread
 * "b" calls whose clocks fall between a's; thread "g" GPU records, whose
 * begin is CUPTI's clock and so orders nothing. One pass must give every
 * record once, each ring's in its own order with a string just before its
 * call, the clocked records across rings in clock order (within the slack
 * the pass is given), and free the threads' rings, which the next threads
 * take again (the rings in use stay four). The builder is stubbed out.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "collector/ring_drain.h"
#include "collector/trace_builder.h"
#include "preload/core/ring.h"
#include "tests/unit/check.h"

#define CAPACITY 256u
#define A_CALLS 2000u /* more than a ring holds */
#define B_CALLS 700u
#define GPU_RECORDS 50u
#define SITE_EVERY 10u

struct seen {
    char thread; /* 'a', 'b' or 'g': the ring's thread */
    uint16_t type;
    uint64_t begin;
};

static struct ct_shm_header *shm;
static char ring_thread[CAPACITY];
static struct seen seen[A_CALLS * 2 + B_CALLS + GPU_RECORDS];
static size_t seen_count;

struct ct_shm_header *ct_session_shm(void)
{
    return shm;
}

void ct_session_count_lost(void) {}

/* The spill pool has room for all: a kept record never waits. */
int ct_session_wait_until(int (*ready)(void *ctx), void *ctx)
{
    (void)ready, (void)ctx;
    abort();
}

void ct_builder_thread(uint32_t index, int32_t tid, const char *name)
{
    (void)tid;
    ring_thread[index] = name[0];
}

void ct_builder_record(uint32_t index, const struct ct_record *r)
{
    if (seen_count < sizeof seen / sizeof seen[0])
        seen[seen_count] = (struct seen){ring_thread[index], r->type, r->begin};
    seen_count++;
}

static void emit(uint16_t type, uint64_t begin)
{
    struct ct_record r = {.type = type, .func = CT_FN_cudaMemcpy, .begin = begin, .end = begin};
    ct_emit_record(ct_ring_current(), &r, 1);
}

/* a: clocks 0, 10, 20, ...; every tenth call after its site string. */
static void *thread_a(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "a");
    for (uint64_t i = 0; i < A_CALLS; i++) {
        if (i % SITE_EVERY == 0)
            ct_emit_string(ct_ring_current(), CT_STR_CALL_SITE, i * 10, "site");
        emit(CT_REC_CALL, i * 10);
    }
    return NULL;
}

/* b: clocks 5, 15, 25, ...: between a's, until past a's last. */
static void *thread_b(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "b");
    for (uint64_t i = 0; i < B_CALLS; i++)
        emit(CT_REC_CALL, i * 30 + 5);
    return NULL;
}

/* g: GPU records on a clock far from the program's. */
static void *thread_g(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "g");
    for (uint64_t i = 0; i < GPU_RECORDS; i++)
        emit(CT_REC_GPU, (1ull << 60) - i);
    return NULL;
}

static void run_thread(void *(*body)(void *))
{
    pthread_t thread;
    pthread_create(&thread, NULL, body, NULL);
    pthread_join(thread, NULL);
}

/* One pass over what the three threads left, with `slack` ticks. */
static void check_pass(uint64_t slack)
{
    seen_count = 0;
    run_thread(thread_a);
    run_thread(thread_b);
    run_thread(thread_g);
    ct_drain_order_slack(slack);
    uint64_t oldest_call;
    uint64_t drained = ct_drain_rings(shm, &oldest_call);
    uint64_t records = A_CALLS + A_CALLS / SITE_EVERY + B_CALLS + GPU_RECORDS;
    ct_check_u64(drained, records, "slack %llu: records drained", (unsigned long long)slack);
    if (!ct_check_u64(seen_count, records, "slack %llu: records given", (unsigned long long)slack))
        return;
    uint64_t next[128] = {0}, latest = 0, late = 0, strings_misplaced = 0, gpu_misordered = 0;
    uint64_t gpu_seen = 0;
    for (size_t i = 0; i < seen_count; i++) {
        const struct seen *s = &seen[i];
        if (s->type == CT_REC_STRING) {
            /* the call it names comes next from its ring */
            size_t j = i + 1;
            while (j < seen_count && seen[j].thread != s->thread)
                j++;
            strings_misplaced +=
                j == seen_count || seen[j].type != CT_REC_CALL || seen[j].begin != s->begin;
            continue;
        }
        if (s->type == CT_REC_GPU) {
            gpu_misordered += s->begin != (1ull << 60) - gpu_seen++;
            continue;
        }
        unsigned t = (unsigned char)s->thread;
        late += s->begin < next[t] || s->begin + slack < latest;
        next[t] = s->begin + 1;
        if (s->begin > latest)
            latest = s->begin;
    }
    ct_check_u64(late, 0, "slack %llu: clocked records out of order", (unsigned long long)slack);
    ct_check_u64(strings_misplaced, 0, "slack %llu: strings not just before their call",
                 (unsigned long long)slack);
    ct_check_u64(gpu_seen, GPU_RECORDS, "slack %llu: GPU records", (unsigned long long)slack);
    ct_check_u64(gpu_misordered, 0, "slack %llu: GPU records in their ring's order",
                 (unsigned long long)slack);
    /* b's first call (clock 5) is not left until a's backlog is through */
    uint64_t a_first = 0;
    for (size_t i = 0; i < seen_count && seen[i].thread != 'b'; i++)
        a_first += seen[i].thread == 'a' && seen[i].type == CT_REC_CALL;
    ct_check(a_first <= 1 + slack / 10, "slack %llu: b's first call after %llu of a's",
             (unsigned long long)slack, (unsigned long long)a_first);
    uint32_t active = 0;
    for (uint32_t i = 1; i < shm->ring_count; i++) /* ring 0 is the loader's, always active */
        active += atomic_load(&ct_shm_ring(shm, i)->state) != CT_RING_FREE;
    ct_check_u64(active, 0, "slack %llu: rings freed", (unsigned long long)slack);
}

int main(void)
{
    uint32_t rings = 4;
    shm = calloc(1, ct_shm_size(rings + 1, CAPACITY, 2));
    if (!shm)
        return 1;
    shm->ring_count = rings + 1;
    shm->ring_capacity = CAPACITY;
    shm->spill_count = 2;
    ct_shm_init_rings(shm);
    ct_ring_mask = CAPACITY - 1;
    ct_check_u64(ct_shm_rings_in_use(shm), 1, "before any thread, the loader's ring alone");
    check_pass(0);
    /* a, b and g took the first three free rings, and the pass freed them;
     * the next pass's threads take the same three */
    ct_check_u64(ct_shm_rings_in_use(shm), 4, "the passes look at the rings threads took");
    check_pass(25); /* a runs at most 2 of its calls ahead of b */
    ct_check_u64(ct_shm_rings_in_use(shm), 4, "rings given back are taken again first");
    free(shm);
    return ct_check_finish();
}
