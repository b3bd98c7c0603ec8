/*
 * Thread-lifetime workloads for the tracer's per-thread rings. Usage:
 *   thread_churn WAVES THREADS CALLS [PAUSE_MS=0]
 *       WAVES times: start THREADS threads, each makes CALLS cudaLaunchKernel calls, join them all,
 *       then sleep PAUSE_MS. Within a wave every thread holds on to its ring at once: all wait at
 *       a barrier before their first call and again after their last, so a wave of more threads
 *       than there are rings has exactly the surplus threads find no ring. The main thread makes
 *       no CUDA call. Prints "thread_churn: W waves x T threads x C calls = TOTAL calls issued".
 *   thread_churn exit-while-busy [THREADS=4] [MIN_CALLS=1000]
 *       starts THREADS threads that launch in a loop forever, waits until each has made
 *       MIN_CALLS calls, then returns from main while they are still calling: exit() and every
 *       destructor run under their feet. Prints "thread_churn: N threads busy at exit".
 * Exits 1 if a call failed (churn) or a thread could not be started, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void churn_kernel(void) {}

static cudaError_t launch_once(void)
{
    dim3 grid = {4, 1, 1};
    dim3 block = {64, 1, 1};
    return cudaLaunchKernel((const void *)churn_kernel, grid, block, NULL, 0, NULL);
}

/* ---- waves ------------------------------------------------------------------------------- */

static pthread_barrier_t wave_start, wave_end;
static unsigned long long calls_per_thread;
static atomic_ullong failures;

static void *wave_worker(void *unused)
{
    (void)unused;
    pthread_barrier_wait(&wave_start);
    unsigned long long failed = 0;
    for (unsigned long long i = 0; i < calls_per_thread; i++)
        failed += launch_once() != cudaSuccess;
    atomic_fetch_add(&failures, failed);
    /* Nobody of this wave retires its ring before everyone of it has made every call. */
    pthread_barrier_wait(&wave_end);
    return NULL;
}

static int run_waves(unsigned long long waves, unsigned long long threads,
                     unsigned long long calls, unsigned long long pause_ms)
{
    if (threads == 0 || threads > 4096) {
        fprintf(stderr, "thread_churn: THREADS must be 1..4096\n");
        return 2;
    }
    calls_per_thread = calls;
    pthread_t *ids = calloc(threads, sizeof *ids);
    if (!ids)
        return 1;
    for (unsigned long long w = 0; w < waves; w++) {
        pthread_barrier_init(&wave_start, NULL, (unsigned)threads);
        pthread_barrier_init(&wave_end, NULL, (unsigned)threads);
        for (unsigned long long t = 0; t < threads; t++) {
            if (pthread_create(&ids[t], NULL, wave_worker, NULL) != 0) {
                /* The started ones wait at the barrier forever: give up on the whole run. */
                fprintf(stderr, "thread_churn: cannot start thread %llu of wave %llu\n", t, w);
                _exit(1);
            }
        }
        for (unsigned long long t = 0; t < threads; t++)
            pthread_join(ids[t], NULL);
        pthread_barrier_destroy(&wave_start);
        pthread_barrier_destroy(&wave_end);
        if (pause_ms) {
            struct timespec pause = {(time_t)(pause_ms / 1000), (long)(pause_ms % 1000) * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
    free(ids);
    if (atomic_load(&failures)) {
        fprintf(stderr, "thread_churn: %llu calls failed\n", atomic_load(&failures));
        return 1;
    }
    printf("thread_churn: %llu waves x %llu threads x %llu calls = %llu calls issued\n", waves,
           threads, calls, waves * threads * calls);
    return 0;
}

/* ---- exit while busy ------------------------------------------------------------------------ */

static atomic_uint busy_ready;
static unsigned long long busy_min_calls;

static void *busy_worker(void *unused)
{
    (void)unused;
    unsigned long long made = 0;
    for (;;) {
        launch_once(); /* results do not matter here: the runtime may be exiting under us */
        if (++made == busy_min_calls)
            atomic_fetch_add(&busy_ready, 1);
    }
    return NULL;
}

static int run_exit_while_busy(unsigned long long threads, unsigned long long min_calls)
{
    busy_min_calls = min_calls ? min_calls : 1;
    for (unsigned long long t = 0; t < threads; t++) {
        pthread_t id;
        if (pthread_create(&id, NULL, busy_worker, NULL) != 0) {
            fprintf(stderr, "thread_churn: cannot start busy thread %llu\n", t);
            return 1;
        }
        pthread_detach(id);
    }
    while (atomic_load(&busy_ready) < threads)
        sched_yield();
    printf("thread_churn: %llu threads busy at exit\n", threads);
    fflush(stdout);
    return 0; /* the threads are still launching */
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "exit-while-busy") == 0 && argc <= 4)
        return run_exit_while_busy(arg_or(argc, argv, 2, 4), arg_or(argc, argv, 3, 1000));
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: thread_churn WAVES THREADS CALLS [PAUSE_MS] |"
                        " thread_churn exit-while-busy [THREADS] [MIN_CALLS]\n");
        return 2;
    }
    return run_waves(arg_or(argc, argv, 1, 0), arg_or(argc, argv, 2, 0),
                     arg_or(argc, argv, 3, 0), arg_or(argc, argv, 4, 0));
}
