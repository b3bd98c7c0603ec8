/*
 * What the host sampler costs the collector: this program plays the traced
 * process (THREADS threads, half of them busy, half asleep, and WORKERS
 * child processes burning the CPU, behind rings laid out as the default
 * settings lay them out) and runs the sampler's rounds on itself, ROUNDS
 * thread rounds with a worker round every tenth as the sampler does, timing
 * them on the thread's own CPU clock. Prints the CPU time per thread
 * sample, per round, and what that is of one core at CUDATRACE_SAMPLE_HZ's
 * default of 100 rounds a second. Usage: host_sample_cost THREADS WORKERS ROUNDS.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/host_sampling/rounds.h"

#define RINGS 257 /* the default 256 and the loader's */
#define RING_RECORDS 32768

static atomic_int stop;

static void *busy(void *unused)
{
    (void)unused;
    while (!atomic_load(&stop))
        ;
    return NULL;
}

static void *asleep(void *unused)
{
    (void)unused;
    while (!atomic_load(&stop))
        usleep(1000);
    return NULL;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void ignore(const struct ct_host_event *e)
{
    (void)e;
}

static struct ct_shm_header *rings(void)
{
    size_t size = ct_shm_size(RINGS, RING_RECORDS, 0);
    struct ct_shm_header *shm =
        mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED)
        exit(1);
    shm->pid = getpid();
    shm->ring_count = RINGS;
    shm->ring_capacity = RING_RECORDS;
    ct_shm_init_rings(shm);
    return shm;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fprintf(stderr, "usage: host_sample_cost THREADS WORKERS ROUNDS\n"), 2;
    int threads = atoi(argv[1]), workers = atoi(argv[2]), rounds = atoi(argv[3]);
    pid_t children[64];
    for (int i = 0; i < workers && i < 64; i++)
        if ((children[i] = fork()) == 0)
            for (;;)
                ;
    pthread_t t[256];
    for (int i = 0; i < threads && i < 256; i++)
        pthread_create(&t[i], NULL, i % 2 ? asleep : busy, NULL);
    struct ct_host_rounds r = {.emit = ignore};
    char reason[256];
    if (ct_host_rounds_open(&r, rings(), reason, sizeof reason))
        return fprintf(stderr, "host_sample_cost: %s\n", reason), 1;
    usleep(100000);
    uint64_t start = thread_cpu_ns();
    for (int i = 0; i < rounds; i++) {
        struct timespec now;
        clock_gettime(CLOCK_BOOTTIME, &now);
        uint64_t ts = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
        ct_host_thread_round(&r, ts);
        if (i % 10 == 0)
            ct_host_worker_round(&r, ts);
    }
    double ns = (double)(thread_cpu_ns() - start);
    printf("host_sample_cost: %d threads, %d workers: %.1f us per thread sample, %.0f us per "
           "round, %.1f%% of one core at 100 Hz (%llu thread samples, %llu worker samples)\n",
           threads + 1, workers, ns / (double)r.thread_samples / 1000, ns / rounds / 1000,
           ns / rounds * 100 / 1e9 * 100, (unsigned long long)r.thread_samples,
           (unsigned long long)r.worker_samples);
    atomic_store(&stop, 1);
    for (int i = 0; i < threads && i < 256; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < workers && i < 64; i++) {
        kill(children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
    }
    ct_host_rounds_close(&r);
    return 0;
}
