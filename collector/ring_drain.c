/*
 * Drains the rings, each up to the head it saw as the pass began, merged
 * in clock order across rings (merge() says why). A
 * ring whose thread ended is drained to the end, then reset and freed for
 * the next thread, which gets a new sequence and thread track. Only the
 * collector frees rings, so a freed ring never holds undrained records.
 * The loader's ring belongs to no thread: its records (library events,
 * written by whichever thread looked at the link map) get no thread track.
 * A ring's spill chain is read after the ring itself (the order the
 * producer wrote them in, record.h), and each pool segment read to its end
 * goes back to the pool. Its pages stay, so a burst that goes on reuses
 * them without faulting; ct_drain_trim_spill gives back, once a second, the
 * pages of the segments used since its last pass that are free by now.
 * The running threads can also be looked at without draining: the call each
 * is inside (the hang trigger) and their state for a snapshot.
 */
#include "collector/ring_drain.h"

#include <string.h>
#include <sys/mman.h>

#include "collector/trace_builder.h"

static uint8_t ring_seen[CT_RINGS_MAX + 1]; /* rings whose current thread has its track */

/* The ring's thread's name, which the thread may be renaming: a copy. */
static void thread_name(const struct ct_ring *ring, char name[sizeof ring->thread_name + 1])
{
    for (size_t i = 0; i < sizeof ring->thread_name; i++)
        name[i] = ring->thread_name[i];
    name[sizeof ring->thread_name] = '\0';
}

/* Gives the ring's current thread its track, once. */
static void ensure_thread(struct ct_ring *ring)
{
    if (ring_seen[ring->index])
        return;
    char name[sizeof ring->thread_name + 1];
    thread_name(ring, name);
    ct_builder_thread(ring->index, ring->tid, name);
    ring_seen[ring->index] = 1;
}

static uint64_t used_since_trim[CT_SPILL_CHAIN / 64]; /* segments that hold pages */

static void release_segment(struct ct_shm_header *shm, uint32_t segment)
{
    used_since_trim[segment / 64] |= 1ull << (segment % 64);
    atomic_fetch_or_explicit(&shm->spill_free[segment / 64], 1ull << (segment % 64),
                             memory_order_release);
}

static uint32_t segment_of(struct ct_ring *ring, uint64_t position)
{
    return atomic_load_explicit(
        &ring->spill_segments[(position / CT_SPILL_SEGMENT_RECORDS) % CT_SPILL_CHAIN],
        memory_order_relaxed);
}

/* A ring's records published when the pass began: its own from `next` to
 * `head`, then its spill chain's from `spill_next` to `spill_head`. */
struct pending {
    struct ct_ring *ring;
    /* The ring's index, kept here so that taking a record does not read
     * the ring's first cache line, which its thread writes on every call
     * (the head, the call in flight). */
    uint32_t index;
    uint64_t next, head, spill_next, spill_head;
    uint64_t key; /* the clock of the latest record taken that has one */
};

static struct pending pending[CT_RINGS_MAX + 1];
static uint64_t order_slack_ticks;

void ct_drain_order_slack(uint64_t ticks)
{
    order_slack_ticks = ticks;
}

/* 1 when the ring has records to give. */
static int note_pending(struct pending *p, struct ct_ring *ring)
{
    /* The chain's head before the ring's: what was spilled by then was
     * written after everything the ring holds by the time head is read. */
    p->spill_head = atomic_load_explicit(&ring->spill_head, memory_order_acquire);
    p->head = atomic_load_explicit(&ring->head, memory_order_acquire);
    p->next = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    p->spill_next = atomic_load_explicit(&ring->spill_tail, memory_order_relaxed);
    p->ring = ring;
    p->index = ring->index;
    p->key = 0;
    return p->next != p->head || p->spill_next != p->spill_head;
}

static const struct ct_record *peek(struct ct_shm_header *shm, const struct pending *p,
                                    uint32_t mask)
{
    if (p->next != p->head)
        return &p->ring->records[p->next & mask];
    if (p->spill_next != p->spill_head)
        return ct_shm_spill_segment(shm, segment_of(p->ring, p->spill_next)) +
               p->spill_next % CT_SPILL_SEGMENT_RECORDS;
    return NULL;
}

/* Records stamped with the program's clock order the merge; the others
 * (strings, GPU work on CUPTI's clock) go with the record before them. */
static uint64_t order_key(const struct pending *p, const struct ct_record *r)
{
    return ct_record_on_program_clock(r->type) ? r->begin : p->key;
}

