/*
 * Ring ownership: which thread writes into which ring. A thread claims a free
 * ring on its first record (a CAS over the ring states, off the hot path) and
 * retires it from a pthread key destructor when it ends; the collector drains
 * a retired ring and only then frees it, so a ring is reused by a new thread
 * without ever mixing two threads' records. Threads that find no free ring
 * are counted in the header as lost rather than made to wait. And the slow
 * path of a full ring: spilling into the shared pool's segments (claimed
 * with a CAS on the pool's free bits, lock-free like the rest), and the
 * strings that are written a chunk at a time while a ring spills.
 */
#include "preload/core/ring.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "preload/core/session.h"

__thread struct ct_ring *ct_thread_ring CT_TLS;
uint64_t ct_ring_mask;

static pthread_key_t retire_key;
static pthread_once_t retire_key_once = PTHREAD_ONCE_INIT;

static void retire_ring(void *ring_ptr)
{
    struct ct_ring *ring = ring_ptr;
    ct_thread_ring = NULL;
    atomic_store_explicit(&ring->state, CT_RING_RETIRED, memory_order_release);
}

static void create_retire_key(void)
{
    pthread_key_create(&retire_key, retire_ring);
}

static struct ct_ring *claim_free_ring(struct ct_shm_header *shm)
{
    for (uint32_t i = 0; i < shm->ring_count; i++) {
        struct ct_ring *ring = ct_shm_ring(shm, i);
        uint32_t expected = CT_RING_FREE;
        if (atomic_load_explicit(&ring->state, memory_order_relaxed) != CT_RING_FREE)
            continue; /* a plain read first: a thread with no ring retries often */
        if (atomic_compare_exchange_strong_explicit(&ring->state, &expected, CT_RING_ACTIVE,
                                                    memory_order_acquire, memory_order_relaxed)) {
            ct_shm_note_claimed(shm, i);
            return ring;
        }
    }
    return NULL;
}

struct ct_ring *ct_ring_for_thread_slow(void)
{
    /* A signal handler's CUDA call while this thread is here (starting the
     * session under its lock, or claiming a ring) must not come in again. */
    static __thread int in_slow_path CT_TLS;
    if (in_slow_path)
        return NULL;
    in_slow_path = 1;
    int saved_errno = errno;
    struct ct_ring *ring = NULL;
    struct ct_shm_header *shm = ct_session_shm();
    if (!shm || (ring = claim_free_ring(shm)) == NULL)
        goto out;
    ring->tid = (int32_t)gettid();
    memset(ring->thread_name, 0, sizeof ring->thread_name);
    prctl(PR_GET_NAME, ring->thread_name);
    ring->cached_tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    /* Fault the ring's pages in now, off the hot path, rather than one page
     * fault per 64 records on the first pass. Older kernels lack the advice;
     * the pages then fault in as they are written. */
    madvise((void *)((uintptr_t)ring->records & ~(uintptr_t)4095),
            (size_t)(ct_ring_mask + 1) * sizeof(struct ct_record) + 4096, MADV_POPULATE_WRITE);
    pthread_once(&retire_key_once, create_retire_key);
    pthread_setspecific(retire_key, ring);
    ct_thread_ring = ring;
out:
    errno = saved_errno;
    in_slow_path = 0;
    return ring;
}

/* After fork the child's copy of this thread must not write into rings that
 * belong to the parent's session. */
void ct_ring_forget_thread(void)
{
    ct_thread_ring = NULL;
    pthread_once(&retire_key_once, create_retire_key);
    pthread_setspecific(retire_key, NULL);
}

/* The shared memory a ring lies in: rings sit at fixed strides after the
 * header. */
static struct ct_shm_header *shm_of(struct ct_ring *ring)
{
    return (struct ct_shm_header *)((char *)ring - CT_SHM_HEADER_SIZE -
                                    (size_t)ring->index *
                                        ct_ring_stride((uint32_t)ct_ring_mask + 1));
}

