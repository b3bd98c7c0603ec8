/*
 * Concurrency workload: T pthreads each make one 1 MiB cudaMalloc, N cudaLaunchKernel calls and
 * the matching cudaFree; after joining them the main thread calls cudaDeviceSynchronize once.
 * Usage: threads [threads=4] [launches_per_thread=100000]. Exact totals: cudaMalloc T,
 * cudaFree T, cudaLaunchKernel T*N, cudaDeviceSynchronize 1. Exits 1 if any call failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

#define BUFFER_BYTES ((size_t)1 << 20)

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void worker_kernel(void) {}

struct worker {
    pthread_t thread;
    unsigned long long launches;
    unsigned long long failures;
};

static void *run_worker(void *arg)
{
    struct worker *self = arg;
    dim3 grid = {64, 1, 1};
    dim3 block = {128, 1, 1};
    void *buffer = NULL;
    self->failures += cudaMalloc(&buffer, BUFFER_BYTES) != cudaSuccess;
    void *args[] = {&buffer};
    for (unsigned long long i = 0; i < self->launches; i++)
        self->failures += cudaLaunchKernel((const void *)worker_kernel, grid, block, args, 0,
                                           NULL) != cudaSuccess;
    self->failures += cudaFree(buffer) != cudaSuccess;
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned long long thread_count = arg_or(argc, argv, 1, 4);
    unsigned long long launches = arg_or(argc, argv, 2, 100000);
    struct worker *workers = calloc(thread_count ? thread_count : 1, sizeof *workers);
    if (!workers) {
        perror("threads");
        return 1;
    }

    unsigned long long started = 0;
    for (; started < thread_count; started++) {
        workers[started].launches = launches;
        if (pthread_create(&workers[started].thread, NULL, run_worker, &workers[started]) != 0) {
            fprintf(stderr, "threads: cannot start thread %llu\n", started);
            break;
        }
    }
    unsigned long long failures = 0;
    for (unsigned long long i = 0; i < started; i++) {
        pthread_join(workers[i].thread, NULL);
        failures += workers[i].failures;
    }
    failures += cudaDeviceSynchronize() != cudaSuccess;
    free(workers);

    if (started != thread_count)
        return 1;
    if (failures != 0) {
        fprintf(stderr, "threads: %llu calls failed\n", failures);
        return 1;
    }
    printf("threads: %llu threads x %llu launches\n", thread_count, launches);
    return 0;
}