/* Hands one record to the builder, then gives its slot back: the ring's
 * once all it held is taken, a spill segment once read to its end. */
static void take(struct ct_shm_header *shm, struct pending *p, const struct ct_record *r)
{
    p->key = order_key(p, r);
    ct_builder_record(p->index, r);
    if (p->next != p->head) {
        if (++p->next == p->head)
            atomic_store_explicit(&p->ring->tail, p->head, memory_order_release);
        return;
    }
    if (p->spill_next % CT_SPILL_SEGMENT_RECORDS == CT_SPILL_SEGMENT_RECORDS - 1)
        release_segment(shm, segment_of(p->ring, p->spill_next));
    if (++p->spill_next == p->spill_head)
        atomic_store_explicit(&p->ring->spill_tail, p->spill_head, memory_order_release);
}

/* The ring whose next record is earliest gives records until its next is
 * later than every other's next by more than the slack, so a thread that
 * fell behind (a backlog the collector is still working through) is not
 * written after threads that ran later: a bounded trace's chunks then hold
 * a span of time, not of drain order. Each ring keeps its own order. */
static uint64_t merge(struct ct_shm_header *shm, uint32_t *live, uint32_t n, uint32_t mask)
{
    uint64_t taken = 0;
    while (n) {
        uint32_t first = 0;
        uint64_t first_key = UINT64_MAX, second_key = UINT64_MAX;
        for (uint32_t i = 0; i < n; i++) {
            struct pending *p = &pending[live[i]];
            uint64_t key = order_key(p, peek(shm, p, mask));
            if (key < first_key)
                second_key = first_key, first_key = key, first = i;
            else if (key < second_key)
                second_key = key;
        }
        uint64_t limit = second_key > UINT64_MAX - order_slack_ticks
                             ? UINT64_MAX
                             : second_key + order_slack_ticks;
        struct pending *p = &pending[live[first]];
        const struct ct_record *r = peek(shm, p, mask);
        do {
            take(shm, p, r);
            taken++;
        } while ((r = peek(shm, p, mask)) && order_key(p, r) <= limit);
        if (!r)
            live[first] = live[--n];
    }
    return taken;
}

/* A ring going back to the free list keeps no segment: the one its chain
 * was part way through is returned too. */
static void reset_spill(struct ct_shm_header *shm, struct ct_ring *ring)
{
    uint64_t end = atomic_load_explicit(&ring->spill_head, memory_order_relaxed);
    if (end % CT_SPILL_SEGMENT_RECORDS)
        release_segment(shm, segment_of(ring, end));
    atomic_store_explicit(&ring->spill_head, 0, memory_order_relaxed);
    atomic_store_explicit(&ring->spill_tail, 0, memory_order_relaxed);
    ring->spilling = 0;
}

/* A thread's totals, once it has ended: they give it a track if all its
 * records were dropped. */
static void write_calls(struct ct_ring *ring)
{
    for (uint32_t fn = 0; fn < CT_FN_COUNT; fn++)
        if (ring->stats[fn].calls) {
            ensure_thread(ring);
            ct_builder_thread_calls(ring->index, ring->stats);
            return;
        }
}

/* A ring whose thread ended, once its last records are taken. */
static void free_retired(struct ct_shm_header *shm, struct ct_ring *ring)
{
    write_calls(ring);
    memset(ring->stats, 0, sizeof ring->stats);
    if (ring_seen[ring->index])
        ct_builder_thread_end(ring->index);
    ring_seen[ring->index] = 0;
    reset_spill(shm, ring);
    atomic_store_explicit(&ring->head, 0, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&ring->state, CT_RING_FREE, memory_order_release);
}

/* The call a running thread is inside, read twice around its function and
 * caller so that a call that ended meanwhile is not paired with the next
 * one's. */
static struct ct_call_now call_now(const struct ct_ring *ring)
{
    uint64_t begin = __atomic_load_n(&ring->inflight_begin, __ATOMIC_ACQUIRE);
    uint32_t func = __atomic_load_n(&ring->inflight_func, __ATOMIC_ACQUIRE);
    uint64_t caller = __atomic_load_n(&ring->inflight_caller, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&ring->inflight_begin, __ATOMIC_ACQUIRE) != begin)
        begin = 0;
    if (!ct_function_notes_caller(func))
        caller = 0; /* a launch leaves the address of the call before it */
    return (struct ct_call_now){ring->index, ring->tid, func, begin, caller};
}

