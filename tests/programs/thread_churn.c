/*
 * Thread-lifetime workloads for the tracer's per-thread rings. Usage:
 *   thread_churn WAVES THREADS CALLS [PAUSE_MS=0]
 *       WAVES times: start THREADS threads, each makes CALLS cudaLaunchKernel calls, join them all,
 *       then sleep PAUSE_MS. Within a wave every thread holds on to its ring at once: all wait at
 *       a barrier before their first call and again after their last, so a wave of more threads
 *       than there are rings has exactly the surplus threads find no ring. The main thread makes
 *       no CUDA call. Prints "thread_churn: W waves x T threads x C calls = TOTAL calls issued".
 *   thread_churn exit-while-busy THREADS MIN_CALLS COUNTS_FILE
 *       starts THREADS threads that launch in a loop forever, waits until each has made
 *       MIN_CALLS calls, then returns from main while they are still calling: exit() and every
 *       destructor run under their feet. Prints "thread_churn: N threads busy at exit".
 *   thread_churn busy-until-killed THREADS MIN_CALLS COUNTS_FILE
 *       the same threads; once each has made MIN_CALLS calls, prints "thread_churn: N threads
 *       busy until killed" and waits, for the test to kill the process.
 * Busy threads keep their own count in COUNTS_FILE (created, or replaced), a shared mapping that
 * outlives the process however it ends: per thread, in order, four little-endian 64-bit
 * fields, its tid and the calls it started, finished, and had finished when main returned (0
 * if main never did). A call started but not finished was cut short by the end.
 * Exits 1 if a call failed (churn) or a thread could not be started, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* 1 (and says so) when THREADS is out of range. */
static int bad_thread_count(unsigned long long threads)
{
    if (threads >= 1 && threads <= 4096)
        return 0;
    fprintf(stderr, "thread_churn: THREADS must be 1..4096\n");
    return 1;
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

static int run_waves(unsigned long long waves, unsigned long long threads, unsigned long long calls,
                     unsigned long long pause_ms)
{
    if (bad_thread_count(threads))
        return 2;
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

/* ---- busy threads: exit while busy, killed while busy --------------------------------------- */

/* One busy thread's own count, as laid out in COUNTS_FILE. */
struct busy_count {
    _Atomic int64_t tid;
    _Atomic uint64_t started, finished, finished_at_exit;
};

static atomic_uint busy_ready;
static unsigned long long busy_min_calls;

static void *busy_worker(void *arg)
{
    struct busy_count *self = arg;
    atomic_store(&self->tid, gettid());
    for (;;) {
        atomic_fetch_add_explicit(&self->started, 1, memory_order_relaxed);
        launch_once(); /* results do not matter here: the runtime may be exiting under us */
        if (atomic_fetch_add_explicit(&self->finished, 1, memory_order_relaxed) + 1 ==
            busy_min_calls)
            atomic_fetch_add(&busy_ready, 1);
    }
    return NULL;
}

/* THREADS counts in a shared mapping of the file `path`, or NULL (and says why). */
static struct busy_count *map_counts(unsigned long long threads, const char *path)
{
    size_t size = threads * sizeof(struct busy_count);
    void *counts = MAP_FAILED;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && ftruncate(fd, (off_t)size) == 0)
        counts = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counts == MAP_FAILED)
        perror(path);
    if (fd >= 0)
        close(fd);
    return counts == MAP_FAILED ? NULL : counts;
}

/* Starts the busy threads and returns once each has made MIN_CALLS calls: 0, or 1 on failure. */
static int start_busy(unsigned long long threads, unsigned long long min_calls,
                      struct busy_count *counts)
{
    busy_min_calls = min_calls ? min_calls : 1;
    for (unsigned long long t = 0; t < threads; t++) {
        pthread_t id;
        if (pthread_create(&id, NULL, busy_worker, &counts[t]) != 0) {
            fprintf(stderr, "thread_churn: cannot start busy thread %llu\n", t);
            return 1;
        }
        pthread_detach(id);
    }
    while (atomic_load(&busy_ready) < threads)
        sched_yield();
    return 0;
}

static int run_busy(int until_killed, unsigned long long threads, unsigned long long min_calls,
                    const char *counts_path)
{
    if (bad_thread_count(threads))
        return 2;
    struct busy_count *counts = map_counts(threads, counts_path);
    if (!counts || start_busy(threads, min_calls, counts))
        return 1;
    if (until_killed) {
        printf("thread_churn: %llu threads busy until killed\n", threads);
        fflush(stdout);
        for (;;)
            pause();
    }
    /* Every call counted here returned before main did, while the process was whole. */
    for (unsigned long long t = 0; t < threads; t++)
        atomic_store(&counts[t].finished_at_exit, atomic_load(&counts[t].finished));
    printf("thread_churn: %llu threads busy at exit\n", threads);
    fflush(stdout);
    return 0; /* the threads are still launching */
}

int main(int argc, char **argv)
{
    int until_killed = argc == 5 && strcmp(argv[1], "busy-until-killed") == 0;
    if (until_killed || (argc == 5 && strcmp(argv[1], "exit-while-busy") == 0))
        return run_busy(until_killed, arg_or(argc, argv, 2, 0), arg_or(argc, argv, 3, 0), argv[4]);
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: thread_churn WAVES THREADS CALLS [PAUSE_MS] |"
                        " thread_churn exit-while-busy|busy-until-killed THREADS MIN_CALLS"
                        " COUNTS_FILE\n");
        return 2;
    }
    return run_waves(arg_or(argc, argv, 1, 0), arg_or(argc, argv, 2, 0), arg_or(argc, argv, 3, 0),
                     arg_or(argc, argv, 4, 0));
}
