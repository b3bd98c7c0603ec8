/*
 * Ways for a traced process to end badly or to call CUDA from awkward places,
 * for the reliability tests. Usage: crash MODE N, where N is the number of
 * cudaLaunchKernel calls made before the event:
 *   segv, abort, kill (SIGKILL to itself), thread-exit (_exit(7) from a second
 *   thread after it made the calls), inflight (a second thread makes the calls
 *   and then blocks in cudaDeviceSynchronize, which the double makes last
 *   CT_DOUBLE_SYNC_NS, while the main thread crashes), signals (a SIGALRM
 *   handler calls cudaStreamQuery while the main thread launches; prints the
 *   handler's call count), atexit (an atexit handler allocates and frees).
 * Prints the calls it issued on stdout (flushed) before the event.
 */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

void crash_kernel(void) {}

static unsigned long long launches;
static atomic_ulong handler_calls;

static void launch_n(unsigned long long n)
{
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    for (unsigned long long i = 0; i < n; i++)
        cudaLaunchKernel((const void *)crash_kernel, grid, block, NULL, 0, NULL);
}

static void *launch_then_exit(void *arg)
{
    (void)arg;
    launch_n(launches);
    printf("crash: thread made %llu launches\n", launches);
    fflush(stdout);
    _exit(7);
}

static void *launch_then_sync(void *arg)
{
    (void)arg;
    launch_n(launches);
    printf("crash: thread made %llu launches, now syncing\n", launches);
    fflush(stdout);
    cudaDeviceSynchronize();
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    cudaStreamQuery(NULL);
    handler_calls++;
}

static void free_at_exit(void)
{
    void *p = NULL;
    cudaMalloc(&p, 4096);
    cudaFree(p);
}

static void run_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &every, NULL);
    launch_n(launches);
    struct itimerval stop = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &stop, NULL);
    printf("crash: %llu launches, %lu handler calls\n", launches, (unsigned long)handler_calls);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    launches = arg_or(argc, argv, 2, 1000);
    pthread_t thread;
    if (strcmp(mode, "thread-exit") == 0 || strcmp(mode, "inflight") == 0) {
        pthread_create(&thread, NULL,
                       strcmp(mode, "inflight") == 0 ? launch_then_sync : launch_then_exit, NULL);
        if (strcmp(mode, "thread-exit") == 0)
            pthread_join(thread, NULL); /* never returns: the thread exits the process */
        usleep(300000);                 /* let the thread reach its sync */
        raise(SIGSEGV);
    }
    if (strcmp(mode, "signals") == 0) {
        run_signals();
        return 0;
    }
    if (strcmp(mode, "atexit") == 0)
        atexit(free_at_exit);
    launch_n(launches);
    printf("crash: %llu launches\n", launches);
    fflush(stdout);
    if (strcmp(mode, "segv") == 0)
        *(volatile int *)0 = 1;
    else if (strcmp(mode, "abort") == 0)
        abort();
    else if (strcmp(mode, "kill") == 0)
        raise(SIGKILL);
    else if (strcmp(mode, "atexit") != 0)
        return 2;
    return 0;
}