/* The call a ring's thread is inside, read before the ring is drained: its
 * record, not yet published, will carry that begin. */
static void note_call_in_flight(const struct ct_ring *ring, uint64_t *oldest)
{
    uint64_t begin = __atomic_load_n(&ring->inflight_begin, __ATOMIC_ACQUIRE);
    if (begin && (!*oldest || begin < *oldest))
        *oldest = begin;
}

uint64_t ct_drain_rings(struct ct_shm_header *shm, uint64_t *oldest_call)
{
    uint32_t live[CT_RINGS_MAX + 1], retired[CT_RINGS_MAX + 1], n = 0, ended = 0;
    *oldest_call = 0;
    for (uint32_t i = 0, n_rings = ct_shm_rings_in_use(shm); i < n_rings; i++) {
        struct ct_ring *ring = ct_shm_ring(shm, i);
        uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
        if (state != CT_RING_ACTIVE && state != CT_RING_RETIRED)
            continue;
        if (state == CT_RING_ACTIVE && i != shm->loader_ring)
            note_call_in_flight(ring, oldest_call);
        if (state == CT_RING_RETIRED)
            retired[ended++] = i;
        if (!note_pending(&pending[i], ring))
            continue;
        if (i != shm->loader_ring)
            ensure_thread(ring);
        live[n++] = i;
    }
    uint64_t drained = merge(shm, live, n, shm->ring_capacity - 1);
    for (uint32_t k = 0; k < ended; k++)
        free_retired(shm, ct_shm_ring(shm, retired[k]));
    return drained;
}

/* The rings of threads that are still running (not the loader's). */
static struct ct_ring *live_ring(struct ct_shm_header *shm, uint32_t i)
{
    struct ct_ring *ring = ct_shm_ring(shm, i);
    return atomic_load(&ring->state) == CT_RING_ACTIVE && i != shm->loader_ring ? ring : NULL;
}

void ct_drain_finish(struct ct_shm_header *shm, uint64_t end_ns)
{
    for (uint32_t i = 0, n_rings = ct_shm_rings_in_use(shm); i < n_rings; i++) {
        struct ct_ring *ring = live_ring(shm, i);
        if (!ring)
            continue;
        write_calls(ring);
        if (ring->inflight_begin == 0)
            continue;
        ensure_thread(ring);
        ct_builder_inflight(call_now(ring), end_ns);
    }
}

uint32_t ct_drain_calls_now(struct ct_shm_header *shm, struct ct_call_now *calls)
{
    uint32_t n = 0;
    for (uint32_t i = 0, n_rings = ct_shm_rings_in_use(shm); i < n_rings; i++) {
        struct ct_ring *ring = live_ring(shm, i);
        if (ring && (calls[n] = call_now(ring)).begin_ticks)
            n++;
    }
    return n;
}

void ct_drain_describe_live(struct ct_shm_header *shm)
{
    for (uint32_t i = 0, n_rings = ct_shm_rings_in_use(shm); i < n_rings; i++) {
        struct ct_ring *ring = live_ring(shm, i);
        if (ring)
            ensure_thread(ring);
    }
}

void ct_drain_write_live(struct ct_shm_header *shm, uint64_t now_ns)
{
    for (uint32_t i = 0, n_rings = ct_shm_rings_in_use(shm); i < n_rings; i++) {
        struct ct_ring *ring = live_ring(shm, i);
        if (!ring)
            continue;
        char name[sizeof ring->thread_name + 1];
        thread_name(ring, name);
        ct_builder_thread_now(ring->index, name, ring->stats, call_now(ring), now_ns);
    }
}

void ct_drain_trim_spill(struct ct_shm_header *shm)
{
    for (uint32_t w = 0; w < CT_SPILL_CHAIN / 64; w++) {
        for (uint64_t used = used_since_trim[w]; used; used &= used - 1) {
            uint64_t bit = used & -used;
            /* Taken out of the pool first, so no thread writes there while
             * its pages go; a segment in use now is left for next time. */
            if (!(atomic_fetch_and(&shm->spill_free[w], ~bit) & bit))
                continue;
            uint32_t segment = w * 64 + (uint32_t)__builtin_ctzll(bit);
            /* Only the memfd's pages: calloc'ed memory (the unit test) refuses. */
            madvise(ct_shm_spill_segment(shm, segment), CT_SPILL_SEGMENT_BYTES, MADV_REMOVE);
            used_since_trim[w] &= ~bit;
            atomic_fetch_or_explicit(&shm->spill_free[w], bit, memory_order_release);
        }
    }
}
