/*
 * Drains the rings in index order, each up to the head it saw on entry. A
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
 */
#include "collector/ring_drain.h"

#include <string.h>
#include <sys/mman.h>

#include "collector/trace_builder.h"

static uint8_t ring_seen[CT_RINGS_MAX + 1]; /* rings whose current thread has its track */

/* Gives the ring's current thread its track, once. */
static void ensure_thread(struct ct_ring *ring)
{
    if (ring_seen[ring->index])
        return;
    char name[sizeof ring->thread_name + 1] = {0};
    for (size_t i = 0; i < sizeof ring->thread_name; i++)
        name[i] = ring->thread_name[i];
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

static void drain_spill(struct ct_shm_header *shm, struct ct_ring *ring, uint64_t spill_head)
{
    uint64_t p = atomic_load_explicit(&ring->spill_tail, memory_order_relaxed);
    for (; p != spill_head; p++) {
        uint32_t segment = segment_of(ring, p);
        ct_builder_record(ring->index,
                          ct_shm_spill_segment(shm, segment) + p % CT_SPILL_SEGMENT_RECORDS);
        if (p % CT_SPILL_SEGMENT_RECORDS == CT_SPILL_SEGMENT_RECORDS - 1)
            release_segment(shm, segment);
    }
    atomic_store_explicit(&ring->spill_tail, spill_head, memory_order_release);
}

static uint64_t drain_one(struct ct_shm_header *shm, struct ct_ring *ring, uint32_t mask,
                          int is_loader)
{
    /* The chain's head before the ring's: what was spilled by then was
     * written after everything the ring holds by the time head is read. */
    uint64_t spill_head = atomic_load_explicit(&ring->spill_head, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    uint64_t spill_tail = atomic_load_explicit(&ring->spill_tail, memory_order_relaxed);
    if (head == tail && spill_head == spill_tail)
        return 0;
    if (!is_loader)
        ensure_thread(ring);
    for (uint64_t i = tail; i != head; i++)
        ct_builder_record(ring->index, &ring->records[i & mask]);
    atomic_store_explicit(&ring->tail, head, memory_order_release);
    drain_spill(shm, ring, spill_head);
    return head - tail + spill_head - spill_tail;
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

static uint64_t free_retired(struct ct_shm_header *shm, struct ct_ring *ring, uint32_t mask)
{
    uint64_t drained = drain_one(shm, ring, mask, 0);
    write_calls(ring);
    memset(ring->stats, 0, sizeof ring->stats);
    if (ring_seen[ring->index])
        ct_builder_thread_end(ring->index);
    ring_seen[ring->index] = 0;
    reset_spill(shm, ring);
    atomic_store_explicit(&ring->head, 0, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&ring->state, CT_RING_FREE, memory_order_release);
    return drained;
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
    uint32_t mask = shm->ring_capacity - 1;
    uint64_t drained = 0;
    *oldest_call = 0;
    for (uint32_t i = 0; i < shm->ring_count; i++) {
        struct ct_ring *ring = ct_shm_ring(shm, i);
        uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
        if (state == CT_RING_ACTIVE && i != shm->loader_ring)
            note_call_in_flight(ring, oldest_call);
        if (state == CT_RING_ACTIVE)
            drained += drain_one(shm, ring, mask, i == shm->loader_ring);
        else if (state == CT_RING_RETIRED)
            drained += free_retired(shm, ring, mask);
    }
    return drained;
}

void ct_drain_finish(struct ct_shm_header *shm, uint64_t end_ns)
{
    for (uint32_t i = 0; i < shm->ring_count; i++) {
        struct ct_ring *ring = ct_shm_ring(shm, i);
        if (atomic_load(&ring->state) != CT_RING_ACTIVE || i == shm->loader_ring)
            continue;
        write_calls(ring);
        if (ring->inflight_begin == 0)
            continue;
        ensure_thread(ring);
        ct_builder_inflight(ring->index, ring->inflight_func, ring->inflight_begin, end_ns);
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