static int claim_segment(struct ct_shm_header *shm)
{
    for (uint32_t w = 0; w < CT_SPILL_CHAIN / 64; w++) {
        uint64_t bits = atomic_load_explicit(&shm->spill_free[w], memory_order_relaxed);
        while (bits) {
            uint64_t bit = bits & -bits;
            if (atomic_compare_exchange_weak_explicit(&shm->spill_free[w], &bits, bits & ~bit,
                                                      memory_order_acquire, memory_order_relaxed))
                return (int)(w * 64 + (uint32_t)__builtin_ctzll(bit));
        }
    }
    return -1;
}

/* The next position of the spill chain, with a new segment when it starts
 * one; NULL when the pool or the chain is exhausted. */
static struct ct_record *spill_reserve(struct ct_shm_header *shm, struct ct_ring *ring,
                                       uint64_t *ticket)
{
    if (!shm->spill_count)
        return NULL;
    uint64_t p = atomic_load_explicit(&ring->spill_head, memory_order_relaxed);
    uint64_t ordinal = p / CT_SPILL_SEGMENT_RECORDS;
    if (p % CT_SPILL_SEGMENT_RECORDS == 0) {
        /* Ordinal - CT_SPILL_CHAIN shares this slot: it must be read out. */
        uint64_t reading = atomic_load_explicit(&ring->spill_tail, memory_order_acquire) /
                           CT_SPILL_SEGMENT_RECORDS;
        int segment;
        if (ordinal - reading >= CT_SPILL_CHAIN || (segment = claim_segment(shm)) < 0)
            return NULL;
        atomic_store_explicit(&ring->spill_segments[ordinal % CT_SPILL_CHAIN], (uint32_t)segment,
                              memory_order_relaxed);
        /* One call maps the segment's 256 pages, where first touches took a
         * fault each (the collector gives a read segment's pages back): a
         * fifth of a burst's cost per record. An older kernel or a filter
         * that refuses it leaves the faults, as before, and the program's
         * errno as it was. */
        int program_errno = errno;
        madvise(ct_shm_spill_segment(shm, (uint32_t)segment), CT_SPILL_SEGMENT_BYTES,
                MADV_POPULATE_WRITE);
        errno = program_errno;
    }
    uint32_t segment =
        atomic_load_explicit(&ring->spill_segments[ordinal % CT_SPILL_CHAIN], memory_order_relaxed);
    *ticket = p | CT_SPILL_TICKET;
    return ct_shm_spill_segment(shm, segment) + p % CT_SPILL_SEGMENT_RECORDS;
}

/* How often a spilling ring looks whether it can go back: reading the
 * consumer's spill_tail on every record made the two sides fight over its
 * cache line. */
#define SPILL_CHECK_EVERY 1024

struct ct_record *ct_ring_try_reserve(struct ct_ring *ring, uint64_t *ticket)
{
    uint64_t p = atomic_load_explicit(&ring->spill_head, memory_order_relaxed);
    if (ring->spilling && p % SPILL_CHECK_EVERY) { /* inside a segment it already has */
        uint32_t segment = atomic_load_explicit(
            &ring->spill_segments[(p / CT_SPILL_SEGMENT_RECORDS) % CT_SPILL_CHAIN],
            memory_order_relaxed);
        *ticket = p | CT_SPILL_TICKET;
        return ct_shm_spill_segment(shm_of(ring), segment) + p % CT_SPILL_SEGMENT_RECORDS;
    }
    uint64_t h = atomic_load_explicit(&ring->head, memory_order_relaxed);
    /* Back to the ring only once everything spilled has been read. */
    if (!ring->spilling || atomic_load_explicit(&ring->spill_tail, memory_order_acquire) ==
                               atomic_load_explicit(&ring->spill_head, memory_order_relaxed)) {
        ring->cached_tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (h - ring->cached_tail <= ct_ring_mask) {
            ring->spilling = 0;
            *ticket = h;
            return &ring->records[h & ct_ring_mask];
        }
    }
    struct ct_record *r = spill_reserve(shm_of(ring), ring, ticket);
    if (r) {
        ring->spilling = 1;
        ring->cached_tail = h - ct_ring_mask - 1; /* the fast path sees a full ring */
    }
    return r;
}

