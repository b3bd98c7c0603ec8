/*
 * A long run squeezed into a short one, for the bounded-trace tests
 * (tests/test_collector_bounded_trace.py): `rounds` rounds (default 300)
 * of 10 launches, 100 cudaMemsetAsync into the first block at offsets, of
 * values and sizes that vary (detail that compresses little, so that a
 * small trace holds few events for the tests to check) and one
 * cudaDeviceSynchronize. The first 10 rounds
 * each keep a 1 MiB allocation (the start, which a bounded trace keeps);
 * the middle round alone allocates and frees 64 MiB, the run's peak, and
 * starts a worker thread that makes 1,000 launches and ends (the middle,
 * which a bounded trace drops); at the end 7 of the kept blocks are freed,
 * leaving 3 MiB. With a pause, it sleeps that long after the kept rounds:
 * time for a tracer to hand their GPU work over (CUPTI delivers it late,
 * in buffers) while the trace's head is still being written. Prints its
 * own count of each call and its live bytes.
 * Usage: long_run [rounds=300] [pause_ms=0]
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define MIB (1ull << 20)
#define KEPT 10
#define LAUNCHES_PER_ROUND 10
#define SETS_PER_ROUND 100
#define WORKER_LAUNCHES 1000

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void long_run_kernel(void) {}

static void launch(unsigned long long n)
{
    dim3 one = {1, 1, 1};
    for (unsigned long long i = 0; i < n; i++)
        cudaLaunchKernel((const void *)long_run_kernel, one, one, NULL, 0, NULL);
}

/* Memsets whose arguments a linear congruential generator varies. */
static unsigned long long set(void *block, unsigned long long n)
{
    static unsigned long long state = 1;
    unsigned long long done = 0;
    for (unsigned long long i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        size_t offset = (state >> 20) % (MIB / 2), size = (state >> 44) % 4096;
        done +=
            cudaMemsetAsync((char *)block + offset, (int)(state >> 32), size, NULL) == cudaSuccess;
    }
    return done;
}

static void *worker(void *arg)
{
    (void)arg;
    launch(WORKER_LAUNCHES);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned long long rounds = arg_or(argc, argv, 1, 300), pause_ms = arg_or(argc, argv, 2, 0);
    unsigned long long mallocs = 0, frees = 0, sets = 0;
    void *kept[KEPT], *peak;
    for (unsigned long long r = 0; r < rounds; r++) {
        if (r < KEPT)
            mallocs += cudaMalloc(&kept[r], MIB) == cudaSuccess;
        if (r == rounds / 2) {
            pthread_t thread;
            pthread_create(&thread, NULL, worker, NULL);
            pthread_join(thread, NULL);
            mallocs += cudaMalloc(&peak, 64 * MIB) == cudaSuccess;
            frees += cudaFree(peak) == cudaSuccess;
        }
        launch(LAUNCHES_PER_ROUND);
        sets += set(kept[0], SETS_PER_ROUND);
        cudaDeviceSynchronize();
        if (r + 1 == KEPT && pause_ms)
            nanosleep(
                &(struct timespec){(time_t)(pause_ms / 1000), (long)(pause_ms % 1000) * 1000000},
                NULL);
    }
    for (int i = 0; i < 7 && i < (int)rounds; i++)
        frees += cudaFree(kept[i]) == cudaSuccess;
    printf("cudaLaunchKernel %llu\ncudaMemsetAsync %llu\ncudaDeviceSynchronize %llu\n"
           "cudaMalloc %llu\ncudaFree %llu\n",
           rounds * LAUNCHES_PER_ROUND + (rounds ? WORKER_LAUNCHES : 0), sets, rounds, mallocs,
           frees);
    printf("live_bytes %llu\n", (mallocs - frees) * MIB);
    return 0;
}
