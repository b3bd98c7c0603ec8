/*
 * Ring ownership: which thread writes into which ring. A thread claims a free
 * ring on its first record (a CAS over the ring states, off the hot path) and
 * retires it from a pthread key destructor when it ends; the collector drains
 * a retired ring and only then frees it, so a ring is reused by a new thread
 * without ever mixing two threads' records. Threads that find no free ring
 * are counted in the header as lost rather than made to wait.
 */
#include "ring.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "session.h"

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
                                                    memory_order_acquire, memory_order_relaxed))
            return ring;
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
    /* All chunks or none: a string is not a call, so it is never counted as
     * a dropped record; the caller simply sends it again later. */
    if (head + chunks - ring->cached_tail > ct_ring_mask + 1) {
        ring->cached_tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (head + chunks - ring->cached_tail > ct_ring_mask + 1) {
            ct_ring_leave(ring);
            return -1;
        }
    }
    for (uint64_t i = 0; i < chunks; i++) {
        size_t offset = i * CT_STRING_CHUNK;
        size_t chunk = len - offset < CT_STRING_CHUNK ? len - offset : CT_STRING_CHUNK;
        struct ct_record *r = &ring->records[(head + i) & ct_ring_mask];
        r->type = CT_REC_STRING;
        r->func = kind;
        r->result = (int32_t)chunk;
        r->begin = key;
        r->end = offset | (uint64_t)len << 32;
        memcpy(r->text, text + offset, chunk);
    }
    atomic_store_explicit(&ring->head, head + chunks, memory_order_release);
    ct_ring_leave(ring);
    return 0;
}