struct retry {
    struct ct_ring *ring;
    uint64_t ticket;
    struct ct_record *record;
};

static int reserved(void *ctx)
{
    struct retry *r = ctx;
    r->record = ct_ring_try_reserve(r->ring, &r->ticket);
    return r->record != NULL;
}

struct ct_record *ct_ring_reserve_slow(struct ct_ring *ring, uint64_t *ticket, int kept)
{
    struct retry r = {ring, 0, ct_ring_try_reserve(ring, ticket)};
    if (r.record)
        return r.record;
    if (kept && ct_session_wait_until(reserved, &r)) {
        *ticket = r.ticket;
        return r.record;
    }
    ct_ring_count_drop(ring);
    return NULL;
}

/* Chunk `i` of a string into `r`: its offset, and the total length, say
 * where it goes, so a gap shows. */
static void fill_chunk(struct ct_record *r, uint16_t kind, uint64_t key, const char *text,
                       size_t len, uint64_t i)
{
    size_t offset = i * CT_STRING_CHUNK;
    size_t chunk = len - offset < CT_STRING_CHUNK ? len - offset : CT_STRING_CHUNK;
    r->type = CT_REC_STRING;
    r->func = kind;
    r->result = (int32_t)chunk;
    r->begin = key;
    r->end = ct_pack_string_span((uint32_t)offset, (uint32_t)len);
    memcpy(r->text, text + offset, chunk);
}

/* A string a chunk at a time, each where the ring's state sends it: while
 * the ring spills, or when the ring has no room for the whole string. A
 * chunk that finds no room ends it; the collector drops a partial string. */
static int emit_chunks(struct ct_ring *ring, uint16_t kind, uint64_t key, const char *text,
                       size_t len, uint64_t chunks)
{
    for (uint64_t i = 0; i < chunks; i++) {
        uint64_t ticket;
        struct ct_record *r = ct_ring_try_reserve(ring, &ticket);
        if (!r)
            return -1;
        fill_chunk(r, kind, key, text, len, i);
        ct_ring_publish(ring, ticket);
    }
    return 0;
}

int ct_emit_record(struct ct_ring *ring, const struct ct_record *record, int kept)
{
    uint64_t head;
    if (!ct_ring_enter(ring))
        return 0;
    struct ct_record *r = ct_ring_reserve(ring, &head, kept);
    if (r) {
        *r = *record;
        ct_ring_publish(ring, head);
    }
    ct_ring_leave(ring);
    return r != NULL;
}

int ct_emit_string(struct ct_ring *ring, uint16_t kind, uint64_t key, const char *text)
{
    return ct_emit_bytes(ring, kind, key, text, strnlen(text, CT_STRING_MAX));
}

int ct_emit_bytes(struct ct_ring *ring, uint16_t kind, uint64_t key, const void *data, size_t len)
{
    const char *text = data;
    uint64_t chunks = len ? (len + CT_STRING_CHUNK - 1) / CT_STRING_CHUNK : 1;
    if (!ct_ring_enter(ring))
        return -1;
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    /* All chunks at once in the ring, or a chunk at a time where there is
     * room: a string is not a call, so it is never counted as a dropped
     * record; the caller sends it again later when it found no room. */
    if (ring->spilling || head + chunks - ring->cached_tail > ct_ring_mask + 1) {
        if (!ring->spilling) /* a spilling ring's cached_tail stays one ring behind */
            ring->cached_tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (ring->spilling || head + chunks - ring->cached_tail > ct_ring_mask + 1) {
            int sent = emit_chunks(ring, kind, key, text, len, chunks);
            ct_ring_leave(ring);
            return sent;
        }
    }
    for (uint64_t i = 0; i < chunks; i++)
        fill_chunk(&ring->records[(head + i) & ct_ring_mask], kind, key, text, len, i);
    atomic_store_explicit(&ring->head, head + chunks, memory_order_release);
    ct_ring_leave(ring);
    return 0;
}
