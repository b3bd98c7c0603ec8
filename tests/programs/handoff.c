/*
 * Threads that hand device addresses to each other, as a framework's
 * allocator and its workers do: in each of R rounds, each of T threads
 * allocates one block (thread i: (i + 1) * 64 KiB), all wait at a barrier,
 * then each frees its neighbour's block ((i + 1) % T) and all wait again.
 * An address one thread freed is soon handed out again, often to another,
 * so a tracer that takes the threads' events out of time order sees a free
 * before its allocation, or an allocation of an address still live.
 * Usage: handoff [threads=8] [rounds=2000]. Exact truth: cudaMalloc and
 * cudaFree T*R each, every allocation freed (0 bytes at the end), and the
 * peak is one round's blocks at the first barrier, T(T+1)/2 * 64 KiB, since
 * no block of a round is freed before all of them are allocated.
 * Exits 1 if any call failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define BLOCK_UNIT ((size_t)64 << 10)

static pthread_barrier_t barrier;
static void **blocks; /* this round's block of each thread */
static unsigned long long thread_count, rounds;
static _Atomic unsigned long long failures;

static void *run_thread(void *arg)
{
    size_t self = (size_t)(uintptr_t)arg;
    size_t neighbour = (self + 1) % thread_count;
    for (unsigned long long r = 0; r < rounds; r++) {
        if (cudaMalloc(&blocks[self], (self + 1) * BLOCK_UNIT) != cudaSuccess)
            failures++;
        pthread_barrier_wait(&barrier);
        if (cudaFree(blocks[neighbour]) != cudaSuccess)
            failures++;
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    thread_count = arg_or(argc, argv, 1, 8);
    rounds = arg_or(argc, argv, 2, 2000);
    if (thread_count == 0 || thread_count > 1024)
        return 2;
    pthread_t *threads = calloc(thread_count, sizeof *threads);
    blocks = calloc(thread_count, sizeof *blocks);
    if (!threads || !blocks || pthread_barrier_init(&barrier, NULL, (unsigned)thread_count))
        return 1;
    for (size_t i = 0; i < thread_count; i++)
        if (pthread_create(&threads[i], NULL, run_thread, (void *)(uintptr_t)i))
            return 1;
    for (size_t i = 0; i < thread_count; i++)
        pthread_join(threads[i], NULL);
    printf("handoff: %llu threads x %llu rounds, peak %zu bytes\n", thread_count, rounds,
           (size_t)(thread_count * (thread_count + 1) / 2) * BLOCK_UNIT);
    return failures ? 1 : 0;
}
