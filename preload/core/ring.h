/*
 * The producer side of the per-thread rings: the hot path every hook ends in.
 * A thread finds its ring through one initial-exec TLS load; writing a record
 * is a bounds check against a cached tail, one 64-byte store and a release of
 * the head. No lock, no syscall, no allocation. A full ring spills into the
 * shared pool (ring.c); with the pool used up too, the record of a launch,
 * copy or query is dropped and counted (its call still counts in the
 * thread's totals), while those of allocations, frees and synchronisations,
 * which cost microseconds anyway, wait for room, bounded by the exit timeout
 * and only while the collector lives, so the memory and sync figures stay
 * whole.
 */
#ifndef CT_PRELOAD_RING_H
#define CT_PRELOAD_RING_H

#include <stdint.h>

#include "cudatrace/shm_layout.h"
#include "preload/core/capture.h"
#include "preload/core/session.h"

#define CT_TLS __attribute__((tls_model("initial-exec")))

extern __thread struct ct_ring *ct_thread_ring CT_TLS;
extern uint64_t ct_ring_mask;

struct ct_ring *ct_ring_for_thread_slow(void);
void ct_ring_forget_thread(void);

static inline struct ct_ring *ct_ring_current(void)
{
    struct ct_ring *ring = ct_thread_ring;
    if (__builtin_expect(ring != NULL, 1))
        return ring;
    return ct_ring_for_thread_slow();
}

static inline void ct_ring_count_drop(struct ct_ring *ring)
{
    /* Atomic: a signal handler's drop may interrupt this thread's own. */
    atomic_fetch_add_explicit(&ring->dropped, 1, memory_order_relaxed);
}

/* Marks the ring as being written; 0 when it already is (we are a signal
 * handler that interrupted this thread's own write). */
static inline int ct_ring_enter(struct ct_ring *ring)
{
    if (ring->busy)
        return 0;
    ring->busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    return 1;
}

static inline void ct_ring_leave(struct ct_ring *ring)
{
    atomic_signal_fence(memory_order_seq_cst);
    ring->busy = 0;
}

/* A slot when the ring looks full (ring.c): the ring, if the consumer made
 * room, else the spill chain; else a kept record waits for room, and any
 * other is dropped (and counted). */
struct ct_record *ct_ring_reserve_slow(struct ct_ring *ring, uint64_t *ticket, int kept);
/* The same without waiting or counting: NULL when there is no room at all. */
struct ct_record *ct_ring_try_reserve(struct ct_ring *ring, uint64_t *ticket);

/* Reserves the next slot and sets *ticket for ct_ring_publish, or returns
 * NULL (and counts a drop) when there is no room; a record that is `kept`
 * waits for the collector instead of being dropped. While the ring spills,
 * cached_tail is kept one ring behind, so every record takes the slow path
 * and the fast path needs no other test. */
static inline struct ct_record *ct_ring_reserve(struct ct_ring *ring, uint64_t *ticket, int kept)
{
    uint64_t h = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (__builtin_expect(h - ring->cached_tail > ct_ring_mask, 0))
        return ct_ring_reserve_slow(ring, ticket, kept);
    *ticket = h;
    return &ring->records[h & ct_ring_mask];
}

/* Counts a call in its thread's totals, whatever becomes of its record. */
static inline void ct_ring_count_call(struct ct_ring *ring, uint16_t func, uint64_t begin,
                                      uint64_t end, int32_t result)
{
    struct ct_call_stats *s = &ring->stats[func];
    s->calls++;
    s->errors += result != 0;
    s->ticks += end - begin;
}

static inline void ct_ring_publish(struct ct_ring *ring, uint64_t ticket)
{
    if (__builtin_expect(ticket & CT_SPILL_TICKET, 0))
        atomic_store_explicit(&ring->spill_head, (ticket & ~CT_SPILL_TICKET) + 1,
                              memory_order_release);
    else
        atomic_store_explicit(&ring->head, ticket + 1, memory_order_release);
}

/* Notes the call the thread is entering, and where from, for a process
 * that dies or hangs inside it: a call's site is taken as it returns, and a
 * stuck call never does. Only a thread that already has a ring is marked:
 * claiming one here would start the session before the program's first
 * call returned. The begin goes last: the collector reads it around the
 * others. */
static inline struct ct_ring *ct_call_enter(uint16_t func, uint64_t begin, const void *caller)
{
    struct ct_ring *ring = ct_thread_ring;
    if (__builtin_expect(ring != NULL, 1)) {
        ring->inflight_func = func;
        if (ct_function_notes_caller(func))
            ring->inflight_caller = (uintptr_t)caller;
        __atomic_store_n(&ring->inflight_begin, begin, __ATOMIC_RELEASE);
    }
    return ring;
}

static inline void ct_call_leave(struct ct_ring *ring)
{
    if (__builtin_expect(ring != NULL, 1))
        ring->inflight_begin = 0;
}

/* A call's record of `type`: CT_REC_CALL from a hook, CT_REC_CUPTI_CALL
 * from a CUPTI callback; outside a capture window only its totals, but for
 * the memory calls, whose records are the whole run's memory figures. Forced
 * inline: each hook's function id is then a constant, which folds the
 * totals' offset and the kept test, and the arguments go to the slot
 * straight from registers rather than through a call's stack. */
static inline __attribute__((always_inline)) void
ct_emit_typed_call(uint16_t type, uint16_t func, uint64_t begin, uint64_t end, int32_t result,
                   uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
    struct ct_ring *ring = ct_ring_current();
    uint64_t head;
    struct ct_record *r;
    if (!ring) {
        ct_session_count_lost();
        return;
    }
    if (!ct_ring_enter(ring)) {
        ct_ring_count_drop(ring);
        return;
    }
    ct_ring_count_call(ring, func, begin, end, result);
    if (!(ct_function_moves_memory(func) || ct_capture_recording()) ||
        !(r = ct_ring_reserve(ring, &head, ct_function_is_kept(func)))) {
        ct_ring_leave(ring);
        return;
    }
    r->type = type;
    r->func = func;
    r->result = result;
    r->begin = begin;
    r->end = end;
    r->arg[0] = a0;
    r->arg[1] = a1;
    r->arg[2] = a2;
    r->arg[3] = a3;
    r->arg[4] = a4;
    ct_ring_publish(ring, head);
    ct_ring_leave(ring);
}

static inline __attribute__((always_inline)) void
ct_emit_call(uint16_t func, uint64_t begin, uint64_t end, int32_t result, uint64_t a0, uint64_t a1,
             uint64_t a2, uint64_t a3, uint64_t a4)
{
    ct_emit_typed_call(CT_REC_CALL, func, begin, end, result, a0, a1, a2, a3, a4);
}

/* Publishes a whole record; whether it went (a `kept` one waits for room). */
int ct_emit_record(struct ct_ring *ring, const struct ct_record *record, int kept);

/* Publishes a string in chunks: all at once when the ring has room for
 * them, else a chunk at a time into the ring or the spill chain, which can
 * stop part way (the collector drops a string with a gap). 0, or -1 when
 * not all of it went. */
int ct_emit_string(struct ct_ring *ring, uint16_t kind, uint64_t key, const char *text);
/* The same for `len` bytes of any content (len <= CT_STRING_MAX). */
int ct_emit_bytes(struct ct_ring *ring, uint16_t kind, uint64_t key, const void *data, size_t len);

#endif
